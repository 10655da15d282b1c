package localvault

import (
	"fmt"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// TestQuotaPerUTCDay: each reader's resolved values stop at
// VaultValuesPerDay a UTC day, and all readers' at VaultValuesPerDayAll,
// refused until midnight UTC with nothing counted; a reader past its own
// refuses no other, and every count starts again the next day.
func TestQuotaPerUTCDay(t *testing.T) {
	cv := New()
	now := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	b := &engine.Batch{Now: now}
	take := func(reader string, n int) *model.Error { return cv.takeQuota("vault.resolve", b, reader, n) }
	if e := take("a", model.VaultValuesPerDay-1); e != nil {
		t.Fatalf("takeQuota(a, 99) = %v; want nil", e)
	}
	e := take("a", 2)
	if e == nil || e.Kind != model.KindRateLimited || e.RetryAfter != time.Hour {
		t.Fatalf("takeQuota(a, 2) past a's quota = %+v; want rate_limited, retry after 1h", e)
	}
	if cv.quota.Count != model.VaultValuesPerDay-1 || cv.quota.Readers["a"] != model.VaultValuesPerDay-1 || len(b.Writes) != 1 {
		t.Errorf("a refusal counted: quota %+v, %d writes", cv.quota, len(b.Writes))
	}
	// Another reader has its own 100, up to the custodian's 1,000 in all.
	if e := take("b", model.VaultValuesPerDay); e != nil {
		t.Fatalf("takeQuota(b, 100) once a used 99 = %v; want nil", e)
	}
	for i := 0; cv.quota.Count+model.VaultValuesPerDay <= model.VaultValuesPerDayAll; i++ {
		if e := take(fmt.Sprintf("r%d", i), model.VaultValuesPerDay); e != nil {
			t.Fatalf("takeQuota(r%d, 100) at %d in all = %v; want nil", i, cv.quota.Count, e)
		}
	}
	left := model.VaultValuesPerDayAll - cv.quota.Count
	if e := take("late", left+1); e == nil || e.Kind != model.KindRateLimited || e.RetryAfter != time.Hour {
		t.Fatalf("takeQuota(late, %d) past the custodian's %d = %+v; want rate_limited, retry after 1h", left+1, model.VaultValuesPerDayAll, e)
	}
	if e := take("late", left); e != nil || cv.quota.Count != model.VaultValuesPerDayAll {
		t.Fatalf("takeQuota(late, %d) up to the custodian's quota = %v, count %d; want nil, %d", left, e, cv.quota.Count, model.VaultValuesPerDayAll)
	}
	if e := cv.takeQuota("vault.resolve", &engine.Batch{Now: now.Add(time.Hour)}, "a", 2); e != nil || cv.quota.Count != 2 || len(cv.quota.Readers) != 1 {
		t.Errorf("the next day: %v, quota %+v; want nil, 2 values of a", e, cv.quota)
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
