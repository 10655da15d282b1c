package custodian

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/engine"
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

// TestSnapshotMetaRoundTrip: a meta with every field set reads back from
// the snapshot's binary form as it was; and the form knows every field of
// claimMeta (a field added there must be added to it, with a new
// engine.SnapFormat).
func TestSnapshotMetaRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	metas := []claimMeta{
		{ID: "clm_A", Head: 7, Status: StatusActive, Personas: []string{"work", "home"}, CreatedAt: "2026-03-01T12:00:00Z",
			Origin: "bnd_X", DisputedAt: &at, Key: "a.b.c", Subject: "ent_Y", Tier: "critical", Kind: KindRelationship, HeadRev: 1 << 40},
		{ID: "clm_B", Head: 1, Status: StatusDeleted, Personas: []string{}, HeadRev: 1},
	}
	if n := reflect.TypeOf(claimMeta{}).NumField(); n != 12 {
		t.Fatalf("claimMeta has %d fields; the snapshot's form (appendSnapMeta, snapDecoder.meta) knows 12", n)
	}
	var chunk []byte
	chunk = append(chunk, engine.SnapFormat)
	for i := range metas {
		chunk = engine.AppendMeta(chunk, &metas[i])
	}
	got, _, err := engine.DecodeSnapChunk(chunk, nil, map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(metas) {
		t.Fatalf("decoded %d metas; want %d", len(got), len(metas))
	}
	for i, r := range got {
		if diff := cmp.Diff(metas[i], r.Meta, cmp.Comparer(sameInstant)); diff != "" {
			t.Errorf("meta %d differs (-written +read):\n%s", i, diff)
		}
	}
	for n := 1; n < len(chunk); n++ {
		if _, _, err := engine.DecodeSnapChunk(chunk[:n], nil, map[string]string{}, nil); err == nil && n != len(chunk) {
			// A cut that falls between two metas decodes those before it.
			if n != 1 && n != 1+len(engine.AppendMeta(nil, &metas[0])) {
				t.Errorf("a chunk cut at %d of %d bytes decoded", n, len(chunk))
			}
		}
	}
}
