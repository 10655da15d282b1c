package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/internal/mcpserver"
)

// visaScope and visaPurpose are PCP §9's example of a scoped context
// request over MCP.
var (
	visaScope   = []any{"identity.full_name", "addresses.current", "identity.dob"}
	visaPurpose = "Fill Australian visa application"
)

// visaFields writes the fields of PCP §9's example, as the owner.
func visaFields(h *harness) {
	h.t.Helper()
	h.must(200, "PUT", "/context/fields/identity.full_name", h.owner, map[string]any{"value": "Ada Lovelace"}, nil)
	h.must(200, "PUT", "/context/fields/identity.dob", h.owner, map[string]any{"value": "1815-12-10"}, nil)
	h.must(200, "PUT", "/context/fields/addresses.current", h.owner, map[string]any{"value": map[string]any{"city": "London"}}, nil)
}

// elicitingSession connects the Go SDK's client, as a host that supports
// elicitation and answers every one with answer, to the daemon's /mcp
// with token; asked returns the messages it was asked so far.
func elicitingSession(t *testing.T, h *harness, token string, answer func() *mcp.ElicitResult) (cs *mcp.ClientSession, asked func() []string) {
	t.Helper()
	var mu sync.Mutex
	var msgs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "host-with-elicitation", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			msgs = append(msgs, req.Params.Message)
			mu.Unlock()
			return answer(), nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.base + "/mcp",
		HTTPClient: &http.Client{Timeout: time.Minute, Transport: mcpserver.BearerTransport{Token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(msgs)
	}
}

// fieldValues maps the id of each field of a request_context answer to its
// value.
func fieldValues(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	fs, ok := out["fields"].([]any)
	if !ok {
		t.Fatalf("request_context answer without fields: %v", out)
	}
	m := map[string]any{}
	for _, f := range fs {
		f := f.(map[string]any)
		m[f["id"].(string)] = f["value"]
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestMCPRequestContextWithoutElicitation: PCP §9's request over MCP, from a
// host that cannot ask the person. The public and standard values (under
// the PCP-compatible auto_grant standard) come at once; the sensitive ones
// wait in a pending request whose answer says what to do, and the poll the
// answer names returns them once the owner approved.
func TestMCPRequestContextWithoutElicitation(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	visaFields(h)
	h.must(200, "PUT", "/context/fields/identity.preferred_name", h.owner, map[string]any{"value": "Ada", "sensitivity": "public"}, nil)
	tok := h.consumer("visa", "*", "read") // minted without a purpose
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}

	out, isErr := call(t, cs, "request_context", map[string]any{"scope": visaScope, "purpose": visaPurpose})
	if isErr || out["status"] != "pending" || out["token"] != nil {
		t.Fatalf("request_context (PCP §9's example) = %v; want pending, no token", out)
	}
	id, _ := out["request_id"].(string)
	got := fieldValues(t, out)
	if !slices.Equal(sortedKeys(got), []string{"identity.full_name"}) || got["identity.full_name"] != "Ada Lovelace" {
		t.Fatalf("values at once = %v; want identity.full_name (standard) alone", got)
	}
	next, _ := out["next"].(string)
	if !strings.Contains(next, `{"request_id": "`+id+`"}`) || !strings.Contains(next, "phc approve "+id) {
		t.Fatalf("next = %q; want the poll to make and how the person approves", next)
	}

	// The step next names, before the approval: still pending, the same
	// values.
	out, isErr = call(t, cs, "request_context", map[string]any{"request_id": id})
	if isErr || out["status"] != "pending" || len(fieldValues(t, out)) != 1 {
		t.Fatalf("request_context {request_id} while pending = %v", out)
	}
	// A token whose scope does not reach the request: next says so, and
	// how the app gets one that does.
	narrow := h.token("visa", "secret-of-visa-0123456789", "identity.*", "read")
	ns, err := mcpSession(t, h, narrow)
	if err != nil {
		t.Fatal(err)
	}
	nout, isErr := call(t, ns, "request_context", map[string]any{"scope": visaScope, "purpose": visaPurpose})
	if next, _ := nout["next"].(string); isErr || !strings.Contains(next, "does not reach addresses.current") ||
		!strings.Contains(next, "GET /context/requests/"+nout["request_id"].(string)) {
		t.Fatalf("request_context with a token that does not reach the scope = %v", nout)
	}

	h.must(200, "POST", "/context/requests/"+id+"/approve", h.owner, nil, nil)
	out, isErr = call(t, cs, "request_context", map[string]any{"request_id": id})
	if isErr || out["status"] != "approved" || out["token"] != nil {
		t.Fatalf("request_context {request_id} after approval = %v", out)
	}
	got = fieldValues(t, out)
	if !slices.Equal(sortedKeys(got), []string{"addresses.current", "identity.dob", "identity.full_name"}) ||
		got["identity.dob"] != "1815-12-10" || got["addresses.current"].(map[string]any)["city"] != "London" {
		t.Fatalf("values after approval = %v; want the request's three fields", got)
	}
}

// TestMCPRequestContextHiddenLooksAbsent: under the default policy (public
// at once), a scope's answer is the same whether a field the app may not
// read exists in it or not; the public field comes at once.
func TestMCPRequestContextHiddenLooksAbsent(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/health.blood_type", h.owner, map[string]any{"value": "O+", "sensitivity": "public"}, nil)
	tok := h.consumer("care", "*", "read")
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	ask := func() string {
		t.Helper()
		out, isErr := call(t, cs, "request_context", map[string]any{"scope": "health.*", "purpose": "care"})
		if isErr || out["status"] != "pending" {
			t.Fatalf("request_context health.* = %v; want pending", out)
		}
		if got := fieldValues(t, out); !slices.Equal(sortedKeys(got), []string{"health.blood_type"}) {
			t.Fatalf("values at once = %v; want the public health.blood_type alone", got)
		}
		id := out["request_id"].(string)
		delete(out, "revision")
		raw, _ := json.Marshal(out)
		return strings.ReplaceAll(string(raw), id, "REQ")
	}
	absent := ask()
	h.must(200, "PUT", "/context/fields/health.condition", h.owner, map[string]any{"value": "asthma"}, nil)
	if hidden := ask(); hidden != absent {
		t.Fatalf("with a hidden field in scope:\n%s\nwithout:\n%s", hidden, absent)
	}
}

// TestMCPRequestContextWithElicitation: PCP §9's request from a host that
// asks the person (elicited approvals allowed): they approve, and the
// same answer carries every value. A refusal is recorded, and said;
// critical data is put to the host only to say how the person approves
// it (in phc, with the password) and to let them refuse it; a token bound
// to another purpose is told how the app reads what was approved.
func TestMCPRequestContextWithElicitation(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	visaFields(h)
	h.must(200, "PUT", "/context/fields/identity.passport_number", h.owner, map[string]any{"value": "PA1234567"}, nil)
	h.must(200, "PUT", "/context/fields/financial.income", h.owner, map[string]any{"value": 52000}, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"elicited_approvals": true}, nil)
	tok := h.consumer("visa", "*", "read")
	var mu sync.Mutex
	action := "accept"
	cs, asked := elicitingSession(t, h, tok, func() *mcp.ElicitResult {
		mu.Lock()
		defer mu.Unlock()
		if action == "accept" {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}
		return &mcp.ElicitResult{Action: action}
	})

	out, isErr := call(t, cs, "request_context", map[string]any{"scope": visaScope, "purpose": visaPurpose})
	if isErr || out["status"] != "approved" {
		t.Fatalf("request_context (PCP §9's example), approved in the host = %v", out)
	}
	if a := asked(); len(a) != 1 || !strings.Contains(a[0], `"visa"`) || !strings.Contains(a[0], `"`+visaPurpose+`"`) {
		t.Fatalf("the person was asked %q; want once, naming the app and the purpose", a)
	}
	got := fieldValues(t, out)
	if !slices.Equal(sortedKeys(got), []string{"addresses.current", "identity.dob", "identity.full_name"}) ||
		got["identity.dob"] != "1815-12-10" || got["identity.full_name"] != "Ada Lovelace" {
		t.Fatalf("values in the approved answer = %v; want the three fields", got)
	}

	// Critical: put to the person in the host only to tell them how they
	// approve it (in phc, with the password) and to let them refuse: an
	// answer that would approve approves nothing; the answer says how the
	// person approves it, and the poll it names.
	out, isErr = call(t, cs, "request_context", map[string]any{"scope": "identity.passport_number", "purpose": visaPurpose})
	next, _ := out["next"].(string)
	if isErr || out["status"] != "pending" || len(fieldValues(t, out)) != 0 || len(asked()) != 2 ||
		!strings.Contains(next, "password") || !strings.Contains(next, out["request_id"].(string)) {
		t.Fatalf("a critical request = %v, asked %d times; want pending, nothing read, asked once more, next naming the password", out, len(asked()))
	}
	if told := asked()[1]; !strings.Contains(told, `"visa"`) || !strings.Contains(told, "critical") ||
		!strings.Contains(told, "password") || !strings.Contains(told, "phc approve "+out["request_id"].(string)) {
		t.Fatalf("for critical data the person was told %q; want the app, critical, the password and phc approve with the request id", told)
	}
	// The person refuses critical data in the host: denied.
	mu.Lock()
	action = "decline"
	mu.Unlock()
	out, isErr = call(t, cs, "request_context", map[string]any{"scope": "identity.passport_number", "purpose": "passport renewal"})
	if isErr || out["status"] != "denied" || len(fieldValues(t, out)) != 0 || len(asked()) != 3 {
		t.Fatalf("a critical request refused in the host = %v, asked %d times; want denied, nothing read", out, len(asked()))
	}

	// The person refuses in the host: denied, and said so.
	mu.Lock()
	action = "decline"
	mu.Unlock()
	out, isErr = call(t, cs, "request_context", map[string]any{"scope": "financial.income", "purpose": "loan"})
	next, _ = out["next"].(string)
	if isErr || out["status"] != "denied" || len(fieldValues(t, out)) != 0 || !strings.Contains(next, "refused") {
		t.Fatalf("a refused request = %v; want denied, nothing read, next saying so", out)
	}

	// The person closes the question: still pending, and said how to go on.
	mu.Lock()
	action = "cancel"
	mu.Unlock()
	out, isErr = call(t, cs, "request_context", map[string]any{"scope": "financial.income", "purpose": "budget"})
	next, _ = out["next"].(string)
	if isErr || out["status"] != "pending" || !strings.Contains(next, "did not approve it here") ||
		!strings.Contains(next, "phc approve "+out["request_id"].(string)) {
		t.Fatalf("a request the person left open = %v; want pending, next saying how it is approved", out)
	}

	// A token bound to another purpose: approved in the host, read with
	// another token, which next says how the app gets.
	mu.Lock()
	action = "accept"
	mu.Unlock()
	bound := h.tokenFor("visa", "secret-of-visa-0123456789", "*", "read", "travel")
	bs, _ := elicitingSession(t, h, bound, func() *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	})
	out, isErr = call(t, bs, "request_context", map[string]any{"scope": "financial.income", "purpose": "mortgage"})
	next, _ = out["next"].(string)
	if isErr || out["status"] != "approved" || len(fieldValues(t, out)) != 0 ||
		!strings.Contains(next, `"travel"`) || !strings.Contains(next, "GET /context/requests/"+out["request_id"].(string)) {
		t.Fatalf("request_context with a token bound to another purpose = %v; want approved, nothing read, next naming the route", out)
	}
}

// TestMCPArgumentViolations: arguments the tools' schemas cannot fully say
// — request_context's scope and duration, context_set's and context_get's
// id, context_set's value, context_search's query — fail with each violation's path and keyword,
// as every other argument does.
func TestMCPArgumentViolations(t *testing.T) {
	t.Parallel()
	h, _, tok := hostFixture(t)
	cs, err := mcpSession(t, h, tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool          string
		args          string
		path, keyword string
	}{
		{"request_context", `{"scope": 5}`, "/scope", "type"}, // the issue's own example
		{"request_context", `{"scope": 5}`, "/purpose", "required"},
		{"request_context", `{"scope": 5, "purpose": "learning"}`, "/scope", "type"},
		{"request_context", `{"scope": null, "purpose": "learning"}`, "/scope", "type"},
		{"request_context", `{"scope": [5], "purpose": "learning"}`, "/scope/0", "type"},
		{"request_context", `{"scope": ["learning.*", "a,b"], "purpose": "learning"}`, "/scope/1", "pattern"},
		{"request_context", `{"scope": [], "purpose": "learning"}`, "/scope", "minItems"},
		{"request_context", `{"scope": "Learning.*", "purpose": "learning"}`, "/scope", "pattern"},
		{"request_context", `{"scope": " , ", "purpose": "learning"}`, "/scope", "minLength"},
		{"request_context", `{"scope": "learning.*", "purpose": "learning", "duration": true}`, "/duration", "type"},
		{"request_context", `{"scope": "learning.*", "purpose": "learning", "duration": 1.5}`, "/duration", "type"},
		{"request_context", `{"scope": "learning.*", "purpose": "learning", "duration": "forever"}`, "/duration", "format"},
		{"request_context", `{"scope": "learning.*", "purpose": "learning", "duration": 10}`, "/duration", "minimum"},
		{"request_context", `{"scope": "learning.*", "purpose": "learning", "duration": "90 days"}`, "/duration", "maximum"},
		{"context_set", `{"id": "learning.x", "value": null}`, "/value", "type"},
		{"context_set", `{"id": "learning", "value": "B1"}`, "/id", "pattern"},
		{"context_get", `{"id": "learning"}`, "/id", "pattern"}, // a field is category.field_name (PCP §2)
		{"context_search", `{"query": "   "}`, "/query", "minLength"},
		{"context_search", `{"query": "a\u0007b"}`, "/query", "pattern"},
		{"context_search", `{"query": "` + strings.Repeat("é", 200) + `"}`, "/query", "maxLength"},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		out, isErr := call(t, cs, c.tool, args)
		vs, _ := out["violations"].([]any)
		found := false
		for _, v := range vs {
			v := v.(map[string]any)
			found = found || (v["path"] == c.path && v["keyword"] == c.keyword)
		}
		if !isErr || out["constraint"] != "invalid_request" || !found {
			t.Errorf("%s %s = %v; want invalid_request with a violation at %s (%s)", c.tool, c.args, out, c.path, c.keyword)
		}
	}
	// What the schema allows still passes: a scope as text or as an array,
	// a duration as seconds or text.
	for _, args := range []map[string]any{
		{"scope": "learning.*, learning.level", "purpose": "learning", "duration": "30 minutes"},
		{"scope": []any{"learning.*"}, "purpose": "learning", "duration": 3600},
	} {
		if out, isErr := call(t, cs, "request_context", args); isErr {
			t.Errorf("request_context %v = %v", args, out)
		}
	}
}

// TestMCPToolsSayWhatUnboundTokensSee: every tool that reads says, in the
// description a host shows the model, what a token minted without a
// purpose sees and what to do next.
func TestMCPToolsSayWhatUnboundTokensSee(t *testing.T) {
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
	seen := 0
	for _, tool := range tools.Tools {
		switch tool.Name {
		case "context_get", "context_list", "context_context", "context_search":
			seen++
			d := tool.Description
			for _, want := range []string{"minted without a purpose", "shares with every app", "pass purpose", "purpose_required", "call again with one of them"} {
				if !strings.Contains(d, want) {
					t.Errorf("%s: description %q does not say %q", tool.Name, d, want)
				}
			}
			raw, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(raw), "A token minted without one: pass it") {
				t.Errorf("%s: the purpose argument does not say what an unbound token does: %s", tool.Name, raw)
			}
		case "request_context":
			seen++
			if !strings.Contains(tool.Description, "get at once") || !strings.Contains(tool.Description, "only request_id") {
				t.Errorf("request_context: description %q does not say what comes at once and how to poll", tool.Description)
			}
		}
	}
	if seen != 5 {
		t.Fatalf("tools/list had %d of the five reading tools", seen)
	}
}

// TestMCPRequestContextOverStdio: phc mcp as a process, started by a host that
// asks the person, relays the elicitation both ways: approved in the host,
// the sensitive values come in the same answer.
func TestMCPRequestContextOverStdio(t *testing.T) {
	t.Parallel()
	bin := phcBinary(t)
	h := startHarness(t, "")
	visaFields(h)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"elicited_approvals": true}, nil)
	tok := h.consumer("visa", "*", "read")
	cmd := exec.Command(bin, "mcp", "--data", h.dir)
	cmd.Env = append(os.Environ(), "PHC_TOKEN="+tok)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	var asked atomic.Int32
	mc := mcp.NewClient(&mcp.Implementation{Name: "stdio-host-with-elicitation", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	cs, err := mc.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("phc mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	out, isErr := call(t, cs, "request_context", map[string]any{"scope": visaScope, "purpose": visaPurpose})
	if isErr || out["status"] != "approved" || asked.Load() != 1 {
		t.Fatalf("request_context over stdio = %v, asked %d times; want approved, asked once\n%s", out, asked.Load(), stderr.String())
	}
	if got := fieldValues(t, out); len(got) != 3 || got["identity.dob"] != "1815-12-10" {
		t.Fatalf("values over stdio = %v; want the three fields", got)
	}
}
