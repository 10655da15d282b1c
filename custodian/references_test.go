package custodian

import (
	"testing"
	"time"

	"github.com/phc-project/phc/custodian/internal/localvault"
	"github.com/phc-project/phc/internal/valueref"
	"github.com/phc-project/phc/schema"
)

// TestMaskHidesWhatPurposesRefuse: a reference's display leaves out every
// character a purpose may not hold (schema.Disguises), and the brackets.
func TestMaskHidesWhatPurposesRefuse(t *testing.T) {
	for r := rune(0); r < 0x30000; r++ {
		if want := schema.Disguises(r) || r == '⟦' || r == '⟧'; valueref.Hidden(r) != want {
			t.Errorf("valueref.Hidden(%U) = %v; want %v", r, !want, want)
		}
	}
}

// TestRefAllowedNeedsALiveReader: a reference minted under the owner's
// auto_grant resolves only while its reader is an approved app (or an OIDC
// recipient); found in review: a removed app's resolved still.
func TestRefAllowedNeedsALiveReader(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := newState()
	st.Settings.AutoGrant = SensitivityStandard
	r := record("clm_A", "preferences.music", SensitivityStandard)
	m := &localvault.Ref{Key: "MUSIC_1", Claim: "clm_A", Version: 1, MintedAt: now.Add(-time.Hour)}
	st.Consumers["app"] = &Consumer{ID: "con_A", Name: "app", Status: ConsumerApproved, CreatedAt: now.Add(-2 * time.Hour)}
	for _, tc := range []struct {
		reader string
		want   bool
	}{
		{"app", true},
		{"removed", false},
		{"oidc:https://idp.example#sub", true},
	} {
		if got := st.refAllowed(tc.reader, r, m, now); got != tc.want {
			t.Errorf("refAllowed(%s) = %v; want %v", tc.reader, got, tc.want)
		}
	}
	st.Consumers["app"].Status = ConsumerPending
	if st.refAllowed("app", r, m, now) {
		t.Errorf("refAllowed(an app awaiting approval) = true; want false")
	}
}
