package admission

import (
	"reflect"
	"testing"
	"time"

	"github.com/phc-project/phc/dec/dectype"
)

// TestMergeRevocations: re-pinning merges revocations, one per kid, each
// from its earliest moment, in kid order.
func TestMergeRevocations(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old := []dectype.Revocation{{Kid: "b", At: t0.Add(time.Hour)}, {Kid: "a", At: t0}}
	added := []dectype.Revocation{{Kid: "b", At: t0}, {Kid: "c", At: t0.Add(2 * time.Hour)}, {Kid: "a", At: t0.Add(time.Hour)}}
	got := mergeRevocations(old, added)
	want := []dectype.Revocation{{Kid: "a", At: t0}, {Kid: "b", At: t0}, {Kid: "c", At: t0.Add(2 * time.Hour)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mergeRevocations = %v; want %v", got, want)
	}
}

// TestOpaqueKey: a store key holds no name, and names map to keys one to one.
func TestOpaqueKey(t *testing.T) {
	a, b := opaqueKey("dis_", "https://issuer.example"), opaqueKey("dis_", "https://other.example")
	if a == b || len(a) != len("dis_")+32 || a[:4] != "dis_" {
		t.Errorf("opaqueKey = %q, %q", a, b)
	}
}
