package httpapi

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/identity/oidctoken"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/schema"
)

// These tests exchange ID tokens over real HTTP: the custodian's API served
// by httptest, and an OpenID Provider (discovery and JWKS) served by the
// test, checked by the real go-oidc verifier. Time is a fake clock shared by
// the service and the verifier, so limiter windows pass without waiting.

// fakeClock moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// provider is an OpenID Provider served over HTTP: discovery and a JWKS
// holding the public half of key. rogue signs tokens no JWKS vouches for.
// It counts the requests for its discovery document and JWKS, may fail
// its discovery, and rotate replaces its key.
type provider struct {
	srv         *httptest.Server
	rogue       jwk.Key
	fetches     atomic.Int64 // requests for the JWKS
	discoveries atomic.Int64 // requests for the discovery document
	down        atomic.Bool  // discovery answers 503

	mu  sync.Mutex
	key jwk.Key
	set jwk.Set
}

// newKey is a fresh RS256 signing key named kid.
func newKey(t *testing.T, kid string) jwk.Key {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jwk.FromRaw(rk)
	if err != nil {
		t.Fatal(err)
	}
	_ = k.Set(jwk.KeyIDKey, kid)
	_ = k.Set(jwk.AlgorithmKey, jwa.RS256)
	return k
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{rogue: newKey(t, "rogue")}
	p.rotate(t, newKey(t, "k1"))
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discoveries.Add(1)
		if p.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks",
			"authorization_endpoint": p.srv.URL + "/auth", "token_endpoint": p.srv.URL + "/token",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		set := p.set
		p.mu.Unlock()
		json.NewEncoder(w).Encode(set)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// rotate makes key the provider's signing key and the only key of its
// JWKS.
func (p *provider) rotate(t *testing.T, key jwk.Key) {
	t.Helper()
	pub, err := key.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	p.mu.Lock()
	p.key, p.set = key, set
	p.mu.Unlock()
}

// idToken describes an ID token to sign. A zero iss is the provider's; a
// nil aud is the audience of the exchange environment.
type idToken struct {
	iss     string
	sub     string
	aud     []string
	azp     string // omitted when ""
	rogue   bool   // signed with a key the JWKS does not hold
	expired bool   // expired an hour ago
}

func (p *provider) sign(t *testing.T, now time.Time, it idToken) string {
	t.Helper()
	if it.iss == "" {
		it.iss = p.srv.URL
	}
	iat, exp := now.Add(-time.Minute), now.Add(10*time.Minute)
	if it.expired {
		iat, exp = now.Add(-2*time.Hour), now.Add(-time.Hour)
	}
	b := jwt.NewBuilder().Issuer(it.iss).Subject(it.sub).Audience(it.aud).IssuedAt(iat).Expiration(exp)
	if it.azp != "" {
		b.Claim("azp", it.azp)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	key := p.key
	p.mu.Unlock()
	if it.rogue {
		key = p.rogue
	}
	raw, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, key))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// unsigned is a compact JWS of claims with a signature that is not one.
func unsigned(claims map[string]any) string {
	payload, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"k1"}`)) + "." +
		base64.RawURLEncoding.EncodeToString(payload) + ".c2lnbmF0dXJl"
}

const exchangeAudience = "phc-test"

// exchangeEnv is an unlocked custodian served over HTTP, with the go-oidc
// verifier and a fake clock. Its requests go over a connection of its own,
// kept alive, as one process's client does (see connection).
type exchangeEnv struct {
	t     *testing.T
	clock *fakeClock
	base  string
	owner string
	http  *http.Client
}

// connection is a view of e whose requests go over connections of their
// own: kept alive (another process's client) or, with fresh, a new one for
// every request (a process that reconnects each time).
func (e *exchangeEnv) connection(fresh bool) *exchangeEnv {
	v := *e
	v.http = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxConnsPerHost: 1, DisableKeepAlives: fresh}}
	e.t.Cleanup(v.http.CloseIdleConnections)
	return &v
}

func newExchangeEnv(t *testing.T, opts ...func(*custodian.Config)) *exchangeEnv {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	const password = "correct horse battery staple"
	sk, err := vault.Create(dir, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	val, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	g := cayley.OpenMemory()
	t.Cleanup(func() { g.Close() })
	clock := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := custodian.Config{Store: store.NewMemory(), Graph: g, Vault: v, Schema: val,
		Clock: clock, IdleLock: -1, OIDC: oidctoken.New(nil, clock.Now)}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := custodian.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	owner, err := svc.Unlock(t.Context(), []byte(password), sk)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(svc, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	e := &exchangeEnv{t: t, clock: clock, base: srv.URL, owner: owner}
	return e.connection(false)
}

// do sends one request and returns the status and decoded body.
func (e *exchangeEnv) do(method, path, token, contentType string, body []byte) (int, map[string]any) {
	e.t.Helper()
	status, _, out := e.doHeader(method, path, token, contentType, body)
	return status, out
}

// doHeader is do, with the answer's headers.
func (e *exchangeEnv) doHeader(method, path, token, contentType string, body []byte) (int, http.Header, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, resp.Header, out
}

// trust puts issuer on the trust list for the test audience and the given
// authorized parties, and returns the answer.
func (e *exchangeEnv) trust(issuer string, parties ...string) (int, map[string]any) {
	e.t.Helper()
	body := map[string]any{"issuer": issuer, "audience": exchangeAudience}
	if parties != nil {
		body["authorized_parties"] = parties
	}
	raw, _ := json.Marshal(body)
	return e.do("POST", "/phc/v1/trust", e.owner, "application/json", raw)
}

// exchange posts an RFC 8693 token exchange of idToken.
func (e *exchangeEnv) exchange(idToken string) (int, map[string]any) {
	e.t.Helper()
	status, _, body := e.exchangeHeader(idToken)
	return status, body
}

// exchangeHeader is exchange, with the answer's headers.
func (e *exchangeEnv) exchangeHeader(idToken string) (int, http.Header, map[string]any) {
	e.t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "subject_token": {idToken}}
	return e.doHeader("POST", "/phc/v1/token", "", "application/x-www-form-urlencoded", []byte(form.Encode()))
}

// mustExchange exchanges a valid token of p for sub and fails unless it
// is granted.
func (e *exchangeEnv) mustExchange(p *provider, sub string) {
	e.t.Helper()
	status, body := e.exchange(p.sign(e.t, e.clock.Now(), idToken{sub: sub, aud: []string{exchangeAudience}}))
	if tok, _ := body["access_token"].(string); status != 200 || !strings.HasPrefix(tok, "ctxs_") {
		e.t.Fatalf("exchange of a valid token for %s = %d %v; want 200 with a ctxs_ token", sub, status, body)
	}
}

// TestExchangeFailuresCountPerConnection: refused ID tokens are counted per
// the connection they came over, never per the subject they claim nor
// globally. Whatever a stranger floods the token endpoint with over its
// connection — tokens claiming one subject, a new subject each, or none —
// that connection waits (429 rate_limited), even with a valid token, until
// its failures leave the window; valid tokens from another connection are
// exchanged meanwhile, for any subject, the ones the stranger claimed too.
func TestExchangeFailuresCountPerConnection(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	untrusted := newProvider(t)
	if status, body := e.trust(p.srv.URL); status != 201 {
		t.Fatalf("trust = %d %v", status, body)
	}
	tests := []struct {
		name string
		// flood returns the refused tokens to send, all claiming sub if
		// it is not "".
		flood func(now time.Time) []string
		sub   string
	}{
		{"garbage", func(time.Time) []string {
			var out []string
			for i := range 20 {
				out = append(out, fmt.Sprintf("garbage-%d", i), "not.a.token", "a.eyJzdWIiOjF9.b")
			}
			return out
		}, ""},
		{"bad signatures of one subject", func(now time.Time) []string {
			var out []string
			for range 20 {
				out = append(out, p.sign(t, now, idToken{sub: "mallory-1", aud: []string{exchangeAudience}, rogue: true}))
			}
			return out
		}, "mallory-1"},
		{"wrong audience for one subject", func(now time.Time) []string {
			var out []string
			for range 20 {
				out = append(out, p.sign(t, now, idToken{sub: "mallory-2", aud: []string{"someone-else"}}))
			}
			return out
		}, "mallory-2"},
		{"an untrusted issuer", func(now time.Time) []string {
			var out []string
			for range 20 {
				out = append(out, untrusted.sign(t, now, idToken{sub: "alice", aud: []string{exchangeAudience}}))
			}
			return out
		}, ""},
		{"a new subject each", func(now time.Time) []string {
			var out []string
			for i := range 20 {
				out = append(out, unsigned(map[string]any{"iss": "https://stranger.example", "sub": fmt.Sprintf("s%d", i), "aud": exchangeAudience}),
					p.sign(t, now, idToken{sub: fmt.Sprintf("r%d", i), aud: []string{exchangeAudience}, rogue: true}))
			}
			return out
		}, "r1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			// Each case starts in a new window.
			e.clock.Advance(2 * time.Minute)
			stranger := e.connection(false)
			for i, tok := range tt.flood(e.clock.Now()) {
				want, constraint := 401, "unauthenticated"
				if i >= 10 {
					want, constraint = 429, "rate_limited"
				}
				if status, body := stranger.exchange(tok); status != want || body["constraint"] != constraint {
					t.Fatalf("exchange #%d of a refused token = %d %v; want %d %s", i+1, status, body, want, constraint)
				}
			}
			// The stranger's connection waits, even with a valid token,
			// until its failures leave the window.
			valid := p.sign(t, e.clock.Now(), idToken{sub: "alice", aud: []string{exchangeAudience}})
			if status, body := stranger.exchange(valid); status != 429 || body["constraint"] != "rate_limited" {
				t.Fatalf("a valid token over the stranger's connection right after its failures = %d %v; want 429 rate_limited", status, body)
			}
			other := e.connection(false)
			other.mustExchange(p, "alice")
			if tt.sub != "" {
				other.mustExchange(p, tt.sub)
			}
			e.clock.Advance(time.Minute)
			stranger.mustExchange(p, "alice")
		})
	}
}

// azpCase is an ID token for a subject of its own, of the audiences aud
// and authorized party azp, and whether it is exchanged.
type azpCase struct {
	name string
	aud  []string
	azp  string
	ok   bool
}

// runAZPCases exchanges a token of p for each case.
func runAZPCases(t *testing.T, e *exchangeEnv, p *provider, tests []azpCase) {
	t.Helper()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			sub := fmt.Sprintf("user-%d", i)
			status, body := e.exchange(p.sign(t, e.clock.Now(), idToken{sub: sub, aud: tt.aud, azp: tt.azp}))
			if tt.ok {
				if tok, _ := body["access_token"].(string); status != 200 || !strings.HasPrefix(tok, "ctxs_") {
					t.Fatalf("exchange(aud %v, azp %q) = %d %v; want 200 with a ctxs_ token", tt.aud, tt.azp, status, body)
				}
				return
			}
			if status != 401 || body["constraint"] != "unauthenticated" {
				t.Fatalf("exchange(aud %v, azp %q) = %d %v; want 401 unauthenticated", tt.aud, tt.azp, status, body)
			}
		})
	}
}

// TestExchangeAuthorizedParty: an ID token is exchanged only when every
// audience and its authorized party (azp) is a client the trust entry
// names, and a token of several audiences names its azp (OpenID Connect
// Core 1.0 §2, §3.1.3.7). A token another client of the same provider
// asked for, even with our audience among its own, is refused.
func TestExchangeAuthorizedParty(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	if status, body := e.trust(p.srv.URL); status != 201 {
		t.Fatalf("trust = %d %v", status, body)
	}
	const ours = exchangeAudience
	runAZPCases(t, e, p, []azpCase{
		{"our audience alone, no azp", []string{ours}, "", true},
		{"our audience alone, azp ours", []string{ours}, ours, true},
		{"azp another client among the audiences", []string{ours, "tutor"}, "tutor", false},
		{"several audiences, no azp", []string{ours, "tutor"}, "", false},
		{"our audience alone, azp another client", []string{ours}, "tutor", false},
		{"azp ours, another audience untrusted", []string{ours, "ads"}, ours, false},
	})
}

// TestExchangeTrustedAuthorizedParties: a client the owner trusts besides
// the audience (authorized_parties) may be a token's azp and audience.
func TestExchangeTrustedAuthorizedParties(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	status, body := e.trust(p.srv.URL, "tutor")
	if got, _ := json.Marshal(body["authorized_parties"]); status != 201 || string(got) != `["tutor"]` {
		t.Fatalf("trust with authorized_parties [tutor] = %d %v", status, body)
	}
	const ours = exchangeAudience
	runAZPCases(t, e, p, []azpCase{
		{"azp a trusted client", []string{ours, "tutor"}, "tutor", true},
		{"azp ours, the other audience trusted", []string{ours, "tutor"}, ours, true},
		{"our audience alone, no azp", []string{ours}, "", true},
		{"azp a trusted client, another audience untrusted", []string{ours, "tutor", "ads"}, "tutor", false},
		{"several trusted audiences, no azp", []string{ours, "tutor"}, "", false},
		{"azp an untrusted client", []string{ours, "ads"}, "ads", false},
		{"a trusted client's token without our audience", []string{"tutor"}, "tutor", false},
	})
}

// TestTrustAuthorizedPartiesInput: authorized parties are client ids,
// each listed once, other than the audience, at most sixteen.
func TestTrustAuthorizedPartiesInput(t *testing.T) {
	e := newExchangeEnv(t)
	seventeen := make([]string, 17)
	for i := range seventeen {
		seventeen[i] = fmt.Sprintf("client-%d", i)
	}
	tests := []struct {
		name    string
		parties []string
	}{
		{"empty id", []string{""}},
		{"listed twice", []string{"tutor", "tutor"}},
		{"the audience", []string{exchangeAudience}},
		{"too long", []string{strings.Repeat("x", 257)}},
		{"too many", seventeen},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			status, body := e.trust(fmt.Sprintf("https://issuer-%d.example", i), tt.parties...)
			if status != 400 || body["constraint"] != "invalid_request" {
				t.Fatalf("trust with authorized_parties %q = %d %v; want 400 invalid_request", tt.parties, status, body)
			}
		})
	}
}
