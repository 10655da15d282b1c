package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUnreadableStoredClaimOffline: the offline commands (a stopped
// daemon's data dir) that meet a stored claim that no longer reads back
// fail as internal, naming none of what was stored; the process does not
// crash, and the store's other records still serve.
func TestUnreadableStoredClaimOffline(t *testing.T) {
	h := startHarness(t, "")
	_, claim := graphFixture(h)
	h.stop()
	flipStoredByte(t, filepath.Join(h.dir, storeFile), "claims", claim+"@00000001")
	for _, args := range [][]string{
		{"graph", "export", "--format", "prov-jsonld", "--data", h.dir},
		{"graph", "rebuild", "--data", h.dir},
	} {
		code, out, errs := runCmd(t, args...)
		if code != 1 || !strings.Contains(errs, "internal") || !strings.Contains(errs, claim) {
			t.Errorf("phc %s over a damaged claim = %d; want 1 and an internal error naming %s\n%s%s", strings.Join(args, " "), code, claim, out, errs)
		}
	}
}

// TestUnreadableStoredClaimOverMCP: an app's MCP read of a stored claim
// that no longer reads back is a tool error with constraint internal,
// naming none of what was stored, and the daemon goes on serving.
func TestUnreadableStoredClaimOverMCP(t *testing.T) {
	h := startHarness(t, "")
	_, claim := graphFixture(h)
	app := h.consumerFor("app", "*", "read", "assist")
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "app"}, "purpose": "assist",
		"operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"people.*"}}, "expires_at": tomorrow}, nil)
	h.stop()
	flipStoredByte(t, filepath.Join(h.dir, storeFile), "claims", claim+"@00000001")
	h = startHarness(t, h.dir) // the unlock reads metas, not the damaged head
	cs, err := mcpSession(t, h, app)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, isErr := call(t, cs, "context_get", map[string]any{"id": "people.ana.rel", "purpose": "assist"})
		if raw, _ := json.Marshal(out); !isErr || out["constraint"] != "internal" || strings.Contains(string(raw), "friend") {
			t.Errorf("context_get of the damaged claim = %s (error %v); want constraint internal, nothing stored", raw, isErr)
		}
	}
	if out, isErr := call(t, cs, "context_status", map[string]any{}); isErr {
		t.Errorf("context_status after the failed reads = %v", out)
	}
}
