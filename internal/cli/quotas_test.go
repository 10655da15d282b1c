package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// retryAfter sends a request that must answer 429 rate_limited with a
// positive Retry-After, and returns its message. body is nil, a []byte
// sent as is, or a value encoded as JSON.
func (h *harness) retryAfter(method, path, token string, body any) []byte {
	h.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			h.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, h.base+path, strings.NewReader(string(raw)))
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error      string `json:"error"`
		Constraint string `json:"constraint"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || e.Constraint != "rate_limited" || err != nil || n <= 0 {
		h.t.Fatalf("%s %s = %d %+v, Retry-After %q; want 429 rate_limited with a positive Retry-After",
			method, path, resp.StatusCode, e, resp.Header.Get("Retry-After"))
	}
	return []byte(e.Error)
}

// note is a proposal body for key notes.<name>.
func note(name string) map[string]any {
	return map[string]any{"key": "notes." + name, "value": name, "kind": "note", "assertion": "reported"}
}

// TestAppQuotas: rate limits count per token (PCP §7), live tokens and
// pending proposals per app (docs/design.md §5 Quotas): a token gets 10 writes a
// minute and a fresh token's first write is not refused for another's; an
// app holds at most 10 live tokens, which bounds its total, and has at
// most 100 proposals waiting for the owner. Refusals are 429 rate_limited
// with Retry-After; the owner is never limited.
func TestAppQuotas(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	defaults := map[string]int{"reads_per_minute": 0, "writes_per_minute": 0, "live_tokens_per_app": 0, "pending_proposals_per_app": 0}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, defaults, nil)
	const secret = "secret-of-greedy-0123456789"
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "greedy", "secret": secret}, nil)
	h.grant("greedy", "notes", "contribute", map[string]any{"keys": []string{"notes.*"}})
	mint := map[string]any{"consumer": "greedy", "secret": secret, "scope": "notes.*", "mode": "write"}

	// Ten live tokens, then 429 until one is revoked or expires.
	var tokens []string
	for range 10 {
		tokens = append(tokens, h.token("greedy", secret, "notes.*", "write"))
	}
	h.retryAfter("POST", "/context/tokens/service", "", mint)
	h.phcOK("token", "revoke", tokens[9][:20])
	tokens[9] = h.token("greedy", secret, "notes.*", "write")
	h.retryAfter("POST", "/context/tokens/service", "", mint)
	// Another app has its own quota.
	other := h.consumer("other", "notes.*", "write")
	h.grant("other", "notes", "contribute", map[string]any{"keys": []string{"notes.*"}})

	// Ten writes a minute for each token: the eleventh on the same token is
	// refused, on any route; a token not yet used writes.
	for i := range 10 {
		h.must(201, "POST", "/phc/v1/proposals", tokens[0], note(fmt.Sprintf("w%d", i)), nil)
	}
	h.retryAfter("POST", "/phc/v1/proposals", tokens[0], note("w10"))
	h.retryAfter("PUT", "/context/fields/notes.w11", tokens[0], map[string]any{"value": "x"})
	h.must(201, "POST", "/phc/v1/proposals", tokens[9], note("w10"), nil)
	h.must(201, "POST", "/phc/v1/proposals", other, note("o0"), nil)

	// At most 100 proposals wait per app, at any rate; a decision frees a
	// place. The agent's field write that would become a proposal counts.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"writes_per_minute": 10_000_000}, nil)
	var last struct {
		ID string `json:"proposal_id"`
	}
	for i := 11; i < 100; i++ {
		h.must(201, "POST", "/phc/v1/proposals", tokens[i%10], note(fmt.Sprintf("w%d", i)), &last)
	}
	if msg := h.retryAfter("POST", "/phc/v1/proposals", tokens[0], note("w100")); !strings.Contains(string(msg), "review") {
		t.Errorf("the 101st proposal's refusal says %q; want it to name the review queue", msg)
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "none"}, nil)
	h.retryAfter("PUT", "/context/fields/notes.w100", tokens[1], map[string]any{"value": "x"})
	h.must(201, "POST", "/phc/v1/proposals", other, note("o1"), nil)
	h.must(201, "POST", "/phc/v1/proposals", h.owner, note("owner"), nil)
	h.must(200, "POST", "/phc/v1/proposals/"+last.ID+"/reject", h.owner, map[string]string{"reason": "no"}, nil)
	h.must(201, "POST", "/phc/v1/proposals", tokens[2], note("w100"), nil)
	h.retryAfter("POST", "/phc/v1/proposals", tokens[3], note("w101"))

	// The count survives a restart of the daemon.
	h.stop()
	h = startHarness(t, h.dir)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, defaults, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"writes_per_minute": 10_000_000}, nil)
	h.retryAfter("POST", "/phc/v1/proposals", tokens[4], note("w101"))
}
