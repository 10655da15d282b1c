//go:build slow

package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/clientvault"
	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// TestReferenceModeEndToEnd is docs/formats/reference.md from end to end, with the
// official TypeScript MCP client: an app reads identity.passport_number
// under a grant with disclosure: reference, and every MCP message of its
// session (logged by the client, both ways) holds the reference and never
// the value; the reader's MCP client shows its local vault's kid, which
// the owner activates; then a simulated Write tool call holding the
// reference goes through phc hook resolve, and the written file holds the
// real value. K is in no file but its key file: not in the daemon's log,
// the message log, the data dir or the hook's answers.
func TestReferenceModeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped in -short mode")
	}
	node := tsClient(t)
	bin := daemontest.BuildPHC(t)
	dir := filepath.Join(t.TempDir(), "data")
	client := &http.Client{Timeout: time.Minute}
	d := startPHC(t, bin, dir, "ref")
	const value = "X1234589"
	d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]any{"local_vaults": true}, nil)
	d.must(t, client, 200, "PUT", "/context/fields/identity.passport_number", d.owner, map[string]any{"value": value}, nil)
	d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner, map[string]string{"name": "app", "secret": "secret-of-app-0123456789"}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "app",
		"secret": "secret-of-app-0123456789", "scope": "identity.*", "mode": "read"}, &tok)
	// The app asks for the passport number as a reference; the owner
	// approves it, re-entering the password (critical data).
	var req struct {
		ID    string `json:"request_id"`
		Token string `json:"token"`
	}
	d.must(t, client, 202, "POST", "/context/requests", tok.Token, map[string]any{"scope": "identity.passport_number",
		"purpose": "travel booking", "usage": "multi", "duration": "1h", "disclosure": "reference"}, &req)
	d.must(t, client, 200, "POST", "/context/requests/"+req.ID+"/approve", d.owner, map[string]string{"password": daemonPassword}, nil)
	d.must(t, client, 200, "GET", "/context/requests/"+req.ID, tok.Token, nil, &req)
	var grants struct {
		Grants []struct {
			Disclosure string `json:"disclosure"`
		} `json:"grants"`
	}
	d.must(t, client, 200, "GET", "/phc/v1/grants", d.owner, nil, &grants)
	if len(grants.Grants) != 1 || grants.Grants[0].Disclosure != "reference" {
		t.Fatalf("grants = %+v; want one with disclosure reference", grants)
	}

	// The reader profile's key: made on first use, and its header.
	server := d.base + "/mcp"
	hook := func(stdin []byte, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(append([]string{"hook"}, args...), "--data", dir, "--server", server, "--profile", "travel")...)
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Logf("phc hook %v: %v\n%s", args, err, stderr.String())
		}
		return append(out, stderr.Bytes()...), err
	}
	hdr, err := hook(nil, "header")
	if err != nil {
		t.Fatal(err)
	}
	header := strings.TrimSpace(strings.TrimPrefix(string(hdr), "Client-Vault:"))
	origin, _ := clientvault.Origin(server)
	keyPath := clientvault.KeyPath(dir, origin, "travel")
	if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v; want mode 0600", keyPath, fi, err)
	}
	k, _, err := clientvault.LoadKey(dir, origin, "travel")
	if err != nil || header != clientvault.Header(k) {
		t.Fatalf("phc hook header = %q; want %q (%v)", header, clientvault.Header(k), err)
	}

	// The MCP session, every message logged.
	calls := []map[string]any{
		{"name": "context_get", "arguments": map[string]any{"id": "identity.passport_number", "purpose": "travel booking"}},
		{"name": "context_context", "arguments": map[string]any{"purpose": "travel booking"}},
		{"name": "context_search", "arguments": map[string]any{"query": "passport", "purpose": "travel booking"}},
	}
	raw, _ := json.Marshal(calls)
	callsFile := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(callsFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	msgLog := filepath.Join(t.TempDir(), "messages.jsonl")
	cmd := exec.Command(node, "client.mjs", "http", server, req.Token, callsFile)
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "ONLY_CALLS=1", "LOG_MESSAGES="+msgLog, "CLIENT_VAULT="+header)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var run tsRun
	if jerr := json.Unmarshal(out, &run); jerr != nil || err != nil || run.Error != "" || len(run.Calls) != len(calls) {
		t.Fatalf("the TypeScript client failed: %v %v\n%s", err, jerr, out)
	}
	ref, _ := run.Calls[0].Structured["value"].(string)
	if ref != "⟦PASSPORT_1:X1•••89⟧" {
		t.Fatalf("context_get value = %q; want the reference ⟦PASSPORT_1:X1•••89⟧", ref)
	}
	msgs, err := os.ReadFile(msgLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(msgs, []byte("\n")); n < 2*(len(calls)+2) {
		t.Fatalf("%d messages logged; want every request and answer of the session", n)
	}
	if bytes.Contains(msgs, []byte(value)) {
		t.Fatalf("an MCP message holds the value:\n%s", msgs)
	}
	if c := bytes.Count(msgs, []byte(ref)); c < 3 {
		t.Fatalf("the reference appears %d times in the session; want it in each read (structured and text)", c)
	}

	// The kid the client showed waits for the owner.
	listing := func() string {
		out, err := exec.Command(bin, "vault-keys", "--data", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("phc vault-keys: %v\n%s", err, out)
		}
		return string(out)
	}
	if l := listing(); !strings.Contains(l, clientvault.Kid(k)) || !strings.Contains(l, "pending") || !strings.Contains(l, "reader app") {
		t.Fatalf("phc vault-keys = %q", l)
	}
	write := func(content string) []byte {
		ev, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Write",
			"tool_input": map[string]any{"file_path": filepath.Join(t.TempDir(), "form.txt"), "content": content}})
		out, _ := hook(ev, "resolve")
		return out
	}
	type decision struct {
		Out struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
			Input    struct {
				Path    string `json:"file_path"`
				Content string `json:"content"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	var dec decision
	answers := write("Passport: " + ref + "\n")
	if json.Unmarshal(answers, &dec) != nil || dec.Out.Decision != "deny" || !strings.Contains(dec.Out.Reason, "pending") {
		t.Fatalf("hook resolve before activation = %s; want deny naming pending", answers)
	}
	if out, err := exec.Command(bin, "vault-keys", "activate", clientvault.Kid(k), "--data", dir).CombinedOutput(); err != nil {
		t.Fatalf("phc vault-keys activate: %v\n%s", err, out)
	}

	// The simulated Write: the hook replaces the reference, the tool writes.
	dec = decision{}
	answer := write("Passport: " + ref + "\n")
	answers = append(answers, answer...)
	if err := json.Unmarshal(answer, &dec); err != nil || dec.Out.Decision != "ask" || dec.Out.Input.Content != "Passport: "+value+"\n" {
		t.Fatalf("hook resolve = %s (%v)", answer, err)
	}
	if strings.Contains(dec.Out.Reason, value) {
		t.Fatalf("the hook's reason, which the model may read, holds the value: %q", dec.Out.Reason)
	}
	if err := os.WriteFile(dec.Out.Input.Path, []byte(dec.Out.Input.Content), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dec.Out.Input.Path); string(got) != "Passport: X1234589\n" {
		t.Fatalf("the written file holds %q", got)
	}

	// Any bad reference denies the whole call, naming the key and status.
	dec = decision{}
	answer = write("Passport: " + ref + ", old: ⟦PASSPORT_7:X1•••89⟧")
	answers = append(answers, answer...)
	if json.Unmarshal(answer, &dec) != nil || dec.Out.Decision != "deny" || !strings.Contains(dec.Out.Reason, "PASSPORT_7") ||
		!strings.Contains(dec.Out.Reason, "unknown_ref") || dec.Out.Input.Content != "" {
		t.Fatalf("hook resolve with an unknown reference = %s; want deny naming PASSPORT_7 and unknown_ref", answer)
	}

	// The stdio bridge with --vault shows the same kid: still one binding.
	cmd = exec.Command(node, "client.mjs", "stdio", bin, "mcp", "--data", dir, "--vault", "travel", "--", callsFile)
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "ONLY_CALLS=1", "PHC_TOKEN="+req.Token, "LOG_MESSAGES="+msgLog)
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("stdio client: %v\n%s", err, out)
	}
	if l := listing(); strings.Count(l, "vk_") != 1 || !strings.Contains(l, "active") {
		t.Fatalf("phc vault-keys after the stdio session = %q; want the one binding, active", l)
	}
	msgs, _ = os.ReadFile(msgLog)
	if bytes.Contains(msgs, []byte(value)) {
		t.Fatal("an MCP message of the stdio session holds the value")
	}

	// K is in its key file and nowhere else.
	forms := [][]byte{k, []byte(clientvault.Bearer(k))}
	check := func(name string, data []byte) {
		for _, f := range forms {
			if bytes.Contains(data, f) {
				t.Errorf("%s holds K", name)
			}
		}
	}
	check("the message log", msgs)
	check("the hook's answers", answers)
	check("the daemon's log", []byte(d.log()))
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || path == keyPath {
			return err
		}
		data, err := os.ReadFile(path)
		check(path, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
