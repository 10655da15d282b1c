package cli

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// TestOIDCForTheOwner: phc trust add shows what the issuer's discovery
// says (or warns why it could not be read); phc grant --oidc grants a
// subject; lists name the issuer; and every refused exchange leaves its
// class — never the token — in the log at the default level and in a deny
// receipt.
func TestOIDCForTheOwner(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	h := startHarnessLog(t, "", testPassword, nil, &logs)
	iss := newTestIssuer(t)
	const aud = "phc-owner-audience"

	out := h.phcOK("trust", "add", iss.srv.URL, "--audience", aud)
	if !strings.Contains(out, "keys: 2 at "+iss.srv.URL+"/jwks") || !strings.Contains(out, "RS256") {
		t.Errorf("trust add printed %q", out)
	}
	// An issuer that cannot be reached, and one named with a trailing /:
	// trusted, with a warning that says why its tokens will be refused.
	down := httptest.NewServer(nil)
	downURL := down.URL
	down.Close()
	for url, want := range map[string]string{downURL: "could not read", iss.srv.URL + "/": "names another issuer"} {
		code, _, errs := h.phc("trust", "add", url, "--audience", aud)
		if code != 0 || !strings.Contains(errs, "warning: ") || !strings.Contains(errs, want) {
			t.Errorf("trust add %s = %d %q", url, code, errs)
		}
	}
	var list struct {
		Trust []struct {
			Issuer string `json:"issuer"`
		} `json:"trust"`
	}
	if err := json.Unmarshal([]byte(h.phcOK("trust", "list", "--json")), &list); err != nil || len(list.Trust) != 3 {
		t.Errorf("trust list --json: %+v %v", list, err)
	}

	// A grant to an OIDC subject, from the command line; the list names
	// the issuer.
	if out := h.phcOK("grant", "--oidc", iss.srv.URL, "--subject", "alice", "--purpose", "learning", "--keys", "learning.*"); !strings.Contains(out, "granted grt_") {
		t.Errorf("grant --oidc printed %q", out)
	}
	if out := h.phcOK("grant", "list"); !strings.Contains(out, "oidc:alice of "+iss.srv.URL) {
		t.Errorf("grant list does not name the issuer: %q", out)
	}
	if code, _, errs := h.phc("grant", "--oidc", iss.srv.URL, "--purpose", "learning", "--keys", "x.*"); code != 2 || !strings.Contains(errs, "--subject") {
		t.Errorf("grant --oidc without --subject = %d %s", code, errs)
	}

	// Refused exchanges, one of each class.
	localhost := strings.Replace(iss.srv.URL, "127.0.0.1", "localhost", 1)
	for _, tc := range []struct {
		class string
		token string
	}{
		{"wrong_audience", iss.sign(t, iss.claims(t, "s1", "another-app", nil), jwa.RS256, iss.rsa)},
		{"unknown_issuer", iss.sign(t, iss.claims(t, "s2", aud, func(b *jwt.Builder) { b.Issuer(localhost) }), jwa.RS256, iss.rsa)},
		{"expired", iss.sign(t, iss.claims(t, "s3", aud, func(b *jwt.Builder) {
			b.IssuedAt(time.Now().Add(-2 * time.Hour)).Expiration(time.Now().Add(-time.Hour))
		}), jwa.RS256, iss.rsa)},
		{"bad_signature", iss.sign(t, iss.claims(t, "s4", aud, nil), jwa.RS256, iss.rogue)},
		{"issuer_unreachable", iss.sign(t, iss.claims(t, "s5", aud, func(b *jwt.Builder) { b.Issuer(downURL) }), jwa.RS256, iss.rsa)},
		{"malformed", "not.a.jwt"},
	} {
		status, _ := exchange(h, tc.token, "learning.*")
		if status != 401 {
			t.Errorf("%s: exchange = %d; want 401", tc.class, status)
		}
		if !strings.Contains(logs.String(), `msg="token exchange refused" class=`+tc.class) {
			t.Errorf("%s: not in the log:\n%s", tc.class, logs.String())
		}
		if strings.Contains(logs.String(), tc.token) {
			t.Errorf("%s: the log shows the token", tc.class)
		}
		var rs struct {
			Receipts []struct {
				Operation string   `json:"operation"`
				Decision  string   `json:"decision"`
				Records   []string `json:"records"`
			} `json:"receipts"`
		}
		h.must(200, "GET", "/phc/v1/receipts?limit=1", h.owner, nil, &rs)
		if len(rs.Receipts) != 1 || rs.Receipts[0].Operation != "token.exchange" || rs.Receipts[0].Decision != "deny" ||
			rs.Receipts[0].Records[0] != "refused:"+tc.class {
			t.Errorf("%s: newest receipt %+v", tc.class, rs.Receipts)
		}
	}
	// The audit log shows them too, as denials.
	var audit struct {
		Entries []struct {
			Action string `json:"action"`
		} `json:"entries"`
	}
	raw := h.must(200, "GET", "/context/audit?limit=1", h.owner, nil, &audit)
	if !strings.Contains(string(raw), "DENY") {
		t.Errorf("audit: %s", raw)
	}
}
