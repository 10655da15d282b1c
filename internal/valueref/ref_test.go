package valueref_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/valueref"
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
		if got := valueref.Text(tt.key, tt.claimKey, []byte(tt.value)); got != tt.want {
			t.Errorf("valueref.Text(%s, %s, %s) = %q; want %q", tt.key, tt.claimKey, tt.value, got, tt.want)
		}
		if !valueref.ValidKey(tt.key) || valueref.Keys("x " + tt.want + " y")[0] != tt.key {
			t.Errorf("%s: not found back in %q", tt.key, tt.want)
		}
	}
}

func TestRefType(t *testing.T) {
	for key, want := range map[string]string{
		"identity.passport_number": "PASSPORT", "contact.email": "EMAIL", "identity.ssn": "SSN", "identity.tax_id": "TAX_ID",
		"financial.bank_account_number": "BANK_ACCOUNT", "addresses.current": "CURRENT", "x.phone-2": "PHONE", "x.42": "VALUE",
	} {
		if got := valueref.Type(key); got != want || !valueref.ValidKey(got+"_1") {
			t.Errorf("valueref.Type(%s) = %q; want %q", key, got, want)
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
		got := valueref.Text("EMAIL_1", "contact.email", json.RawMessage(tc.value))
		want := tc.want
		if got != want {
			t.Errorf("valueref.Text(%s) = %s; want %s", tc.value, got, want)
		}
		if strings.Contains(got, "X12345678") || strings.Contains(got, "passport") {
			t.Errorf("valueref.Text(%s) = %s shows the value", tc.value, got)
		}
	}
}

// TestMaskHidesThree: every display hides at least three characters of a
// value of three or more.
func TestMaskHidesThree(t *testing.T) {
	for _, v := range []string{"abc", "abcd", "abcde", "abcdef", "abcdefg", "a@b.c", "abc@d.e", "abcd@e.f", "abcde@f.g", "ÄÖÜäöüß"} {
		d := valueref.Mask(v)
		shown := 0
		for _, r := range d {
			if r != '•' {
				shown++
			}
		}
		if len([]rune(v))-shown < 3 {
			t.Errorf("valueref.Mask(%q) = %q hides fewer than 3 characters", v, d)
		}
	}
}
