package custodian

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestReferenceText(t *testing.T) {
	tests := []struct {
		key, claimKey, value, want string
	}{
		{"PASSPORT_1", "identity.passport_number", `"X1234589"`, "⟦PASSPORT_1:X1•••89⟧"},
		{"EMAIL_1", "contact.email", `"maria@example.com"`, "⟦EMAIL_1:ma•••@example.com⟧"},
		{"EMAIL_2", "contact.email", `"ann@example.com"`, "⟦EMAIL_2:•••@example.com⟧"},
		{"EMAIL_3", "contact.email", `"al@example.com"`, "⟦EMAIL_3:al•••om⟧"},
		{"SSN_1", "identity.ssn", `"078-05-1120"`, "⟦SSN_1:07•••20⟧"},
		{"PIN_1", "bank.card_pin", `"1234"`, "⟦PIN_1⟧"},
		{"PASSWORD_1", "credentials.mail.password", `"hunter22"`, "⟦PASSWORD_1⟧"},
		{"CODE_1", "misc.code", `"12345"`, "⟦CODE_1:1•••5⟧"},
		{"CODE_2", "misc.code", `"1234"`, "⟦CODE_2:•••⟧"},
		{"INCOME_1", "financial.income", `{"gross": 52000}`, "⟦INCOME_1⟧"}, // an object: no display
	}
	for _, tt := range tests {
		if got := referenceText(tt.key, tt.claimKey, []byte(tt.value)); got != tt.want {
			t.Errorf("referenceText(%s, %s, %s) = %q; want %q", tt.key, tt.claimKey, tt.value, got, tt.want)
		}
		if !ValidRefKey(tt.key) || ReferenceKeys("x " + tt.want + " y")[0] != tt.key {
			t.Errorf("%s: not found back in %q", tt.key, tt.want)
		}
	}
}

func TestRefType(t *testing.T) {
	for key, want := range map[string]string{
		"identity.passport_number": "PASSPORT", "contact.email": "EMAIL", "identity.ssn": "SSN", "identity.tax_id": "TAX_ID",
		"financial.bank_account_number": "BANK_ACCOUNT", "addresses.current": "CURRENT", "x.phone-2": "PHONE", "x.42": "VALUE",
	} {
		if got := refType(key); got != want || !ValidRefKey(got+"_1") {
			t.Errorf("refType(%s) = %q; want %q", key, got, want)
		}
	}
}

// TestReferenceDisplayShowsNoOtherData: only a real address keeps its
// domain; an object, an array or a value that merely contains an @ shows
// nothing of what follows it (found in review: an object holding an
// address showed its other members).
func TestReferenceDisplayShowsNoOtherData(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{`"ada@example.com"`, "⟦EMAIL_1:•••@example.com⟧"},
		{`"ada.l@example.com"`, "⟦EMAIL_1:ad•••@example.com⟧"},
		{`{"email":"a@b.co","passport":"X12345678"}`, "⟦EMAIL_1⟧"},
		{`["a@b.co","X12345678"]`, "⟦EMAIL_1⟧"},
		{`"a@b.co passport X12345678"`, "⟦EMAIL_1:a@•••78⟧"},
		{`"x@y@z.com"`, "⟦EMAIL_1:x@•••om⟧"},
		{`"X12345678"`, "⟦EMAIL_1:X1•••78⟧"},
	} {
		got := referenceText("EMAIL_1", "contact.email", json.RawMessage(tc.value))
		want := tc.want
		if got != want {
			t.Errorf("referenceText(%s) = %s; want %s", tc.value, got, want)
		}
		if strings.Contains(got, "X12345678") || strings.Contains(got, "passport") {
			t.Errorf("referenceText(%s) = %s shows the value", tc.value, got)
		}
	}
}

// TestMaskHidesThree: every display hides at least three characters of a
// value of three or more.
func TestMaskHidesThree(t *testing.T) {
	for _, v := range []string{"abc", "abcd", "abcde", "abcdef", "abcdefg", "a@b.c", "abc@d.e", "abcd@e.f", "abcde@f.g", "ÄÖÜäöüß"} {
		d := maskedDisplay(v)
		shown := 0
		for _, r := range d {
			if r != '•' {
				shown++
			}
		}
		if len([]rune(v))-shown < 3 {
			t.Errorf("maskedDisplay(%q) = %q hides fewer than 3 characters", v, d)
		}
	}
}

// TestRefAllowedNeedsALiveReader: a reference minted under the owner's
// auto_grant resolves only while its reader is an approved app (or an OIDC
// recipient); found in review: a removed app's resolved still.
func TestRefAllowedNeedsALiveReader(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := newState()
	st.settings.AutoGrant = SensitivityStandard
	r := record("clm_A", "preferences.music", SensitivityStandard)
	m := &mintedRef{Key: "MUSIC_1", Claim: "clm_A", Version: 1, MintedAt: now.Add(-time.Hour)}
	st.consumers["app"] = &Consumer{ID: "con_A", Name: "app", Status: ConsumerApproved, CreatedAt: now.Add(-2 * time.Hour)}
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
	st.consumers["app"].Status = ConsumerPending
	if st.refAllowed("app", r, m, now) {
		t.Errorf("refAllowed(an app awaiting approval) = true; want false")
	}
}
