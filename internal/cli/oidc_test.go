package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// testIssuer is an OIDC issuer served over real HTTP: discovery and a JWKS
// of keys made here with jwx.
type testIssuer struct {
	srv    *httptest.Server
	rsa    jwk.Key // private, kid "rsa-1", in the JWKS
	ec     jwk.Key // private, kid "ec-1", in the JWKS
	rogue  jwk.Key // private, kid "rogue", not in the JWKS
	pubPEM []byte  // the RSA public key, PEM
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	iss := &testIssuer{}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	gk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(raw any, kid string, alg jwa.SignatureAlgorithm) jwk.Key {
		k, err := jwk.FromRaw(raw)
		if err != nil {
			t.Fatal(err)
		}
		_ = k.Set(jwk.KeyIDKey, kid)
		_ = k.Set(jwk.AlgorithmKey, alg)
		return k
	}
	iss.rsa, iss.ec, iss.rogue = mk(rk, "rsa-1", jwa.RS256), mk(ek, "ec-1", jwa.ES256), mk(gk, "rogue", jwa.RS256)
	der, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	iss.pubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	set := jwk.NewSet()
	for _, k := range []jwk.Key{iss.rsa, iss.ec} {
		pub, err := k.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		_ = set.AddKey(pub)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/jwks",
			"authorization_endpoint": iss.srv.URL + "/auth", "token_endpoint": iss.srv.URL + "/token",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
			// A careless issuer lists HS256 and none: phc must still refuse them.
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "HS256", "none"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) { json.NewEncoder(w).Encode(set) })
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

// token builds an ID token's claims; edit changes them before signing.
func (iss *testIssuer) claims(t *testing.T, sub, aud string, edit func(b *jwt.Builder)) jwt.Token {
	t.Helper()
	b := jwt.NewBuilder().Issuer(iss.srv.URL).Subject(sub).Audience([]string{aud}).
		IssuedAt(time.Now().Add(-time.Minute)).Expiration(time.Now().Add(10 * time.Minute))
	if edit != nil {
		edit(b)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (iss *testIssuer) sign(t *testing.T, tok jwt.Token, alg jwa.SignatureAlgorithm, key any) string {
	t.Helper()
	raw, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// exchange posts an RFC 8693 token exchange and returns the status and body.
func exchange(h *harness, idToken, scope string) (int, map[string]any) {
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "subject_token": {idToken}}
	if scope != "" {
		form.Set("scope", scope)
	}
	status, body, err := h.send("POST", "/phc/v1/token", "", []byte(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return status, out
}

// TestOIDCRecipients: a recipient proves who it is with an ID token from a
// trusted issuer (verified with go-oidc against the issuer's discovery and
// JWKS), exchanges it for a short-lived ctxs_ token, and reads what a grant
// naming {kind: oidc, issuer, id: sub} allows. Every bad token is 401.
func TestOIDCRecipients(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	iss := newTestIssuer(t)
	other := newTestIssuer(t) // not on the trust list
	const aud = "phc-test-audience"

	// A grant to an issuer not yet trusted is refused.
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	grant := map[string]any{"recipient": map[string]string{"kind": "oidc", "issuer": iss.srv.URL, "id": "alice"},
		"purpose": "learning", "operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"learning.*"}}, "expires_at": tomorrow}
	h.constraint(400, "invalid_request", "POST", "/phc/v1/grants", h.owner, grant)

	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"trust", "add", iss.srv.URL, "--audience", aud}); code != 0 {
		t.Fatalf("phc trust add = %d\n%s", code, errb.String())
	}
	m := regexp.MustCompile(`\((iss_[A-Z2-7]+)\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("phc trust add printed no id: %q", out)
	}
	trustID := m[1]
	h.must(201, "POST", "/phc/v1/grants", h.owner, grant, nil)
	var pr struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "learning.goal", "value": "Spanish", "kind": "goal", "assertion": "reported"}, &pr)
	var c struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	h.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, &c)

	// A valid token, RS256 and ES256, reads.
	for _, k := range []struct {
		alg jwa.SignatureAlgorithm
		key jwk.Key
	}{{jwa.RS256, iss.rsa}, {jwa.ES256, iss.ec}} {
		status, got := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), k.alg, k.key), "learning.*")
		if status != 200 || !strings.HasPrefix(got["access_token"].(string), "ctxs_") || got["token_type"] != "Bearer" ||
			got["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" {
			t.Fatalf("%s exchange = %d %v", k.alg, status, got)
		}
		var read struct {
			Claim struct {
				Value string `json:"value"`
			} `json:"claim"`
		}
		h.must(200, "GET", "/phc/v1/claims/"+c.Claim.ID+"?purpose=learning", got["access_token"].(string), nil, &read)
		if read.Claim.Value != "Spanish" {
			t.Fatalf("%s: the OIDC recipient reads %+v", k.alg, read)
		}
	}
	// Another subject of the same issuer has no grant: nothing.
	_, bob := exchange(h, iss.sign(t, iss.claims(t, "bob", aud, nil), jwa.RS256, iss.rsa), "")
	h.constraint(404, "not_found", "GET", "/phc/v1/claims/"+c.Claim.ID+"?purpose=learning", bob["access_token"].(string), nil)

	noneToken := func() string {
		hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
		payload, _ := json.Marshal(map[string]any{"iss": iss.srv.URL, "sub": "alice", "aud": aud,
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
		return hdr + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	}
	hsToken := func() string {
		hdrs := jws.NewHeaders()
		_ = hdrs.Set(jws.KeyIDKey, "rsa-1")
		raw, err := jwt.Sign(iss.claims(t, "alice", aud, nil), jwt.WithKey(jwa.HS256, iss.pubPEM, jws.WithProtectedHeaders(hdrs)))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	bad := map[string]string{
		"expired": iss.sign(t, iss.claims(t, "alice", aud, func(b *jwt.Builder) {
			b.IssuedAt(time.Now().Add(-2 * time.Hour)).Expiration(time.Now().Add(-time.Hour))
		}), jwa.RS256, iss.rsa),
		"wrong audience":            iss.sign(t, iss.claims(t, "alice", "someone-else", nil), jwa.RS256, iss.rsa),
		"wrong issuer":              other.sign(t, other.claims(t, "alice", aud, nil), jwa.RS256, other.rsa),
		"issuer claim of another":   iss.sign(t, iss.claims(t, "alice", aud, func(b *jwt.Builder) { b.Issuer(other.srv.URL) }), jwa.RS256, iss.rsa),
		"unknown key":               iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rogue),
		"alg none":                  noneToken(),
		"HS256 with the public key": hsToken(),
		"garbage":                   "not.a.token",
	}
	for name, tok := range bad {
		status, got := exchange(h, tok, "")
		if status != 401 || got["constraint"] != "unauthenticated" {
			t.Errorf("%s: exchange = %d %v; want 401 unauthenticated", name, status, got)
		}
	}

	// Taking the issuer off the trust list kills its exchanged tokens.
	_, alice := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rsa), "")
	if code := Run(t.Context(), env, []string{"trust", "remove", trustID}); code != 0 {
		t.Fatalf("phc trust remove %s = %d\n%s", trustID, code, errb.String())
	}
	h.constraint(401, "unauthenticated", "GET", "/phc/v1/claims/"+c.Claim.ID+"?purpose=learning", alice["access_token"].(string), nil)
	if status, _ := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rsa), ""); status != 401 {
		t.Fatalf("exchange after the issuer left the trust list = %d", status)
	}
}

// TestTrustAuthorizedParty: phc trust add --authorized-party trusts another
// client of the issuer, whose ID tokens (azp, with our audience among
// theirs) are then exchanged; phc trust list shows it; a client not named
// is still refused.
func TestTrustAuthorizedParty(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	iss := newTestIssuer(t)
	const aud = "phc-test-audience"
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"trust", "add", iss.srv.URL, "--audience", aud, "--authorized-party", "tutor", "--authorized-party", "notes"}); code != 0 {
		t.Fatalf("phc trust add --authorized-party = %d\n%s", code, errb.String())
	}
	out.Reset()
	if code := Run(t.Context(), env, []string{"trust", "list"}); code != 0 {
		t.Fatalf("phc trust list = %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "authorized parties tutor, notes") {
		t.Fatalf("phc trust list = %q; want the authorized parties", out.String())
	}
	for _, c := range []struct {
		azp  string
		want int
	}{{"tutor", 200}, {"notes", 200}, {"ads", 401}} {
		tok := iss.sign(t, iss.claims(t, "alice-"+c.azp, aud, func(b *jwt.Builder) {
			b.Audience([]string{aud, c.azp}).Claim("azp", c.azp)
		}), jwa.RS256, iss.rsa)
		if status, got := exchange(h, tok, ""); status != c.want {
			t.Errorf("exchange of a token with azp %s = %d %v; want %d", c.azp, status, got, c.want)
		}
	}
}

// TestOIDCSubjectQuotas: an OIDC subject is one app however many tokens it
// exchanges ID tokens for: at most 10 live at once, each with its own rate
// limit (PCP §7: per token), which the live-token quota so bounds.
func TestOIDCSubjectQuotas(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	iss := newTestIssuer(t)
	const aud = "phc-test-audience"
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"trust", "add", iss.srv.URL, "--audience", aud}); code != 0 {
		t.Fatalf("phc trust add = %d\n%s", code, errb.String())
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 2, "live_tokens_per_app": 0}, nil)
	form := func(sub string) []byte {
		return []byte(url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"},
			"subject_token":      {iss.sign(t, iss.claims(t, sub, aud, nil), jwa.RS256, iss.rsa)}}.Encode())
	}
	var tokens []string
	for i := range 10 {
		status, got := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rsa), "")
		if status != 200 {
			t.Fatalf("exchange %d = %d %v; want 200", i+1, status, got)
		}
		tokens = append(tokens, got["access_token"].(string))
	}
	h.retryAfter("POST", "/phc/v1/token", "", form("alice"))
	if status, got := exchange(h, iss.sign(t, iss.claims(t, "bob", aud, nil), jwa.RS256, iss.rsa), ""); status != 200 {
		t.Fatalf("bob's exchange = %d %v; want 200", status, got)
	}
	// Two reads a minute for each of alice's tokens; another token of hers
	// is not refused for them.
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tokens[0], nil, nil)
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tokens[0], nil, nil)
	h.retryAfter("GET", "/phc/v1/context?purpose=learning", tokens[0], nil)
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tokens[1], nil, nil)
}
