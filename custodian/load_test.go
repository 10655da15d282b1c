package custodian

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	fastjson "github.com/segmentio/encoding/json"
)

// TestLoadDecoderAgrees: the loader's decoder reads what the journal's
// encoder (encoding/json) wrote exactly as encoding/json reads it.
func TestLoadDecoderAgrees(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	claims := []Claim{
		{ID: "clm_A", Version: 1, Key: "a.b", Value: json.RawMessage(`"plain"`), Subject: SubjectSelf, Kind: "fact",
			Assertion: AssertionReported, RecordedAt: at, Sensitivity: SensitivityStandard, Evidence: []Evidence{}, Restrictions: []Restriction{}},
		{ID: "clm_B", Version: 3, Key: "x.y.z", Value: json.RawMessage(`{"nested":[1,2.5,null,true,"\u2028\"q\""],"e":{}}`),
			Subject: "ent_X", Kind: KindRelationship, Assertion: "observed",
			Confirmation: Confirmation{Status: ConfirmationConfirmed, By: "owner", At: &at},
			Producer:     Producer{Authenticated: Authenticated{Kind: "consumer", ID: "tutor"}, Reported: map[string]string{"app": "tütor", "run": "<b>"}},
			Evidence:     []Evidence{{Ref: "chat://1"}}, ValidFrom: &at, RecordedAt: at, Sensitivity: SensitivityCritical,
			Restrictions: []Restriction{{Type: RestrictPurposeOnly, Mandatory: true, Params: map[string]any{"purposes": []any{"a", "b"}}}},
			Personas:     []string{"work"}, Status: StatusActive, WrittenBy: "tutor", Revision: 1 << 40, Note: "line\nbreak \x01"},
		{ID: "clm_C", Version: 2, Key: "k", Value: json.RawMessage(`-1e-7`), RecordedAt: at},
	}
	for _, c := range claims {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var want, got Claim
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := fastjson.Unmarshal(raw, &got); err != nil {
			t.Fatalf("fast decode of %s: %v", raw, err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(sameInstant)); diff != "" {
			t.Errorf("decoding %s differs (-encoding/json +loader):\n%s", raw, diff)
		}
	}
}

// sameInstant: the same instant in the same UTC offset.
func sameInstant(a, b time.Time) bool {
	_, oa := a.Zone()
	_, ob := b.Zone()
	return a.Equal(b) && oa == ob
}
