package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/phc-project/phc/internal/identity/oidctoken"
	"github.com/phc-project/phc/internal/oidcrecipient"
)

// activeTokens is how many of recipient's tokens the owner's token list
// shows active.
func (e *exchangeEnv) activeTokens(recipient string) int {
	e.t.Helper()
	status, body := e.do("GET", "/context/tokens/service", e.owner, "", nil)
	if status != 200 {
		e.t.Fatalf("token list = %d %v", status, body)
	}
	raw, _ := json.Marshal(body["tokens"])
	var tokens []struct {
		Consumer string `json:"consumer"`
		Active   bool   `json:"active"`
	}
	if err := json.Unmarshal(raw, &tokens); err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, t := range tokens {
		if t.Consumer == recipient && t.Active {
			n++
		}
	}
	return n
}

// newestRefusal is the first record of the newest receipt, a refused
// exchange's class ("refused:CLASS").
func (e *exchangeEnv) newestRefusal() string {
	e.t.Helper()
	status, body := e.do("GET", "/phc/v1/receipts?limit=1", e.owner, "", nil)
	raw, _ := json.Marshal(body["receipts"])
	var rs []struct {
		Operation string   `json:"operation"`
		Decision  string   `json:"decision"`
		Records   []string `json:"records"`
	}
	if err := json.Unmarshal(raw, &rs); status != 200 || err != nil || len(rs) != 1 ||
		rs[0].Operation != "token.exchange" || rs[0].Decision != "deny" || len(rs[0].Records) == 0 {
		e.t.Fatalf("receipts = %d %v; want one denied token.exchange", status, body)
	}
	return rs[0].Records[0]
}

// trustID puts p on the trust list and returns the entry's id.
func (e *exchangeEnv) trustID(p *provider) string {
	e.t.Helper()
	status, body := e.trust(p.srv.URL)
	id, _ := body["id"].(string)
	if status != 201 || id == "" {
		e.t.Fatalf("trust = %d %v", status, body)
	}
	return id
}

// TestReaddedIssuerFreesTheLiveTokenCap: tokens that died with their
// issuer's trust entry no longer count toward the live-token cap. Removing
// and re-adding an issuer (how the owner changes its authorized parties)
// leaves its recipients free to exchange at once, and the token list
// agrees with the cap: the cap, the list and authentication use one rule.
func TestReaddedIssuerFreesTheLiveTokenCap(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	alice := oidcrecipient.Name(p.srv.URL, "alice")
	id := e.trustID(p)
	for range 10 {
		e.mustExchange(p, "alice")
	}
	if status, body := e.exchange(p.sign(t, e.clock.Now(), idToken{sub: "alice", aud: []string{exchangeAudience}})); status != 429 {
		t.Fatalf("exchange past the cap = %d %v; want 429", status, body)
	}
	if n := e.activeTokens(alice); n != 10 {
		t.Fatalf("token list shows %d of alice's tokens active; want 10", n)
	}
	if status, body := e.do("DELETE", "/phc/v1/trust/"+id, e.owner, "", nil); status != 200 {
		t.Fatalf("trust remove = %d %v", status, body)
	}
	if n := e.activeTokens(alice); n != 0 {
		t.Fatalf("after the issuer left the trust list, the token list shows %d of alice's tokens active; want 0", n)
	}
	e.trustID(p)
	e.mustExchange(p, "alice")
	if n := e.activeTokens(alice); n != 1 {
		t.Fatalf("after one exchange under the re-added issuer, the token list shows %d of alice's tokens active; want 1", n)
	}
}

// TestForgedTokensFetchKeysBoundedly: ID tokens signed with a key the
// issuer's JWKS does not hold, each over a new connection (so that the
// limit on one connection's refused tokens never stops them), make the
// verifier fetch the issuer's keys at most once per interval, and a valid
// token never does once the keys are known. A key the issuer rotates to is still picked up: by the
// first token signed with it once the interval has passed.
func TestForgedTokensFetchKeysBoundedly(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	e.trustID(p)
	e.mustExchange(p, "alice")

	before := p.fetches.Load()
	e.mustExchange(p, "alice")
	if got := p.fetches.Load() - before; got != 0 {
		t.Fatalf("an exchange with a known key fetched the JWKS %d times; want 0", got)
	}

	e.clock.Advance(oidctoken.KeyRefetchInterval)
	before = p.fetches.Load()
	forger := e.connection(true)
	for i := range 200 {
		tok := p.sign(t, e.clock.Now(), idToken{sub: fmt.Sprintf("forged-%d", i), aud: []string{exchangeAudience}, rogue: true})
		if status, body := forger.exchange(tok); status != 401 {
			t.Fatalf("exchange of forged token %d = %d %v; want 401", i, status, body)
		}
	}
	if got := p.fetches.Load() - before; got > 1 {
		t.Fatalf("200 forged tokens fetched the JWKS %d times; want at most 1", got)
	}
	// Refused for what they are, not for keys that could not be fetched.
	if got := e.newestRefusal(); got != "refused:bad_signature" {
		t.Fatalf("the newest refused exchange is %q; want refused:bad_signature", got)
	}

	// The issuer rotates its key. Right after a fetch, a token signed with
	// the new key is refused without another; once the interval has
	// passed, the first such token fetches the keys and is exchanged.
	p.rotate(t, newKey(t, "k2"))
	before = p.fetches.Load()
	if status, body := e.exchange(p.sign(t, e.clock.Now(), idToken{sub: "carol", aud: []string{exchangeAudience}})); status != 401 {
		t.Fatalf("exchange with a new key within the interval = %d %v; want 401", status, body)
	}
	if got := p.fetches.Load() - before; got != 0 {
		t.Fatalf("a new key within the interval fetched the JWKS %d times; want 0", got)
	}
	e.clock.Advance(oidctoken.KeyRefetchInterval)
	e.mustExchange(p, "carol")
	e.mustExchange(p, "carol")
	if got := p.fetches.Load() - before; got != 1 {
		t.Fatalf("a rotated key fetched the JWKS %d times; want 1", got)
	}
}

// TestUndiscoverableIssuerIsAskedBoundedly: while a trusted issuer's
// discovery fails, tokens naming it, each over a new connection, make the
// verifier ask for its discovery document at most once per interval; once
// it answers again, the first token after the interval is exchanged.
func TestUndiscoverableIssuerIsAskedBoundedly(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	p.down.Store(true)
	if status, body := e.trust(p.srv.URL); status != 201 || body["warnings"] == nil {
		t.Fatalf("trust of an issuer that cannot be discovered = %d %v; want 201 with a warning", status, body)
	}

	e.clock.Advance(oidctoken.KeyRefetchInterval)
	before := p.discoveries.Load()
	sender := e.connection(true)
	for i := range 200 {
		tok := p.sign(t, e.clock.Now(), idToken{sub: fmt.Sprintf("user-%d", i), aud: []string{exchangeAudience}})
		if status, body := sender.exchange(tok); status != 401 {
			t.Fatalf("exchange %d while discovery fails = %d %v; want 401", i, status, body)
		}
	}
	if got := p.discoveries.Load() - before; got > 1 {
		t.Fatalf("200 tokens asked for the discovery document %d times; want at most 1", got)
	}
	if got := e.newestRefusal(); got != "refused:issuer_unreachable" {
		t.Fatalf("the newest refused exchange is %q; want refused:issuer_unreachable", got)
	}

	p.down.Store(false)
	e.clock.Advance(oidctoken.KeyRefetchInterval)
	e.mustExchange(p, "alice")
}
