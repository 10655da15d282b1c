package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCustodianCards: each daemon has a card at its first unlock; the owner
// of B pins A's card with phc trust custodian (from phc card's file), lists
// and removes it; a card pinned twice, B's own card, a card with a private
// key or a forged id, and any caller but the owner are refused.
func TestCustodianCards(t *testing.T) {
	a := startHarness(t, "")
	b := startHarness(t, "")
	envA, outA, errA := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": a.dir})
	cardFile := filepath.Join(t.TempDir(), "a-card.json")
	if code := Run(t.Context(), envA, []string{"card", "--out", cardFile}); code != 0 {
		t.Fatalf("phc card = %d\n%s", code, errA.String())
	}
	if fi, err := os.Stat(cardFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("card file: %v, %v; want mode 0600", fi, err)
	}
	raw, _ := os.ReadFile(cardFile)
	var card struct {
		CustodianID string `json:"custodian_id"`
		JWKS        struct {
			Keys []map[string]any `json:"keys"`
		} `json:"jwks"`
		CreatedAt string `json:"created_at"`
	}
	if err := json.Unmarshal(raw, &card); err != nil || !strings.HasPrefix(card.CustodianID, "cus_") || len(card.JWKS.Keys) != 2 || card.CreatedAt == "" {
		t.Fatalf("card = %s (%v)", raw, err)
	}
	for _, k := range card.JWKS.Keys {
		if _, ok := k["d"]; ok {
			t.Fatalf("the card holds a private key: %s", raw)
		}
	}
	// The card is stable across restarts.
	var again json.RawMessage
	a.stop()
	a = startHarness(t, a.dir)
	a.must(200, "GET", "/phc/v1/card", a.owner, nil, &again)
	var card2 struct {
		CustodianID string `json:"custodian_id"`
	}
	json.Unmarshal(again, &card2)
	if card2.CustodianID != card.CustodianID {
		t.Fatalf("card after a restart: %s, want %s", card2.CustodianID, card.CustodianID)
	}
	_ = outA

	envB, outB, errB := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	if code := Run(t.Context(), envB, []string{"trust", "custodian", cardFile}); code != 0 {
		t.Fatalf("phc trust custodian = %d\n%s", code, errB.String())
	}
	outB.Reset()
	if code := Run(t.Context(), envB, []string{"trust", "custodians"}); code != 0 || !strings.Contains(outB.String(), card.CustodianID) {
		t.Fatalf("phc trust custodians = %d: %q", code, outB.String())
	}
	// Refusals.
	b.constraint(409, "conflict", "POST", "/phc/v1/custodians", b.owner, json.RawMessage(raw))
	var own json.RawMessage
	b.must(200, "GET", "/phc/v1/card", b.owner, nil, &own)
	b.constraint(400, "invalid_request", "POST", "/phc/v1/custodians", b.owner, own)
	forged := strings.Replace(string(raw), card.CustodianID, "cus_"+strings.Repeat("A", 43), 1)
	b.constraint(400, "invalid_request", "POST", "/phc/v1/custodians", b.owner, json.RawMessage(forged))
	b.constraint(400, "invalid_request", "POST", "/phc/v1/custodians", b.owner, map[string]any{"custodian_id": card.CustodianID})
	app := b.consumer("app", "*", "read")
	b.constraint(403, "session_required", "GET", "/phc/v1/card", app, nil)
	b.constraint(403, "session_required", "POST", "/phc/v1/custodians", app, json.RawMessage(raw))
	b.constraint(401, "unauthenticated", "GET", "/phc/v1/custodians", "", nil)

	outB.Reset()
	if code := Run(t.Context(), envB, []string{"trust", "remove", card.CustodianID}); code != 0 {
		t.Fatalf("phc trust remove = %d\n%s", code, errB.String())
	}
	var list struct {
		Custodians []json.RawMessage `json:"custodians"`
	}
	b.must(200, "GET", "/phc/v1/custodians", b.owner, nil, &list)
	if len(list.Custodians) != 0 {
		t.Fatalf("custodians after remove = %d", len(list.Custodians))
	}
	b.constraint(404, "not_found", "DELETE", "/phc/v1/custodians/"+card.CustodianID, b.owner, nil)
}
