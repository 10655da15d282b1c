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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// TestMCPStdio drives the built `phc mcp` binary as a subprocess with the
// Go SDK's client over stdio, as an MCP host does: it relays to the running
// daemon with the app's token.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := daemontest.BuildPHC(t)
	dir := filepath.Join(t.TempDir(), "data")
	client := &http.Client{Timeout: time.Minute}

	// Without a daemon: a clear error, before any MCP message.
	cmd := exec.Command(bin, "mcp", "--data", dir)
	cmd.Env = append(os.Environ(), "PHC_TOKEN=ctxs_x", "PHC_ADDR=127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot reach the daemon") {
		t.Fatalf("phc mcp without a daemon: %v\n%s", err, out)
	}

	d := startPHC(t, bin, dir, "mcp")
	d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner, map[string]string{"name": "tutor", "secret": "secret-of-tutor-0123456789"}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor",
		"secret": "secret-of-tutor-0123456789", "scope": "learning.*", "mode": "write"}, &tok)
	var rw struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor",
		"secret": "secret-of-tutor-0123456789", "scope": "learning.*", "mode": "read-write"}, &rw)
	d.must(t, client, 201, "POST", "/phc/v1/grants", d.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "tutor"}, "purpose": "learning", "operations": []string{"contribute", "read"},
		"selectors": map[string]any{"keys": []string{"learning.*"}}, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, nil)

	cmd = exec.Command(bin, "mcp", "--data", dir)
	cmd.Env = append(os.Environ(), "PHC_TOKEN="+tok.Token)
	cmd.Stderr = os.Stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := mc.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 10 {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_propose", Arguments: map[string]any{
		"key": "learning.spanish.schedule", "value": "twice a week", "kind": "goal", "assertion": "reported"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_propose over stdio = %+v, %v", res, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), `"status":"proposed"`) {
		t.Fatalf("memory_propose over stdio = %s", raw)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "context_get", Arguments: map[string]any{"id": "learning.spanish.schedule"}})
	if err != nil || !res.IsError {
		t.Fatalf("a write token reads over stdio = %+v, %v", res, err)
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), `"constraint":"mode_denied"`) {
		t.Fatalf("a write token reads over stdio = %s; want mode_denied", raw)
	}
	cs.Close()

	// Every tool, the resources and the prompts, with a read-write token.
	cmd = exec.Command(bin, "mcp", "--data", dir)
	cmd.Env = append(os.Environ(), "PHC_TOKEN="+rw.Token)
	cmd.Stderr = os.Stderr
	cs, err = mc.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"context_status", map[string]any{}, `"locked":false`},
		{"context_set", map[string]any{"id": "learning.level", "value": "B1"}, `"status"`},
		{"context_list", map[string]any{"purpose": "learning"}, `"fields"`},
		{"context_get", map[string]any{"id": "learning.level", "purpose": "learning"}, `"constraint":"not_found"`},
		{"context_context", map[string]any{"purpose": "learning"}, `"categories"`},
		{"memory_propose", map[string]any{"key": "learning.note", "value": map[string]any{"a": 1}, "kind": "note", "assertion": "reported"}, `"status":"proposed"`},
		{"request_context", map[string]any{"scope": "learning.*", "purpose": "learning"}, `"status":"pending"`}, // auto_grant public: standard data waits for the owner
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s over stdio: %v", c.tool, err)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(raw), c.want) {
			t.Errorf("%s over stdio = %s; want %s", c.tool, raw, c.want)
		}
	}
	rt, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(rt.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list over stdio = %+v, %v", rt, err)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "context://learning"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"category":"learning"`) {
		t.Fatalf("resources/read over stdio = %+v, %v", rr, err)
	}
	ps, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(ps.Prompts) != 3 {
		t.Fatalf("prompts/list over stdio = %+v, %v", ps, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "letter-draft"}); err != nil {
		t.Fatalf("prompts/get over stdio: %v", err)
	}
}
