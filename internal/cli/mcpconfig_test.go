package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPConfig checks phc mcp-config for every host: a config that starts
// this phc by its absolute path with a token that works, a year long once
// the owner allows it (else clamped to 30 days, saying so).
func TestMCPConfig(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	h.grant("tutor", "learning", "read", map[string]any{"keys": []string{"learning.*"}})
	bin := filepath.Join(t.TempDir(), "phc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host, servers string
		typed         bool
	}{{"claude-desktop", "mcpServers", false}, {"claude-code", "mcpServers", true}, {"cursor", "mcpServers", false}, {"vscode", "servers", true}} {
		code, out, errs := h.phc("mcp-config", "--consumer", "tutor", "--secret", "tutor-secret-0123456789", "--host", tc.host, "--bin", bin)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tc.host, code, errs)
		}
		var cfg map[string]map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		if err := json.Unmarshal([]byte(out), &cfg); err != nil {
			t.Fatalf("%s: %q: %v", tc.host, out, err)
		}
		s, ok := cfg[tc.servers]["phc"]
		if !ok || s.Command != bin || len(s.Args) != 1 || s.Args[0] != "mcp" || s.Env["PHC_HOME"] != h.dir || (s.Type == "stdio") != tc.typed {
			t.Errorf("%s: config %s", tc.host, out)
		}
		h.must(200, "GET", "/context/fields", s.Env["PHC_TOKEN"], nil, nil)
		if !strings.Contains(errs, "30 days") || !strings.Contains(errs, "run this command again") {
			t.Errorf("%s: stderr %s", tc.host, errs)
		}
	}

	// Once the owner allows long-lived tokens, the token lasts a year.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]bool{"long_lived_tokens": true}, nil)
	_, out, errs := h.phc("mcp-config", "--consumer", "tutor", "--secret", "tutor-secret-0123456789", "--bin", bin)
	var cfg struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	json.Unmarshal([]byte(out), &cfg)
	var list struct {
		Tokens []struct {
			Prefix    string    `json:"prefix"`
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"tokens"`
	}
	h.must(200, "GET", "/context/tokens/service", h.owner, nil, &list)
	tok := cfg.MCPServers["phc"].Env["PHC_TOKEN"]
	found := false
	for _, l := range list.Tokens {
		if strings.HasPrefix(tok, l.Prefix) && time.Until(l.ExpiresAt) > 300*24*time.Hour {
			found = true
		}
	}
	if !found || strings.Contains(errs, "30 days") {
		t.Errorf("with long_lived_tokens the token does not last a year: %s %s", out, errs)
	}

	// Run from a temporary build (go test's, as go run's), it refuses and
	// says to go install.
	if code, _, errs := h.phc("mcp-config", "--consumer", "tutor", "--secret", "tutor-secret-0123456789"); code != 1 || !strings.Contains(errs, "go install ./cmd/phc") {
		t.Errorf("from a temporary build: exit %d %s", code, errs)
	}
	if code, _, errs := h.phc("mcp-config", "--consumer", "tutor", "--secret", "x", "--host", "emacs", "--bin", bin); code != 2 || !strings.Contains(errs, "claude-desktop, claude-code, cursor, vscode") {
		t.Errorf("unknown host: exit %d %s", code, errs)
	}
}

// TestMCPConfigPurpose: with no --purpose, phc mcp-config never writes a
// config whose token reads nothing. An app without a read grant is refused;
// with one grant purpose the token is bound to it; with several, a terminal
// asks which, and anywhere else the command refuses, listing them.
func TestMCPConfigPurpose(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	bin := filepath.Join(t.TempDir(), "phc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"mcp-config", "--consumer", "tutor", "--secret", "tutor-secret-0123456789", "--bin", bin}
	// boundTo asserts that the config's token reads under want and no
	// other purpose, as an app reading with it would find.
	boundTo := func(out, want, other string) {
		t.Helper()
		var cfg struct {
			MCPServers map[string]struct {
				Env map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(out), &cfg); err != nil {
			t.Fatalf("config %q: %v", out, err)
		}
		tok := cfg.MCPServers["phc"].Env["PHC_TOKEN"]
		h.must(200, "GET", "/phc/v1/context?purpose="+want, tok, nil, nil)
		h.must(200, "GET", "/phc/v1/context", tok, nil, nil)
		h.constraint(403, "scope_exceeded", "GET", "/phc/v1/context?purpose="+other, tok, nil)
	}

	if code, out, errs := h.phc(args...); code == 0 || out != "" || !strings.Contains(errs, "tutor has no live read grant") || !strings.Contains(errs, "phc grant --to tutor") {
		t.Errorf("no grant: exit %d, printed %q, %s; want a refusal saying how to grant", code, out, errs)
	}

	h.grant("tutor", "learning", "read", map[string]any{"keys": []string{"learning.*"}})
	code, out, errs := h.phc(args...)
	if code != 0 || !strings.Contains(errs, `"learning"`) {
		t.Fatalf("one grant: exit %d %s", code, errs)
	}
	boundTo(out, "learning", "homework")

	h.grant("tutor", "homework", "read", map[string]any{"keys": []string{"learning.*"}})
	if code, out, errs := h.phc(args...); code != 2 || out != "" || !strings.Contains(errs, `"learning", "homework"`) || !strings.Contains(errs, "--purpose") {
		t.Errorf("two grants, no terminal: exit %d, printed %q, %s; want a refusal listing both", code, out, errs)
	}

	// On a terminal it asks.
	env, stdout, stderr := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	env.IsTerminal = func() bool { return true }
	env.Stdin = strings.NewReader("2\n")
	if code := Run(t.Context(), env, args); code != 0 || !strings.Contains(stderr.String(), `2) "homework"`) {
		t.Fatalf("two grants, a terminal: exit %d %s", code, stderr)
	}
	boundTo(stdout.String(), "homework", "learning")

	// --purpose is taken as given.
	code, out, errs = h.phc(append(args, "--purpose", "learning")...)
	if code != 0 {
		t.Fatalf("--purpose learning: exit %d %s", code, errs)
	}
	boundTo(out, "learning", "homework")
}
