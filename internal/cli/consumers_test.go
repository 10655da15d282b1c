package cli

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConsumerLifecycle: self-registration waits for the owner's approval;
// tokens are listed by prefix and revoked by it; removing a consumer revokes
// its tokens and grants, so a new consumer of the same name inherits nothing.
func TestConsumerLifecycle(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	const secret = "self-registered-secret-01"
	var reg struct{ Name, Status string }
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "diary", "secret": secret}, &reg)
	if reg.Status != "pending" {
		t.Fatalf("register = %+v; want pending", reg)
	}
	// Again with the same secret: the same answer, still pending; with
	// another secret, the name is taken.
	h.must(200, "POST", "/context/consumers/register", "", map[string]string{"name": "diary", "secret": secret}, &reg)
	if reg.Status != "pending" {
		t.Fatalf("register again = %+v; want pending", reg)
	}
	h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "diary", "secret": "another-secret-0123456789"})
	mint := map[string]any{"consumer": "diary", "secret": secret, "scope": "*", "mode": "read"}
	h.constraint(401, "unauthenticated", "POST", "/context/tokens/service", "", mint)

	if out := h.phcOK("consumer", "approve", "diary"); !strings.Contains(out, "approved") {
		t.Fatalf("consumer approve = %q", out)
	}
	h.constraint(409, "conflict", "POST", "/phc/v1/consumers/diary/approve", h.owner, nil)
	h.constraint(404, "not_found", "POST", "/phc/v1/consumers/nobody/approve", h.owner, nil)
	var list struct {
		Consumers []struct{ Name, Status string }
	}
	h.must(200, "GET", "/context/consumers", h.owner, nil, &list)
	if len(list.Consumers) != 1 || list.Consumers[0].Status != "approved" {
		t.Fatalf("consumers = %+v", list)
	}

	// Tokens: list by prefix, refuse an ambiguous prefix, revoke a unique one.
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "p", "name": "P"}, nil)
	h.grant("diary", "journal", "read", map[string]any{"keys": []string{"*"}})
	tokens := map[string]string{} // first character after ctxs_ → token
	var ambiguous string
	for i := 0; i < 40 && ambiguous == ""; i++ {
		tok := h.token("diary", secret, "*", "read")
		c := tok[len("ctxs_"):][:1]
		if _, seen := tokens[c]; seen {
			ambiguous = "ctxs_" + c
		}
		tokens[c] = tok
	}
	if ambiguous == "" {
		t.Fatal("no two of 40 tokens share a first character")
	}
	out := h.phcOK("token", "list")
	if strings.Count(out, "diary") != len(tokens)+1 || strings.Contains(out, tokens[ambiguous[5:]]) {
		t.Fatalf("token list = %q", out)
	}
	h.constraint(409, "conflict", "DELETE", "/context/tokens/service/"+ambiguous, h.owner, nil)
	h.constraint(404, "not_found", "DELETE", "/context/tokens/service/ctxs_zzzzzzzzzzzzzzzz", h.owner, nil)
	h.constraint(400, "invalid_request", "DELETE", "/context/tokens/service/ctxs_", h.owner, nil)
	victim := tokens[ambiguous[5:]]
	h.must(200, "GET", "/phc/v1/context?purpose=journal", victim, nil, nil)
	h.phcOK("token", "revoke", victim[:20])
	h.constraint(401, "unauthenticated", "GET", "/phc/v1/context?purpose=journal", victim, nil)

	// Removing the consumer revokes the rest, and its grants.
	other := h.token("diary", secret, "*", "read")
	h.phcOK("consumer", "remove", "diary")
	h.constraint(401, "unauthenticated", "GET", "/phc/v1/context?purpose=journal", other, nil)
	h.constraint(404, "not_found", "DELETE", "/context/consumers/diary", h.owner, nil)
	var grants struct {
		Grants []struct {
			RevokedAt *string `json:"revoked_at"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	if len(grants.Grants) != 1 || grants.Grants[0].RevokedAt == nil {
		t.Fatalf("grants after removing the consumer = %+v; want the one grant revoked", grants)
	}
	// A new consumer of the same name starts with nothing.
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "diary", "secret": secret}, nil)
	fresh := h.token("diary", secret, "*", "read")
	var ctx contextAnswer
	h.must(200, "GET", "/phc/v1/context?purpose=journal", fresh, nil, &ctx)
	if len(ctx.Claims) != 0 {
		t.Fatalf("a re-created consumer reads %d claims", len(ctx.Claims))
	}
	h.constraint(403, "session_required", "GET", "/context/tokens/service", fresh, nil)
	h.constraint(403, "session_required", "DELETE", "/context/consumers/diary", fresh, nil)
}

// TestTokenRateLimits: an app may make 60 reads and 10 writes a minute by
// default (the owner may change the defaults; a token may ask for
// less), then answers 429 with Retry-After; the owner is never limited.
func TestTokenRateLimits(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 0, "writes_per_minute": 0}, nil)
	app := h.consumer("app", "*", "read-write")
	h.grant("app", "notes", "contribute", map[string]any{"keys": []string{"notes.*"}})
	for i := range 10 {
		h.must(201, "POST", "/phc/v1/proposals", app, map[string]any{"key": "notes.n" + string(rune('a'+i)), "value": i, "kind": "note", "assertion": "reported"}, nil)
	}
	h.constraint(429, "rate_limited", "POST", "/phc/v1/proposals", app, map[string]any{"key": "notes.x", "value": 1, "kind": "note", "assertion": "reported"})
	// The bucket refills at one read a second while the test runs: on a
	// slow machine a few reads past the 60th may still pass, never more
	// than the seconds elapsed allow.
	start := time.Now()
	for range 60 {
		h.must(200, "GET", "/phc/v1/context?purpose=notes", app, nil, nil)
	}
	for n := 61; ; n++ {
		req, _ := http.NewRequest("GET", h.base+"/phc/v1/context?purpose=notes", nil)
		req.Header.Set("Authorization", "Bearer "+app)
		resp, err := h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "" {
			break
		}
		if allowed := 60 + int(time.Since(start).Seconds()) + 1; resp.StatusCode != 200 || n > allowed {
			t.Fatalf("read %d = %d, Retry-After %q; want 429 with Retry-After after at most %d reads",
				n, resp.StatusCode, resp.Header.Get("Retry-After"), allowed)
		}
	}
	// A token that asks for less gets less (of an app that has read
	// nothing yet: the app's own limit counts over all its tokens).
	h.consumer("frugal", "*", "read")
	var tok struct{ Token string }
	h.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "frugal", "secret": "secret-of-frugal-0123456789",
		"scope": "*", "mode": "read", "rate_limit": map[string]int{"reads": 2}}, &tok)
	h.must(200, "GET", "/phc/v1/context?purpose=notes", tok.Token, nil, nil)
	h.must(200, "GET", "/phc/v1/context?purpose=notes", tok.Token, nil, nil)
	h.constraint(429, "rate_limited", "GET", "/phc/v1/context?purpose=notes", tok.Token, nil)
	for range 100 {
		h.must(200, "GET", "/phc/v1/claims", h.owner, nil, nil)
	}
}
