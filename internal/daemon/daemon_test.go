package daemon

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/vault"
)

const testPassword = "daemon test password, not a secret"

// TestOpen opens a data dir as phc serve does and as an offline command
// does: the service has every part the daemon runs with, only the daemon
// keeps a session file, and the handler serves the API and MCP metadata.
func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "phc")
	sk, err := vault.Create(dir, []byte(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	for _, offline := range []bool{false, true} {
		c, err := Open(Options{Dir: dir, IdleLock: -1, Offline: offline})
		if err != nil {
			t.Fatalf("Open(offline %v) = %v", offline, err)
		}
		cfg := c.config(Options{Dir: dir, Offline: offline}, nil)
		if cfg.OIDC == nil || cfg.DEC == nil || cfg.Cards == nil || cfg.VerifyPassword == nil {
			t.Errorf("offline %v: config lacks a part: OIDC %v, DEC %v, Cards %v, VerifyPassword %v",
				offline, cfg.OIDC != nil, cfg.DEC != nil, cfg.Cards != nil, cfg.VerifyPassword != nil)
		}
		if err := cfg.VerifyPassword([]byte(testPassword)); err != nil {
			t.Errorf("VerifyPassword(the password) = %v", err)
		}
		if err := cfg.VerifyPassword([]byte("wrong")); err == nil {
			t.Errorf("VerifyPassword(wrong) = nil")
		}
		token, err := c.Svc.Unlock(t.Context(), []byte(testPassword), sk)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, SessionFile))
		if offline && err == nil {
			t.Errorf("an offline open wrote a session file")
		}
		if !offline && strings.TrimSpace(string(raw)) != token {
			t.Errorf("session file = %q, %v; want the session", raw, err)
		}
		srv := httptest.NewServer(c.Handler("http://127.0.0.1"))
		for _, path := range []string{"/context/status", "/.well-known/oauth-protected-resource/mcp"} {
			resp, err := http.Get(srv.URL + path)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s = %v, %v; want 200", path, resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}
		srv.Close()
		if err := c.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, SessionFile)); !os.IsNotExist(err) {
			t.Errorf("offline %v: session file after Close: %v; want none", offline, err)
		}
	}
}
