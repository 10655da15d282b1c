package httpapi

import (
	"encoding/json"
	"testing"

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
