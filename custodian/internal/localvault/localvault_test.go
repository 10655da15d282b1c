package localvault

import (
	"testing"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// TestQuotaPerUTCDay: the day's resolved values stop at VaultValuesPerDay,
// refused until midnight UTC with nothing counted, and start again the
// next day.
func TestQuotaPerUTCDay(t *testing.T) {
	cv := New()
	now := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	b := &engine.Batch{Now: now}
	if e := cv.takeQuota("vault.resolve", b, model.VaultValuesPerDay-1); e != nil {
		t.Fatalf("takeQuota(99) = %v; want nil", e)
	}
	e := cv.takeQuota("vault.resolve", b, 2)
	if e == nil || e.Kind != model.KindRateLimited || e.RetryAfter != time.Hour {
		t.Fatalf("takeQuota(2) past the day's quota = %+v; want rate_limited, retry after 1h", e)
	}
	if cv.quota.Count != model.VaultValuesPerDay-1 || len(b.Writes) != 1 {
		t.Errorf("a refusal counted: quota %+v, %d writes", cv.quota, len(b.Writes))
	}
	if e := cv.takeQuota("vault.resolve", &engine.Batch{Now: now.Add(time.Hour)}, 2); e != nil || cv.quota.Count != 2 {
		t.Errorf("the next day: %v, count %d; want nil, 2", e, cv.quota.Count)
	}
}

// TestSameValue: two versions are the same value when their bytes are,
// and a version out of the record's range is no value.
func TestSameValue(t *testing.T) {
	v1 := &model.Claim{ID: "clm_A", Version: 1, Key: "preferences.music", Value: []byte(`"jazz"`)}
	v2 := &model.Claim{ID: "clm_A", Version: 2, Key: "preferences.music", Value: []byte(`"jazz"`)}
	v3 := &model.Claim{ID: "clm_A", Version: 3, Key: "preferences.music", Value: []byte(`"folk"`)}
	r := engine.NewView().NewRecord(engine.ClaimMeta{ID: "clm_A", Head: 3, Status: model.StatusActive}, v3, []*model.Claim{v1, v2})
	for _, tc := range []struct {
		a, b int
		want bool
	}{{1, 2, true}, {2, 3, false}, {3, 3, true}, {0, 1, false}, {3, 4, false}} {
		if got := sameValue(r, tc.a, tc.b); got != tc.want {
			t.Errorf("sameValue(%d, %d) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
