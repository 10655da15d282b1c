//go:build slow

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// tsClientDir holds the official TypeScript MCP client (npm) and the script
// the tests drive it with.
const tsClientDir = "../../internal/mcpserver/testdata/tsclient"

// tsClient makes sure the TypeScript SDK is installed (npm ci, as .ci/run
// does) and returns the node binary. Without node or npm the test is
// skipped — except under CI, where that is a failure.
func tsClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed; .ci/run should have installed it")
		}
		t.Skip("node is not installed: the TypeScript client tests need it")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("npm is not installed; .ci/run should have installed it")
			}
			t.Skip("npm is not installed: the TypeScript client tests need it")
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = tsClientDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", tsClientDir, err, out)
		}
	}
	return node
}

type tsRun struct {
	Tools []string `json:"tools"`
	Calls []struct {
		Name       string         `json:"name"`
		IsError    bool           `json:"isError"`
		Structured map[string]any `json:"structured"`
		Thrown     string         `json:"thrown"`
	} `json:"calls"`
	Resources []string `json:"resources"`
	Prompts   []string `json:"prompts"`
	Prompt    int      `json:"prompt"`
	Elicited  []string `json:"elicited"`
	Error     string   `json:"error"`
}

// TestMCPTypeScriptClient drives the daemon's MCP server with the official
// TypeScript SDK's client, over streamable HTTP and over stdio (the built
// `phc mcp`): it accepts tools/list — no boolean schema anywhere — and
// every tool's structured output against the tool's output schema.
func TestMCPTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped in -short mode")
	}
	node := tsClient(t)
	bin := daemontest.BuildPHC(t)
	dir := filepath.Join(t.TempDir(), "data")
	client := &http.Client{Timeout: time.Minute}
	d := startPHC(t, bin, dir, "ts")
	d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]any{"auto_grant": "standard"}, nil)
	d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner, map[string]string{"name": "app", "secret": "secret-of-app-0123456789"}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "app",
		"secret": "secret-of-app-0123456789", "scope": "*", "mode": "read-write"}, &tok)
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	d.must(t, client, 201, "POST", "/phc/v1/grants", d.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "app"}, "purpose": "learning", "operations": []string{"read", "contribute"},
		"selectors": map[string]any{"keys": []string{"learning.*"}}, "expires_at": tomorrow}, nil)
	var pr struct {
		ID string `json:"proposal_id"`
	}
	d.must(t, client, 201, "POST", "/phc/v1/proposals", d.owner, map[string]any{"key": "learning.goal", "value": map[string]any{"language": "Spanish", "per_week": 2},
		"kind": "goal", "assertion": "reported"}, &pr)
	d.must(t, client, 200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", d.owner, map[string]any{"personas": []string{}}, nil)

	calls := []map[string]any{
		{"name": "context_status", "arguments": map[string]any{}},
		{"name": "context_list", "arguments": map[string]any{"purpose": "learning"}},
		{"name": "context_get", "arguments": map[string]any{"id": "learning.goal", "purpose": "learning"}},
		{"name": "context_context", "arguments": map[string]any{"purpose": "learning"}},
		{"name": "context_set", "arguments": map[string]any{"id": "learning.level", "value": "B1"}},
		{"name": "memory_propose", "arguments": map[string]any{"key": "learning.note", "value": []any{1, "two", nil}, "kind": "note", "assertion": "observed"}},
		{"name": "request_context", "arguments": map[string]any{"scope": "learning.*", "purpose": "learning"}},
		{"name": "context_get", "arguments": map[string]any{"id": "notes.absent", "purpose": "learning"}},
	}
	raw, _ := json.Marshal(calls)
	callsFile := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(callsFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(face string, out []byte, err error) {
		t.Helper()
		var run tsRun
		if jerr := json.Unmarshal(out, &run); jerr != nil || err != nil || run.Error != "" {
			t.Fatalf("%s: the TypeScript client failed: %v %v\n%s", face, err, jerr, out)
		}
		if len(run.Tools) != 10 || len(run.Calls) != len(calls) || len(run.Resources) != 1 || len(run.Prompts) != 3 || run.Prompt != 2 {
			t.Fatalf("%s: %+v", face, run)
		}
		for i, c := range run.Calls {
			wantErr := i == len(calls)-1
			if c.IsError != wantErr {
				t.Errorf("%s: %s isError=%v %v", face, c.Name, c.IsError, c.Structured)
			}
		}
		if v, _ := run.Calls[2].Structured["value"].(map[string]any); v["language"] != "Spanish" {
			t.Errorf("%s: context_get = %v", face, run.Calls[2].Structured)
		}
		if last := run.Calls[len(run.Calls)-1].Structured; last["constraint"] != "not_found" {
			t.Errorf("%s: a hidden field = %v; want not_found", face, last)
		}
		// request_context returns what it grants at once (auto_grant
		// standard: learning.*), checked against its output schema.
		if rc := run.Calls[6].Structured; rc["status"] != "approved" || !tsHasField(rc, "learning.goal") {
			t.Errorf("%s: request_context = %v; want approved with learning.goal's value", face, rc)
		}
	}

	cmd := exec.Command(node, "client.mjs", "http", d.base+"/mcp", tok.Token, callsFile)
	cmd.Dir = tsClientDir
	out, err := cmd.Output()
	check("streamable HTTP", out, err)

	cmd = exec.Command(node, "client.mjs", "stdio", bin, "mcp", "--data", dir, "--", callsFile)
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "PHC_TOKEN="+tok.Token)
	cmd.Stderr = os.Stderr
	out, err = cmd.Output()
	check("stdio", out, err)
	if strings.Contains(string(out), tok.Token) {
		t.Fatal("the token reached the client's output")
	}

	// Sensitive data: the TypeScript client as a host that asks the person
	// (elicited approvals allowed) gets the values in the same answer; as
	// one that cannot, a pending request and the step to take.
	d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]any{"elicited_approvals": true}, nil)
	d.must(t, client, 200, "PUT", "/context/fields/health.allergies", d.owner, map[string]any{"value": "peanuts"}, nil)
	for _, host := range []struct{ elicit, purpose, status string }{{"accept", "treatment", "approved"}, {"", "care", "pending"}} {
		raw, _ := json.Marshal([]map[string]any{{"name": "request_context", "arguments": map[string]any{"scope": "health.*", "purpose": host.purpose}}})
		if err := os.WriteFile(callsFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(node, "client.mjs", "http", d.base+"/mcp", tok.Token, callsFile)
		cmd.Dir = tsClientDir
		cmd.Env = append(os.Environ(), "ONLY_CALLS=1", "ELICIT="+host.elicit)
		out, err := cmd.Output()
		var run tsRun
		if jerr := json.Unmarshal(out, &run); jerr != nil || err != nil || run.Error != "" || len(run.Calls) != 1 {
			t.Fatalf("ELICIT=%q: the TypeScript client failed: %v %v\n%s", host.elicit, err, jerr, out)
		}
		rc := run.Calls[0].Structured
		if run.Calls[0].IsError || rc["status"] != host.status {
			t.Fatalf("ELICIT=%q: request_context = %v (thrown %q); want %s", host.elicit, rc, run.Calls[0].Thrown, host.status)
		}
		switch host.elicit {
		case "accept":
			if len(run.Elicited) != 1 || !tsHasField(rc, "health.allergies") {
				t.Errorf("a host that asks: asked %q, answer %v; want asked once, and health.allergies in the answer", run.Elicited, rc)
			}
		default:
			if next, _ := rc["next"].(string); len(run.Elicited) != 0 || tsHasField(rc, "health.allergies") || !strings.Contains(next, rc["request_id"].(string)) {
				t.Errorf("a host that cannot ask: answer %v; want no value, and next naming the request", rc)
			}
		}
	}
}

// tsHasField reports whether a request_context answer's fields hold id,
// with a value.
func tsHasField(answer map[string]any, id string) bool {
	fs, _ := answer["fields"].([]any)
	for _, f := range fs {
		if f, _ := f.(map[string]any); f["id"] == id && f["value"] != nil {
			return true
		}
	}
	return false
}
