package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/phc-project/phc/internal/mcpserver"
)

// mcpSession connects the Go SDK's client to the daemon's /mcp over
// streamable HTTP with token.
func mcpSession(t *testing.T, h *harness, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "phc-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: h.base + "/mcp",
		HTTPClient: &http.Client{Timeout: time.Minute, Transport: mcpserver.BearerTransport{Token: token}}}
	cs, err := client.Connect(t.Context(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// call calls a tool and returns its structured content and error flag.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return out, res.IsError
}

// TestMCPWorkflowOverHTTP runs the core issue's first workflow over MCP
// (streamable HTTP, the Go SDK's client): tutor proposes, the owner
// confirms, coach reads for its purpose, budget gets nothing — with the
// constraint codes of HTTP.
func TestMCPWorkflowOverHTTP(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	tutor := h.consumer("tutor", "learning.*", "write")
	coach := h.consumerFor("coach", "*", "read", "learning")
	budget := h.consumer("budget", "*", "read")
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "tutor"}, "purpose": "learning",
		"operations": []string{"contribute"}, "selectors": map[string]any{"keys": []string{"learning.*"}}, "expires_at": tomorrow}, nil)
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "coach"}, "purpose": "learning",
		"operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"learning.*"}}, "expires_at": tomorrow}, nil)

	if _, err := mcpSession(t, h, "ctxs_not-a-token"); err == nil {
		t.Fatal("an MCP session opened with a made-up token")
	}
	if _, err := mcpSession(t, h, h.owner); err == nil {
		t.Fatal("an MCP session opened with the owner's session token: the model would read everything")
	}

	ts, err := mcpSession(t, h, tutor)
	if err != nil {
		t.Fatalf("connect as tutor: %v", err)
	}
	tools, err := ts.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
		raw, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(raw), ":true") || tool.OutputSchema == nil {
			t.Errorf("tool %s: input schema %s (a boolean schema, or no output schema)", tool.Name, raw)
		}
	}
	for _, n := range []string{"memory_propose", "context_status", "context_list", "context_get", "context_context", "context_set", "request_context"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}

	out, isErr := call(t, ts, "memory_propose", map[string]any{"key": "learning.spanish.schedule", "value": "twice a week",
		"kind": "goal", "assertion": "reported", "evidence": []any{map[string]any{"ref": "chat://tutor/session/42"}}})
	if isErr || out["status"] != "proposed" || !strings.HasPrefix(out["proposal_id"].(string), "prp_") {
		t.Fatalf("memory_propose = %v (error %v)", out, isErr)
	}
	prp := out["proposal_id"].(string)
	out, isErr = call(t, ts, "memory_propose", map[string]any{"key": "health.note", "value": "x", "kind": "note", "assertion": "reported"})
	if !isErr || out["constraint"] != "scope_exceeded" {
		t.Fatalf("memory_propose outside the token's scope = %v", out)
	}
	out, isErr = call(t, ts, "memory_propose", map[string]any{"key": "learning.x", "value": "x", "kind": "gossip", "assertion": "reported"})
	if !isErr || out["constraint"] != "schema_violation" {
		t.Fatalf("memory_propose with a bad kind = %v", out)
	}
	out, isErr = call(t, ts, "context_get", map[string]any{"id": "learning.spanish.schedule", "purpose": "learning"})
	if !isErr || out["constraint"] != "mode_denied" {
		t.Fatalf("tutor reads = %v; want mode_denied", out)
	}
	out, isErr = call(t, ts, "context_status", map[string]any{})
	if isErr || out["locked"] != false || out["field_count"] != nil {
		t.Fatalf("context_status = %v; want unlocked, no counts for an app", out)
	}
	// An app's write to a key it cannot read: accepted for the owner's
	// review, nothing shown.
	out, isErr = call(t, ts, "context_set", map[string]any{"id": "learning.level", "value": "B1"})
	if isErr || out["status"] == nil || out["value"] != nil {
		t.Fatalf("context_set = %v (error %v)", out, isErr)
	}

	cs, err := mcpSession(t, h, coach)
	if err != nil {
		t.Fatal(err)
	}
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.spanish.schedule", "purpose": "learning"})
	if !isErr || out["constraint"] != "not_found" {
		t.Fatalf("coach reads a pending proposal = %v; want not_found", out)
	}
	h.must(200, "POST", "/phc/v1/proposals/"+prp+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.spanish.schedule", "purpose": "learning"})
	if isErr || out["value"] != "twice a week" || out["written_by"] != "tutor" {
		t.Fatalf("coach reads after confirm = %v", out)
	}
	out, _ = call(t, cs, "context_context", map[string]any{"purpose": "learning"})
	if cats, _ := out["categories"].(map[string]any); len(cats["learning"].([]any)) != 1 {
		t.Fatalf("context_context = %v", out)
	}
	out, _ = call(t, cs, "context_list", map[string]any{"purpose": "learning"})
	if fs, _ := out["fields"].([]any); len(fs) != 1 || fs[0].(map[string]any)["value"] != nil {
		t.Fatalf("context_list = %v; want one field without its value", out)
	}
	// Its token is bound to learning: another purpose is refused outright.
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.spanish.schedule", "purpose": "marketing"})
	if !isErr || out["constraint"] != "scope_exceeded" {
		t.Fatalf("coach for marketing = %v", out)
	}
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "learning.spanish.schedule", "unknown": 1})
	if vs, _ := out["violations"].([]any); !isErr || out["constraint"] != "invalid_request" || len(vs) != 1 ||
		vs[0].(map[string]any)["path"] != "/unknown" || vs[0].(map[string]any)["keyword"] != "additionalProperties" {
		t.Fatalf("context_get with an unknown argument = %v; want invalid_request naming /unknown and additionalProperties", out)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "context://learning"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "learning.spanish.schedule") ||
		strings.Contains(res.Contents[0].Text, "twice a week") {
		t.Fatalf("resource context://learning = %+v, %v; want metadata without values", res, err)
	}
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 3 {
		t.Fatalf("prompts/list = %+v, %v", prompts, err)
	}
	pr, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "tax-prep"})
	if err != nil || pr.Meta["phc/scope"] == nil {
		t.Fatalf("prompts/get tax-prep = %+v, %v", pr, err)
	}

	bs, err := mcpSession(t, h, budget)
	if err != nil {
		t.Fatal(err)
	}
	out, isErr = call(t, bs, "context_get", map[string]any{"id": "learning.spanish.schedule", "purpose": "learning"})
	if !isErr || out["constraint"] != "not_found" {
		t.Fatalf("budget reads = %v; want not_found", out)
	}
	absent, _ := call(t, bs, "context_get", map[string]any{"id": "learning.nothing.here", "purpose": "learning"})
	if absent["error"] != out["error"] || absent["constraint"] != out["constraint"] {
		t.Fatalf("hidden %v differs from absent %v", out, absent)
	}
	out, isErr = call(t, bs, "request_context", map[string]any{"scope": "learning.*", "purpose": "budgeting"})
	if isErr || out["status"] == "" || out["token"] != nil {
		t.Fatalf("request_context = %v; want a status and no token", out)
	}
}

// TestMCPMetadata: the RFC 9728 metadata names the MCP endpoint, and a
// request without a token is refused with a pointer to it.
func TestMCPMetadata(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	var meta struct {
		Resource string   `json:"resource"`
		Bearer   []string `json:"bearer_methods_supported"`
	}
	h.must(200, "GET", "/.well-known/oauth-protected-resource/mcp", "", nil, &meta)
	if meta.Resource != h.base+"/mcp" || len(meta.Bearer) != 1 {
		t.Fatalf("metadata = %+v", meta)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "POST", h.base+"/mcp", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("POST /mcp without a token = %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestMCPApprovalInTheLoop: a request for sensitive data is put to the
// person through the host's elicitation when it supports it (the app and
// purpose shown literally) and, accepted, is granted at once; a host
// without elicitation gets pending and succeeds after phc approve. Critical
// data is put to the host only to tell the person how to approve it.
func TestMCPApprovalInTheLoop(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/health.allergies", h.owner, map[string]any{"value": "peanuts"}, nil)
	care := h.consumer("care", "*", "read")
	clinic := h.consumer("clinic", "*", "read")

	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "host-with-elicitation", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.base + "/mcp",
		HTTPClient: &http.Client{Timeout: time.Minute, Transport: mcpserver.BearerTransport{Token: care}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out, isErr := call(t, cs, "context_get", map[string]any{"id": "health.allergies", "purpose": "treatment"})
	if !isErr || out["constraint"] != "approval_required" {
		t.Fatalf("read before any request = %v", out)
	}
	// By default the owner keeps every approval: the host is not asked.
	out, _ = call(t, cs, "request_context", map[string]any{"scope": "health.*", "purpose": "first"})
	if out["status"] != "pending" || len(asked) != 0 {
		t.Fatalf("request_context with elicited approvals off = %v, asked %d times; want pending, not asked", out, len(asked))
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"elicited_approvals": true}, nil)
	out, isErr = call(t, cs, "request_context", map[string]any{"scope": "health.*", "purpose": "treatment"})
	if isErr || out["status"] != "approved" {
		t.Fatalf("request_context with elicitation = %v (error %v)", out, isErr)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], `"care"`) || !strings.Contains(asked[0], `"treatment"`) {
		t.Fatalf("the person was asked %q", asked)
	}
	out, isErr = call(t, cs, "context_get", map[string]any{"id": "health.allergies", "purpose": "treatment"})
	if isErr || out["value"] != "peanuts" {
		t.Fatalf("read after the person approved = %v", out)
	}
	// Critical: told in the host, never approved there (the answer that
	// would approve approves nothing); pending for the owner.
	out, _ = call(t, cs, "request_context", map[string]any{"scope": "identity.ssn", "purpose": "treatment"})
	if out["status"] != "pending" || len(asked) != 2 || !strings.Contains(asked[1], "password") {
		t.Fatalf("a critical request = %v, asked %q; want pending, the person told of the password", out, asked)
	}

	// A host without elicitation: pending, then the owner approves.
	ns, err := mcpSession(t, h, clinic)
	if err != nil {
		t.Fatal(err)
	}
	out, isErr = call(t, ns, "request_context", map[string]any{"scope": "health.*", "purpose": "treatment"})
	if isErr || out["status"] != "pending" {
		t.Fatalf("request_context without elicitation = %v", out)
	}
	id := out["request_id"].(string)
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"approve", id}); code != 0 {
		t.Fatalf("phc approve %s = %d\n%s", id, code, errb.String())
	}
	out, isErr = call(t, ns, "request_context", map[string]any{"request_id": id})
	if isErr || out["status"] != "approved" || out["token"] != nil {
		t.Fatalf("request_context {request_id} after approval = %v", out)
	}
	out, isErr = call(t, ns, "context_get", map[string]any{"id": "health.allergies", "purpose": "treatment"})
	if isErr || out["value"] != "peanuts" {
		t.Fatalf("read after the owner approved = %v", out)
	}
}
