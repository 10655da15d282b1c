package dectype_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/dec/dectype"
)

// TestWireForms: the types encode as docs/formats/dec.md writes them — a pin's
// keys as the JSON set pinned (never base64), a policy's max_age given in
// seconds as a duration — and read back the same.
func TestWireForms(t *testing.T) {
	pin := dectype.Pin{Issuer: "https://releases.example/tutor", JWKS: dectype.JWKS(`{"keys":[{"kty":"OKP","kid":"ed-1"}]}`),
		Revoked: []dectype.Revocation{{Kid: "ed-1", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}}
	raw, err := json.Marshal(pin)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"issuer":"https://releases.example/tutor","jwks":{"keys":[{"kty":"OKP","kid":"ed-1"}]},"revoked":[{"kid":"ed-1","at":"2026-01-02T03:04:05Z"}]}`
	if string(raw) != want {
		t.Fatalf("pin = %s\nwant  %s", raw, want)
	}
	var back dectype.Pin
	if err := json.Unmarshal(raw, &back); err != nil || string(back.JWKS) != string(pin.JWKS) || back.Issuer != pin.Issuer ||
		!slices.Equal(back.Revoked, pin.Revoked) {
		t.Fatalf("pin read back = %+v, %v", back, err)
	}
	if raw, _ := json.Marshal(dectype.Pin{}); string(raw) != `{"issuer":"","jwks":null}` {
		t.Fatalf("empty pin = %s", raw)
	}

	var p dectype.Policy
	if err := json.Unmarshal([]byte(`{"id":"p","issuer":"i","client_id":"c","max_age":2592000}`), &p); err != nil {
		t.Fatal(err)
	}
	if d, err := p.MaxAge.Duration(); p.MaxAge != "2592000s" || err != nil || d != 30*24*time.Hour {
		t.Fatalf("max_age = %q (%v, %v)", p.MaxAge, d, err)
	}
	if d, err := dectype.Age("30d").Duration(); err != nil || d != 30*24*time.Hour {
		t.Fatalf("30d = %v, %v", d, err)
	}
	for _, bad := range []string{`-5`, `1.5`, `true`} {
		if err := json.Unmarshal([]byte(`{"max_age":`+bad+`}`), &p); err == nil {
			t.Errorf("max_age %s read as %q", bad, p.MaxAge)
		}
	}
}

// TestAdmissionAnswers: an admission admits only when it says so, and
// lists its failed conditions' codes in order (none, not nil, when it
// admits).
func TestAdmissionAnswers(t *testing.T) {
	admit := dectype.Admission{Decision: dectype.DecisionAdmit, Policy: "p", Failed: []dectype.Condition{}}
	if !admit.Admitted() || admit.Codes() == nil || len(admit.Codes()) != 0 {
		t.Fatalf("admit: Admitted %v, Codes %#v", admit.Admitted(), admit.Codes())
	}
	deny := dectype.Admission{Decision: dectype.DecisionDeny, Policy: "p", Failed: []dectype.Condition{
		{Code: dectype.CondIssuer}, {Code: dectype.CondMaxAge}}}
	if deny.Admitted() || !slices.Equal(deny.Codes(), []string{dectype.CondIssuer, dectype.CondMaxAge}) {
		t.Fatalf("deny: Admitted %v, Codes %v", deny.Admitted(), deny.Codes())
	}
	if (dectype.Admission{}).Admitted() {
		t.Fatal("an empty admission admits")
	}
}

// TestLeaf: the package imports nothing of phc and nothing that imports
// net/http, so that dec and the custodian core can both import it.
func TestLeaf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const self = "github.com/phc-project/phc/dec/dectype"
	out, err := exec.Command("go", "list", "-deps", self).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != self && (strings.HasPrefix(dep, "github.com/phc-project/phc/") || dep == "net/http") {
			t.Errorf("%s imports %s", self, dep)
		}
	}
}
