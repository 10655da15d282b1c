package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// buildBinary builds phc for the tests that run it as a host does.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "phc")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "../../cmd/phc")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestMCPHostSurvivesOverStdio: the built phc mcp, started by the Go SDK's
// client as a host starts it, starts while the vault is locked and keeps
// the host's session through the unlock, a lock, a 2 MB argument and the
// token's expiry, which it explains on standard error.
func TestMCPHostSurvivesOverStdio(t *testing.T) {
	bin := buildBinary(t)
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
