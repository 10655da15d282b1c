package cli

import (
	"encoding/json"
	"fmt"
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
	t.Parallel()
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

// TestExportCommand: phc export --to CARD --out FILE writes the bundle 0600
// and says on stderr what it holds and what stayed behind.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	b := startHarness(t, "")
	envB, _, errB := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	cardB := filepath.Join(t.TempDir(), "b-card.json")
	if code := Run(t.Context(), envB, []string{"card", "--out", cardB}); code != 0 {
		t.Fatalf("phc card = %d\n%s", code, errB.String())
	}
	a.must(201, "POST", "/phc/v1/personas", a.owner, map[string]any{"id": "work", "name": "Work"}, nil)
	for i, r := range []any{[]any{}, []any{map[string]any{"type": "no_export", "mandatory": true}}} {
		var pr struct {
			ID string `json:"proposal_id"`
		}
		a.must(201, "POST", "/phc/v1/proposals", a.owner, map[string]any{"key": fmt.Sprintf("work.k%d", i), "value": "v", "kind": "fact", "assertion": "reported", "restrictions": r}, &pr)
		a.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", a.owner, map[string]any{"personas": []string{"work"}}, nil)
	}
	envA, _, errA := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": a.dir})
	out := filepath.Join(t.TempDir(), "bundle.jwe")
	if code := Run(t.Context(), envA, []string{"export", "--to", cardB, "--out", out}); code != 0 {
		t.Fatalf("phc export = %d\n%s", code, errA.String())
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("bundle file: %v, %v", fi, err)
	}
	raw, _ := os.ReadFile(out)
	if strings.Count(string(raw), ".") != 4 {
		t.Fatalf("the bundle is not a compact JWE: %.80s", raw)
	}
	msg := errA.String()
	if !strings.Contains(msg, "bundle bnd_") || !strings.Contains(msg, "1 claims (1 versions)") || !strings.Contains(msg, "1 records stay behind") || !strings.Contains(msg, "no_export") {
		t.Fatalf("phc export said:\n%s", msg)
	}
	// B, having pinned A's card, holds the bundle in its quarantine: its
	// apps read nothing of it; the same bundle again is refused.
	cardA := filepath.Join(t.TempDir(), "a-card.json")
	if code := Run(t.Context(), envA, []string{"card", "--out", cardA}); code != 0 {
		t.Fatalf("phc card = %d\n%s", code, errA.String())
	}
	if code := Run(t.Context(), envB, []string{"trust", "custodian", cardA}); code != 0 {
		t.Fatalf("phc trust custodian = %d\n%s", code, errB.String())
	}
	app := b.consumer("app", "*", "read")
	b.grant("app", "assist", "read", map[string]any{"keys": []string{"*"}})
	envB2, outB2, errB2 := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	if code := Run(t.Context(), envB2, []string{"import", out}); code != 0 {
		t.Fatalf("phc import = %d\n%s", code, errB2.String())
	}
	if !strings.Contains(outB2.String(), "2 records held in the quarantine") || !strings.Contains(outB2.String(), "identity unmapped: foreign:cus_") {
		t.Fatalf("phc import said:\n%s", outB2.String())
	}
	b.constraint(404, "not_found", "GET", "/context/fields/work.k0", app, nil)
	if code := Run(t.Context(), envB2, []string{"import", out}); code == 0 || !strings.Contains(errB2.String(), "conflict") {
		t.Fatalf("a second import = %d\n%s", code, errB2.String())
	}
	outB2.Reset()
	if code := Run(t.Context(), envB2, []string{"quarantine"}); code != 0 || !strings.Contains(outB2.String(), "work.k0") {
		t.Fatalf("phc quarantine = %d: %s", code, outB2.String())
	}
	outB2.Reset()
	if code := Run(t.Context(), envB2, []string{"quarantine", "reject", "--all"}); code != 0 || !strings.Contains(outB2.String(), "rejected 2 records") {
		t.Fatalf("phc quarantine reject --all = %d: %s", code, outB2.String())
	}
	// A card that is not one is refused before anything is made.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"custodian_id":"cus_x"}`), 0o600)
	if code := Run(t.Context(), envA, []string{"export", "--to", bad}); code == 0 {
		t.Fatal("phc export to a bad card succeeded")
	}
}
