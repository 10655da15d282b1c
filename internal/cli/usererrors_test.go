package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/schema"
)

// TestGrantErrorsInUserWords checks that phc grant's mistakes are answered
// with what to type instead, before anything reaches the daemon.
func TestGrantErrorsInUserWords(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.phcOK("consumer", "add", "coach", "--secret", "coach-secret-0123456789")
	base := []string{"grant", "--to", "coach", "--purpose", "learning"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"--keys", "--personas", "needs something to cover"}},
		{[]string{"--personas", "learning", "--ops", "reed"}, []string{`"reed" is not an operation`, "read, contribute, confirm, share"}},
		{[]string{"--personas", "learning", "--expires", "2 days"}, []string{"12h, 90m, 2d, 4w", "2026-12-31"}},
		{[]string{"--personas", "learning", "--expires", "-2h"}, []string{"in the future"}},
		{[]string{"--personas", "learning", "--category", "ads"}, []string{"marketing", "model_training"}},
	} {
		code, _, errs := h.phc(append(cloneArgs(base), tc.args...)...)
		if code != 2 {
			t.Errorf("phc grant %v = exit %d; want 2 (%s)", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("phc grant %v: %q does not say %q", tc.args, errs, w)
			}
		}
		if strings.Contains(errs, `\n`) || strings.Contains(errs, "schema_violation") || strings.Contains(errs, "parsing time") {
			t.Errorf("phc grant %v: %s", tc.args, errs)
		}
	}
	// Each accepted form of --expires, and what it means.
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"12h": now.Add(12 * time.Hour), "2d": now.AddDate(0, 0, 2), "4w": now.AddDate(0, 0, 28),
		"2026-12-31": time.Date(2027, 1, 1, 0, 0, 0, 0, time.Local), "2026-12-31T18:00:00Z": time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC),
	} {
		got, err := parseExpiry(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, args := range [][]string{{"--personas", "learning", "--expires", "2d"}, {"--personas", "learning", "--expires", "2099-12-31"}} {
		if out := h.phcOK(append(cloneArgs(base), args...)...); !strings.Contains(out, "granted grt_") {
			t.Errorf("phc grant %v printed %q", args, out)
		}
	}
	// A violation the daemon finds is one line: where, and what.
	e := &client.Error{Status: 400, Message: "schema violation", Constraint: "schema_violation",
		Violations: []schema.Violation{{Path: "/selectors", Keyword: "minProperties", Message: "must have at least 1 property"}}}
	if got := e.Error(); got != "schema violation (400 schema_violation); /selectors: must have at least 1 property" {
		t.Errorf("client.Error = %q", got)
	}
}

func cloneArgs(s []string) []string { return append([]string(nil), s...) }

// TestTokenListRevokeAndApprove checks that phc token revoke takes the id
// phc token list prints (and the older form with an ellipsis), that
// phc consumer approve of a consumer phc consumer add approved says so
// and exits 0, and that --json lists tokens.
func TestTokenListRevokeAndApprove(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	if out := h.phcOK("consumer", "approve", "tutor"); !strings.Contains(out, "already approved") {
		t.Errorf("consumer approve after add printed %q", out)
	}
	for _, form := range []string{"%s", "%s…"} {
		h.phcOK("token", "--consumer", "tutor", "--secret", "tutor-secret-0123456789")
		out := h.phcOK("token", "list")
		id := regexp.MustCompile(`(?m)^(ctxs_\S+)\s+tutor\s+\S+\s+active`).FindStringSubmatch(out)
		if id == nil {
			t.Fatalf("token list printed %q", out)
		}
		if strings.Contains(id[1], "…") {
			t.Errorf("token list prints an ellipsis in the id: %q", id[1])
		}
		h.phcOK("token", "revoke", strings.Replace(form, "%s", id[1], 1))
	}
	var list struct {
		Tokens []struct {
			Prefix string `json:"prefix"`
			Active bool   `json:"active"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(h.phcOK("token", "list", "--json")), &list); err != nil || len(list.Tokens) != 2 || list.Tokens[0].Active || list.Tokens[1].Active {
		t.Errorf("token list --json = %+v %v", list, err)
	}
}

// TestTokenLivenessSharedWithAuthentication: once an OIDC issuer is
// removed from the trust list, its tokens are refused and the owner's list
// shows them inactive — the one rule both use.
func TestTokenLivenessSharedWithAuthentication(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	iss := newTestIssuer(t)
	const aud = "phc-test-audience"
	var tr struct {
		ID string `json:"id"`
	}
	h.must(201, "POST", "/phc/v1/trust", h.owner, map[string]any{"issuer": iss.srv.URL, "audience": aud}, &tr)
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{"recipient": map[string]string{"kind": "oidc", "issuer": iss.srv.URL, "id": "alice"},
		"purpose": "learning", "operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"learning.*"}},
		"expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, nil)
	status, got := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rsa), "learning.*")
	if status != 200 {
		t.Fatalf("exchange = %d %v", status, got)
	}
	tok := got["access_token"].(string)
	active := func() bool {
		var list struct {
			Tokens []struct {
				Prefix string `json:"prefix"`
				Active bool   `json:"active"`
			} `json:"tokens"`
		}
		h.must(200, "GET", "/context/tokens/service", h.owner, nil, &list)
		for _, l := range list.Tokens {
			if strings.HasPrefix(tok, l.Prefix) {
				return l.Active
			}
		}
		t.Fatalf("the token is not listed")
		return false
	}
	if !active() {
		t.Fatalf("a fresh token is listed inactive")
	}
	h.must(200, "GET", "/context/fields", tok, nil, nil)
	h.must(200, "DELETE", "/phc/v1/trust/"+tr.ID, h.owner, nil, nil)
	h.constraint(401, "unauthenticated", "GET", "/context/fields", tok, nil)
	if active() {
		t.Errorf("a token of a removed issuer is listed active, though authentication refuses it")
	}
}

// FuzzParseExpiry: parseExpiry never panics, and whatever it accepts ends
// after now (a grant's expiry must be in the future; an RFC 3339 time in
// the past is left for the daemon to refuse, in words).
func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{"12h", "2d", "4w", "2026-12-31", "2026-12-31T18:00:00Z", "-2h", "0d", "99999999999d", "1.5h", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseExpiry(s, now)
		if err != nil {
			if !strings.Contains(err.Error(), "--expires") {
				t.Errorf("parseExpiry(%q) error does not name the flag: %v", s, err)
			}
			return
		}
		if _, rfcErr := time.Parse(time.RFC3339, strings.TrimSpace(s)); rfcErr != nil && !got.After(now) {
			t.Errorf("parseExpiry(%q) = %v, not after now", s, got)
		}
	})
}
