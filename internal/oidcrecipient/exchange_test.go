package oidcrecipient_test

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/oidcrecipient"
)

// jws is a compact JWS whose payload is claims (signature not checked).
func jws(claims string) string {
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
}

func form(kv ...string) []byte {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return []byte(v.Encode())
}

func TestParseForm(t *testing.T) {
	tok := jws(`{"iss":"https://idp.example","sub":"ada"}`)
	req, err := oidcrecipient.ParseForm(form("grant_type", oidcrecipient.GrantTypeTokenExchange, "subject_token", tok,
		"subject_token_type", oidcrecipient.TokenTypeIDToken, "scope", "contact.* work.*", "mode", "read"))
	if err != nil || req.SubjectToken != tok || req.Scope != "contact.* work.*" || req.Mode != "read" {
		t.Fatalf("ParseForm = %+v, %v", req, err)
	}
	if err := req.Check(); err != nil {
		t.Fatalf("Check of a well-formed request: %v", err)
	}
	for _, tc := range []struct {
		name     string
		body     []byte
		want     string
		tooLarge bool
	}{
		{"not a form", []byte("%zz"), "form-encoded", false},
		{"repeated", form("scope", "a", "scope", "b"), "repeated", false},
		{"unknown", form("client_secret", "x"), "unknown parameter", false},
		{"too large", []byte(strings.Repeat("a", oidcrecipient.MaxForm+1)), "", true},
	} {
		_, err := oidcrecipient.ParseForm(tc.body)
		var e *oidcrecipient.Error
		if !errors.As(err, &e) || e.TooLarge != tc.tooLarge || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%s: ParseForm = %v; want %q (too large: %v)", tc.name, err, tc.want, tc.tooLarge)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := oidcrecipient.Request{GrantType: oidcrecipient.GrantTypeTokenExchange, SubjectTokenType: oidcrecipient.TokenTypeIDToken, SubjectToken: "x"}
	for _, tc := range []struct {
		name string
		edit func(*oidcrecipient.Request)
		want string
	}{
		{"grant type", func(r *oidcrecipient.Request) { r.GrantType = "client_credentials" }, "grant_type must be"},
		{"subject token type", func(r *oidcrecipient.Request) { r.SubjectTokenType = oidcrecipient.TokenTypeAccessToken }, "subject_token_type must be"},
		{"requested token type", func(r *oidcrecipient.Request) { r.RequestedTokenType = oidcrecipient.TokenTypeIDToken }, "requested_token_type must be"},
		{"too large", func(r *oidcrecipient.Request) { r.Resource = strings.Repeat("r", oidcrecipient.MaxForm) }, "too large"},
	} {
		r := ok
		tc.edit(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v; want %q", tc.name, err, tc.want)
		}
	}
}

func TestUnverifiedIssuerSubject(t *testing.T) {
	for _, tc := range []struct{ token, iss, sub string }{
		{jws(`{"iss":"https://idp.example","sub":"ada"}`), "https://idp.example", "ada"},
		{jws(`{"iss":"https://idp.example"}`), "", ""},
		{jws(`{"iss":"https://idp.example","sub":42}`), "", ""},
		{jws(`{"iss":"https://idp.example","sub":"` + strings.Repeat("s", 256) + `"}`), "", ""},
		{"a.b", "", ""},
		{"a.%%%.c", "", ""},
	} {
		if iss, sub := oidcrecipient.UnverifiedIssuerSubject(tc.token); iss != tc.iss || sub != tc.sub {
			t.Errorf("UnverifiedIssuerSubject(%q) = %q, %q; want %q, %q", tc.token, iss, sub, tc.iss, tc.sub)
		}
	}
}

// TestAccept: the rules of OpenID Connect Core 1.0 §2 and §3.1.3.7 on the
// audiences and authorized party of a token that verified.
func TestAccept(t *testing.T) {
	c := oidcrecipient.Clients{Audience: "phc", AuthorizedParties: []string{"web"}}
	for _, tc := range []struct {
		aud  []string
		azp  string
		want bool
	}{
		{[]string{"phc"}, "", true},
		{[]string{"phc", "web"}, "", false}, // several audiences: azp is required
		{[]string{"phc", "web"}, "web", true},
		{[]string{"phc", "evil"}, "phc", false},
		{[]string{"phc"}, "evil", false},
		{[]string{"web"}, "", false}, // alone, only the audience itself
	} {
		if got := c.Accept(identity.IDToken{Audience: tc.aud, AuthorizedParty: tc.azp}); got != tc.want {
			t.Errorf("Accept(aud %v, azp %q) = %v; want %v", tc.aud, tc.azp, got, tc.want)
		}
	}
}

func TestRefusalClass(t *testing.T) {
	bad := &identity.IDTokenError{Class: identity.RefusedExpired}
	for _, tc := range []struct {
		iss, sub   string
		candidates int
		verified   bool
		err        error
		want       string
	}{
		{"", "ada", 1, false, nil, identity.RefusedMalformed},
		{"https://idp", "ada", 0, false, nil, identity.RefusedUnknownIssuer},
		{"https://idp", "ada", 1, true, nil, identity.RefusedMalformed},
		{"https://idp", "ada", 1, false, oidcrecipient.ErrUntrustedClient, identity.RefusedUntrustedClient},
		{"https://idp", "ada", 1, false, bad, identity.RefusedExpired},
		{"https://idp", "ada", 1, false, errors.New("x"), identity.RefusedInvalid},
	} {
		if got := oidcrecipient.RefusalClass(tc.iss, tc.sub, tc.candidates, tc.verified, tc.err); got != tc.want {
			t.Errorf("RefusalClass(%+v) = %q; want %q", tc, got, tc.want)
		}
	}
}

// FuzzParseForm: no body makes the exchange's parsers panic, and a form
// ParseForm accepts has each parameter once.
func FuzzParseForm(f *testing.F) {
	f.Add(form("grant_type", oidcrecipient.GrantTypeTokenExchange, "subject_token", jws(`{"iss":"https://i","sub":"s"}`), "subject_token_type", oidcrecipient.TokenTypeIDToken))
	f.Add([]byte("scope=a&scope=b"))
	f.Add([]byte("%zz"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := oidcrecipient.ParseForm(raw)
		if err != nil {
			return
		}
		_ = req.Check()
		iss, sub := oidcrecipient.UnverifiedIssuerSubject(req.SubjectToken)
		if (iss == "") != (sub == "") {
			t.Fatalf("UnverifiedIssuerSubject(%q) = %q, %q: one without the other", req.SubjectToken, iss, sub)
		}
	})
}
