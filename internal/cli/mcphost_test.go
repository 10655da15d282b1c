package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedAndBack locks the harness's vault and returns a function that
// unlocks it again (the owner's new session in h.owner).
func (h *harness) lockedAndBack(t *testing.T) func() {
	t.Helper()
	h.must(200, "POST", "/context/lock", h.owner, nil, nil)
	return func() {
		t.Helper()
		sk, err := os.ReadFile(filepath.Join(h.dir, "secret.key"))
		if err != nil {
			t.Fatal(err)
		}
		var tok struct{ Token string }
		h.must(200, "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": strings.TrimSpace(string(sk))}, &tok)
		h.owner = tok.Token
	}
}

// hostSurvives runs what a host left running for weeks meets, on one MCP
// session cs over which the app holds token (scope learning.*, read-write,
// for one hour on clock): a lock and an unlock, a 2 MB argument, and the
// token's expiry. The session goes on through all of them.
func hostSurvives(t *testing.T, h *harness, clock *offsetClock, cs *mcp.ClientSession) {
	t.Helper()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	out, isErr := call(t, cs, "context_get", map[string]any{"id": "learning.level", "purpose": "learning"})
	if isErr || out["value"] != "B1" {
		t.Fatalf("context_get before the lock = %v", out)
	}

	// Lock during the session: tool errors, and status says locked.
	unlock := h.lockedAndBack(t)
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.level", "purpose": "learning"})
	if !isErr || out["constraint"] != "vault_locked" {
		t.Fatalf("context_get while locked = %v; want vault_locked", out)
	}
	out, isErr = call(t, cs, "context_status", map[string]any{})
	if isErr || out["locked"] != true {
		t.Fatalf("context_status while locked = %v; want locked: true", out)
	}
	unlock()
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.level", "purpose": "learning"})
	if isErr || out["value"] != "B1" {
		t.Fatalf("context_get on the same session after unlock = %v", out)
	}

	// A 2 MB argument: too_large, and the session goes on.
	big := strings.Repeat("x", 2<<20)
	out, isErr = call(t, cs, "memory_propose", map[string]any{"key": "learning.note", "value": big, "kind": "note", "assertion": "reported"})
	if !isErr || out["constraint"] != "too_large" {
		t.Fatalf("memory_propose with a 2 MB value = %.200v; want too_large", out)
	}
	out, isErr = call(t, cs, "context_status", map[string]any{})
	if isErr || out["locked"] != false {
		t.Fatalf("context_status after a 2 MB argument = %v", out)
	}

	// The token expires: unauthenticated, over and over, never a dead
	// server.
	clock.offset.Add(int64(2 * time.Hour))
	for range 2 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "context_get", Arguments: map[string]any{"id": "learning.level", "purpose": "learning"}})
		if err != nil {
			// Over HTTP the host sees the daemon refuse the expired
			// token (401, as the MCP authorization spec asks).
			return
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || !strings.Contains(string(raw), `"constraint":"unauthenticated"`) {
			t.Fatalf("context_get with an expired token = %s; want unauthenticated", raw)
		}
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("tools/list after expiry: %v", err)
	}
}

// hostFixture is a daemon on a clock the test moves, with an app that may
// read and write learning.* and has learning.level = B1.
func hostFixture(t *testing.T) (*harness, *offsetClock, string) {
	t.Helper()
	clock := &offsetClock{}
	h := startHarnessClock(t, "", testPassword, clock)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	tok := h.consumer("tutor", "learning.*", "read-write")
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "tutor"}, "purpose": "learning",
		"operations": []string{"contribute", "read"}, "selectors": map[string]any{"keys": []string{"learning.*"}},
		"expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, nil)
	h.must(200, "PUT", "/context/fields/learning.level", h.owner, map[string]any{"value": "B1"}, nil)
	return h, clock, tok
}

// TestMCPHostSurvivesOverHTTP: the Go SDK's client over streamable HTTP
// keeps its session through a lock and unlock and a 2 MB argument.
func TestMCPHostSurvivesOverHTTP(t *testing.T) {
	t.Parallel()
	h, clock, tok := hostFixture(t)
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	hostSurvives(t, h, clock, cs)
}

// TestMCPOpensWhileLocked: a session opened while the vault is locked
// answers vault_locked, whatever the token, and goes on after unlock.
func TestMCPOpensWhileLocked(t *testing.T) {
	t.Parallel()
	h, _, tok := hostFixture(t)
	unlock := h.lockedAndBack(t)
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatalf("connect while locked: %v", err)
	}
	// A made-up token of the right shape gets the same answer: nothing
	// says whether a token is valid while none can be checked.
	fake, err := mcpSession(t, h, "ctxs_"+strings.Repeat("A", 43))
	if err != nil {
		t.Fatalf("connect with a made-up token while locked: %v", err)
	}
	for _, s := range []*mcp.ClientSession{cs, fake} {
		out, isErr := call(t, s, "context_get", map[string]any{"id": "learning.level"})
		if !isErr || out["constraint"] != "vault_locked" {
			t.Fatalf("context_get while locked = %v", out)
		}
	}
	if _, err := mcpSession(t, h, "ctxs_short"); err == nil {
		t.Fatal("a malformed token opened a session while locked")
	}
	unlock()
	out, isErr := call(t, cs, "context_get", map[string]any{"id": "learning.level", "purpose": "learning"})
	if isErr || out["value"] != "B1" {
		t.Fatalf("context_get after unlock = %v", out)
	}
	if _, err := fake.CallTool(t.Context(), &mcp.CallToolParams{Name: "context_status", Arguments: map[string]any{}}); err == nil {
		t.Fatal("the made-up token's session went on after unlock")
	}
}

// syncBuffer is a bytes.Buffer safe for a subprocess and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPHostSurvivesOverStdio: phc mcp as a process, started by the Go SDK's
// client as a host starts it, starts while the vault is locked and keeps
// the host's session through the unlock, a lock, a 2 MB argument and the
// token's expiry, which it explains on standard error.
func TestMCPHostSurvivesOverStdio(t *testing.T) {
	t.Parallel()
	bin := phcBinary(t)
	h, clock, tok := hostFixture(t)
	unlock := h.lockedAndBack(t)
	cmd := exec.Command(bin, "mcp", "--data", h.dir)
	cmd.Env = append(os.Environ(), "PHC_TOKEN="+tok)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := mc.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("phc mcp while locked: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	out, isErr := call(t, cs, "context_status", map[string]any{})
	if isErr || out["locked"] != true {
		t.Fatalf("context_status over stdio while locked = %v", out)
	}
	unlock()
	hostSurvives(t, h, clock, cs)
	// Over stdio the bridge answers for the refused token.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "context_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("a call after expiry over stdio: %v\n%s", err, stderr.String())
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(string(raw), `"constraint":"unauthenticated"`) {
		t.Fatalf("a call after expiry over stdio = %s; want unauthenticated", raw)
	}
	if msg := stderr.String(); !strings.Contains(msg, "expired") || !strings.Contains(msg, "restart") {
		t.Fatalf("phc mcp said on stderr %q; want that the token expired and what to do", msg)
	}
}

// TestMCPToolSchemas: every tool's input schema, as tools/list serves it,
// is a plain object at the top level — "type": "object", no anyOf, oneOf
// or allOf there — with no type given as an array anywhere, which hosts
// whose dialects allow one type refuse.
func TestMCPToolSchemas(t *testing.T) {
	t.Parallel()
	h, _, tok := hostFixture(t)
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var typeArrays func(path string, v any) []string
	typeArrays = func(path string, v any) []string {
		var out []string
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["type"].([]any); ok {
				out = append(out, path)
			}
			for k, c := range v {
				out = append(out, typeArrays(path+"/"+k, c)...)
			}
		case []any:
			for i, c := range v {
				out = append(out, typeArrays(path+"/"+string(rune('0'+i)), c)...)
			}
		}
		return out
	}
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: input schema %s: %v", tool.Name, raw, err)
		}
		if s["type"] != "object" {
			t.Errorf("%s: input schema type = %v; want object", tool.Name, s["type"])
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s: input schema has %s at the top level", tool.Name, k)
			}
		}
		if ps := typeArrays("", s); len(ps) > 0 {
			t.Errorf("%s: type given as an array at %v", tool.Name, ps)
		}
	}
	// Argument errors name the path and keyword on every tool; request_context's
	// alternatives are enforced by its handler, in the same terms.
	for _, c := range []struct {
		tool          string
		args          map[string]any
		path, keyword string
	}{
		{"context_status", map[string]any{"x": 1}, "/x", "additionalProperties"},
		{"context_list", map[string]any{"purpose": 7}, "/purpose", "type"},
		{"context_get", map[string]any{}, "/id", "required"},
		{"context_context", map[string]any{"purpose": []any{}}, "/purpose", "type"},
		{"context_set", map[string]any{"id": "learning.x"}, "/value", "required"},
		{"context_search", map[string]any{"query": "a", "limit": 500}, "/limit", "maximum"},
		{"memory_status", map[string]any{"proposal_id": "nope"}, "/proposal_id", "pattern"},
		{"memory_withdraw", map[string]any{}, "/proposal_id", "required"},
		{"memory_propose", map[string]any{"key": "learning.x", "value": 1, "kind": "note"}, "/assertion", "required"},
		{"request_context", map[string]any{"scope": "learning.*"}, "/purpose", "required"},
		{"request_context", map[string]any{"request_id": "req_AAAAAAAAAAAAAAAAAAAAAAAAAA", "scope": "learning.*"}, "/scope", "not"},
	} {
		out, isErr := call(t, cs, c.tool, c.args)
		vs, _ := out["violations"].([]any)
		want := "invalid_request" // as HTTP answers a malformed request
		if c.tool == "memory_propose" {
			want = "schema_violation" // the binding's proposal, checked by the core
		}
		if !isErr || out["constraint"] != want || len(vs) == 0 {
			t.Errorf("%s(%v) = %v; want %s", c.tool, c.args, out, want)
			continue
		}
		v := vs[0].(map[string]any)
		if v["path"] != c.path || v["keyword"] != c.keyword {
			t.Errorf("%s(%v): violation %v; want %s %s", c.tool, c.args, v, c.path, c.keyword)
		}
	}
	// request_context accepts a duration as text or as seconds.
	for _, d := range []any{"1h", 3600} {
		out, isErr := call(t, cs, "request_context", map[string]any{"scope": "learning.*", "purpose": "learning", "duration": d})
		if isErr {
			t.Errorf("request_context with duration %v = %v", d, out)
		}
	}
}

// TestMCPSearchAndProposals: context_search finds what the app may read,
// ranked, and nothing else; memory_status tells the app how its own
// proposals stand, never the owner's edits; it may withdraw a pending one,
// over MCP and over HTTP.
func TestMCPSearchAndProposals(t *testing.T) {
	t.Parallel()
	h, _, tok := hostFixture(t)
	h.must(200, "PUT", "/context/fields/learning.language", h.owner, map[string]any{"value": "Spanish, level B1"}, nil)
	h.must(200, "PUT", "/context/fields/health.allergies", h.owner, map[string]any{"value": "Spanish peanuts"}, nil)
	h.must(200, "PUT", "/context/fields/identity.full_name", h.owner, map[string]any{"value": "Ana Level"}, nil)
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(out map[string]any) []string {
		var ks []string
		fs, _ := out["fields"].([]any)
		for _, f := range fs {
			ks = append(ks, f.(map[string]any)["id"].(string))
		}
		return ks
	}
	out, isErr := call(t, cs, "context_search", map[string]any{"query": "level", "purpose": "learning"})
	if got := keys(out); isErr || strings.Join(got, " ") != "learning.level learning.language" {
		t.Fatalf("context_search level = %v (%v); want learning.level then learning.language, nothing outside the app's reach", got, out)
	}
	out, _ = call(t, cs, "context_search", map[string]any{"query": "spanish", "purpose": "learning"})
	if got := keys(out); strings.Join(got, " ") != "learning.language" {
		t.Fatalf("context_search spanish = %v; want only learning.language (health.allergies is not the app's to read)", got)
	}
	out, _ = call(t, cs, "context_search", map[string]any{"query": "learning.", "purpose": "learning", "limit": 1})
	if got := keys(out); len(got) != 1 {
		t.Fatalf("context_search with limit 1 = %v", got)
	}

	out, isErr = call(t, cs, "memory_propose", map[string]any{"key": "learning.goal", "value": "C1", "kind": "goal", "assertion": "reported"})
	if isErr {
		t.Fatal(out)
	}
	first := out["proposal_id"].(string)
	out, _ = call(t, cs, "memory_propose", map[string]any{"key": "learning.pace", "value": "fast", "kind": "note", "assertion": "reported"})
	second := out["proposal_id"].(string)
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "learning.owner", "value": 1, "kind": "note", "assertion": "reported"}, nil)

	out, _ = call(t, cs, "memory_status", map[string]any{})
	if ps, _ := out["proposals"].([]any); len(ps) != 2 {
		t.Fatalf("memory_status = %v; want the app's two proposals, not the owner's", out)
	}
	h.must(200, "POST", "/phc/v1/proposals/"+first+"/confirm", h.owner, map[string]any{"personas": []string{}, "edits": map[string]any{"value": "C2"}}, nil)
	out, _ = call(t, cs, "memory_status", map[string]any{"proposal_id": first})
	p0 := out["proposals"].([]any)[0].(map[string]any)
	if p0["status"] != "confirmed" || p0["value"] != nil || p0["key"] != nil {
		t.Fatalf("memory_status of a confirmed proposal = %v; want confirmed, nothing of the owner's edit", p0)
	}
	out, isErr = call(t, cs, "memory_withdraw", map[string]any{"proposal_id": second})
	if isErr || out["status"] != "withdrawn" {
		t.Fatalf("memory_withdraw = %v", out)
	}
	out, isErr = call(t, cs, "memory_withdraw", map[string]any{"proposal_id": first})
	if !isErr || out["constraint"] != "conflict" {
		t.Fatalf("memory_withdraw of a decided proposal = %v; want conflict", out)
	}
	var review struct {
		Proposals []map[string]any `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &review)
	for _, r := range review.Proposals {
		if r["proposal_id"] == second {
			t.Fatal("a withdrawn proposal is still in the owner's review queue")
		}
	}
	// Over HTTP: the same, with the app's token.
	var pr struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tok, map[string]any{"key": "learning.x", "value": 1, "kind": "note", "assertion": "reported"}, &pr)
	h.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/withdraw", tok, nil, nil)
	var st struct {
		Proposals []map[string]any `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/proposals/"+pr.ID, tok, nil, &st)
	if len(st.Proposals) != 1 || st.Proposals[0]["status"] != "withdrawn" {
		t.Fatalf("GET /phc/v1/proposals/%s = %v", pr.ID, st)
	}
	other := h.consumer("other", "*", "read-write")
	h.constraint(404, "not_found", "GET", "/phc/v1/proposals/"+pr.ID, other, nil)
	h.constraint(404, "not_found", "POST", "/phc/v1/proposals/"+first+"/withdraw", other, nil)
}
