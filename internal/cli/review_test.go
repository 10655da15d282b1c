package cli

import (
	"encoding/json"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestRequestTokensCountAgainstLiveCap: a token the vault mints for an
// approved request (auto-granted at once, or polled after the owner's
// approval) is one of the app's live tokens. Since rates count per token,
// a token minted past the cap would bring a fresh bucket: an app could
// multiply its rate by asking for public data again and again.
func TestRequestTokensCountAgainstLiveCap(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/identity.full_name", h.owner, map[string]any{"value": "Cool Cucumber"}, nil)
	h.must(200, "PUT", "/context/sensitivity/identity.full_name", h.owner, map[string]any{"tier": "public"}, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 0, "writes_per_minute": 0, "live_tokens_per_app": 1}, nil)
	first := h.consumer("agent", "*", "read")
	// The app holds its one live token. A request for a public field is
	// granted at once; it must not come with a second live token.
	status, raw := h.do("POST", "/context/requests", first, map[string]any{"scope": "identity.full_name", "purpose": "greeting", "duration": 3600})
	var got struct {
		ID     string `json:"request_id"`
		Status string `json:"status"`
		Token  string `json:"token"`
	}
	_ = json.Unmarshal(raw, &got)
	if status != 201 || got.Status != "approved" {
		t.Fatalf("POST /context/requests for a public field = %d %s; want it granted at once", status, raw)
	}
	if got.Token != "" {
		// The token the cap should have refused: spend its fresh reads.
		n := 0
		for range 60 {
			if s, _ := h.do("GET", "/context/fields/identity.full_name", got.Token, nil); s == 200 {
				n++
			}
		}
		t.Fatalf("POST /context/requests at the live-token cap = %d, minted a second live token (it read %d times on a fresh bucket)", status, n)
	}
	// Polling the approved request at the cap mints nothing either: it
	// answers 429 until the app has room, and the token waits for it.
	h.constraint(429, "rate_limited", "GET", "/context/requests/"+got.ID, first, nil)
	h.must(200, "DELETE", "/context/tokens/service/"+first[:len("ctxs_")+12], h.owner, nil, nil)
	second := h.token("agent", "secret-of-agent-0123456789", "identity.*", "read")
	h.constraint(429, "rate_limited", "GET", "/context/requests/"+got.ID, second, nil)
	h.must(200, "DELETE", "/context/tokens/service/"+second[:len("ctxs_")+12], h.owner, nil, nil)
	// With no live token, the app has no credential to poll with; a new
	// one fills the quota again: the request's token is had by polling
	// with room, here after the owner raised the quota.
	third := h.token("agent", "secret-of-agent-0123456789", "identity.*", "read")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"live_tokens_per_app": 2}, nil)
	h.must(200, "GET", "/context/requests/"+got.ID, third, nil, &got)
	if got.Token == "" {
		t.Fatalf("the poll with room for a token answered none")
	}
	h.must(200, "GET", "/context/fields/identity.full_name", got.Token, nil, nil)
}

// TestOIDCReadFilesNoRequest: an OIDC recipient files no context request
// (POST /context/requests refuses its tokens: requests are a registered
// consumer's), so its read of a sensitive key files none either. Filed, it
// would become a grant to a "consumer" named like the OIDC subject, and its
// poll would mint a token bound to no trust entry.
func TestOIDCReadFilesNoRequest(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	iss := newTestIssuer(t)
	const aud = "phc-test-audience"
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"trust", "add", iss.srv.URL, "--audience", aud}); code != 0 {
		t.Fatalf("phc trust add = %d\n%s", code, errb.String())
	}
	status, got := exchange(h, iss.sign(t, iss.claims(t, "alice", aud, nil), jwa.RS256, iss.rsa), "")
	if status != 200 {
		t.Fatalf("exchange = %d %v", status, got)
	}
	tok := got["access_token"].(string)
	h.constraint(400, "invalid_request", "POST", "/context/requests", tok, map[string]any{"scope": "health.allergies", "purpose": "care"})
	h.must(200, "PUT", "/context/fields/health.allergies", h.owner, map[string]any{"value": "peanuts"}, nil)
	for _, key := range []string{"health.allergies", "health.absent"} {
		e := h.refused(403, "approval_required", "GET", "/context/fields/"+key, tok, nil)
		if e.RequestID != "" || strings.Contains(e.Error, "/context/requests") {
			t.Fatalf("GET %s by an OIDC recipient = %+v; want no request filed and no route it cannot use", key, e)
		}
	}
	var list struct {
		Requests []map[string]any `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &list)
	if len(list.Requests) != 0 {
		t.Fatalf("an OIDC recipient's reads filed %v", list.Requests)
	}
}

// TestSessionStaysHome: when PHC_ADDR (or --addr) names another server
// than the daemon of PHC_HOME's data dir, the owner session of that data
// dir is never sent to it: the command says so without asking, and phc
// status asks for the public status only.
func TestSessionStaysHome(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"who are you","constraint":"unauthenticated"}`))
	}))
	defer other.Close()
	addr := strings.TrimPrefix(other.URL, "http://")
	for _, args := range [][]string{{"persona", "list"}, {"status"}, {"claims", "--addr", addr}} {
		env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": a.dir, "PHC_ADDR": addr})
		Run(t.Context(), env, args)
		if !strings.Contains(errb.String(), "names the daemon at "+addr) {
			t.Errorf("phc %s: %q; want it to name the mismatch", strings.Join(args, " "), errb.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		if strings.Contains(h, a.owner) {
			t.Fatalf("the server at PHC_ADDR received the owner session of PHC_HOME (%d requests)", len(seen))
		}
	}
}

// TestReadsFileBoundedRequests: the requests a read files are bounded by
// the app's quota of waiting requests. A read the owner's restrictions
// refuse, of a field whose tier the auto_grant covers, cannot be helped by
// a request: it files none (a request granted at once would not count
// against the quota, and a new purpose would file one more each time).
func TestReadsFileBoundedRequests(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	var pr struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "health.allergies", "value": "peanuts", "kind": "fact",
		"assertion": "reported", "restrictions": []any{map[string]any{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"care"}}}}}, &pr)
	h.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", h.owner, map[string]any{}, nil)
	h.must(200, "PUT", "/context/sensitivity/health.allergies", h.owner, map[string]any{"tier": "public"}, nil)
	app := h.consumer("app", "*", "read")
	h.grant("app", "care", "read", map[string]any{"keys": []string{"health.*"}})
	h.must(200, "GET", "/context/fields/health.allergies?purpose=care", app, nil, nil)
	for i := range 25 {
		if status, raw := h.do("GET", "/context/fields/health.allergies?purpose=p"+string(rune('a'+i)), app, nil); status != 404 && status != 403 {
			t.Fatalf("read %d = %d %s", i, status, raw)
		}
	}
	var list struct {
		Requests []struct {
			Status string `json:"status"`
		} `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &list)
	if n := len(list.Requests); n > 20 {
		t.Fatalf("25 reads under 25 purposes filed %d requests (%s first); want at most the 20 the quota allows", n, list.Requests[0].Status)
	}
}
