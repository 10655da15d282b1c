package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
	wire "github.com/phc-project/phc/internal/daemon"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
)

// TestMain gives this package's tests a cheap vault and cheap consumer
// secret hashes.
func TestMain(m *testing.M) {
	vault.UseTestKDF()
	identity.UseTestHashCost()
	os.Exit(m.Run())
}

const testPassword = "client test password, not a secret"

// startDaemon serves a fresh unlocked custodian over real HTTP, wired as
// phc serve wires it, and returns its URL and the owner's session.
func startDaemon(t *testing.T) (base, owner string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "phc")
	sk, err := vault.Create(dir, []byte(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	core, err := wire.Open(wire.Options{Dir: dir, IdleLock: -1})
	if err != nil {
		t.Fatal(err)
	}
	owner, err = core.Svc.Unlock(context.Background(), []byte(testPassword), sk)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = core.Handler("http://" + srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		if err := core.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv.URL, owner
}

// get answers GET path with token as the daemon wrote it.
func get(t *testing.T, base, path, token string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s, %v", path, resp.StatusCode, raw, err)
	}
	return raw
}

// sameAnswer checks that v, encoded as the daemon encodes its answers,
// is byte for byte the daemon's answer to GET path: decoding into the
// core's types lost nothing.
func sameAnswer(t *testing.T, base, path, token string, v any) {
	t.Helper()
	want := get(t, base, path, token)
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got = append(got, '\n'); !bytes.Equal(got, want) {
		t.Errorf("GET %s, decoded and encoded again:\n%s\nthe daemon's answer:\n%s", path, got, want)
	}
}

// An owner and an app go through a grant, a proposal, its review and a
// correction with the typed client; each list decodes into the core's
// types without losing a byte of the daemon's answer.
func TestOwnerAndAppFlow(t *testing.T) {
	base, ownerToken := startDaemon(t)
	ctx := t.Context()
	anon := client.New(base)
	owner := anon.WithToken(ownerToken)

	st, err := anon.Status(ctx)
	if err != nil || st.Locked || !st.Initialized || st.FieldCount != nil {
		t.Fatalf("public Status = %+v, %v; want initialized, unlocked, no count", st, err)
	}
	if st, err := owner.Status(ctx); err != nil || st.FieldCount == nil {
		t.Fatalf("owner's Status = %+v, %v; want a field count", st, err)
	}
	if _, err := owner.CreatePersona(ctx, custodian.PersonaInput{ID: "learning", Name: "Learning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.AddConsumer(ctx, custodian.ConsumerInput{Name: "tutor", Secret: "tutor-secret-0123456789"}); err != nil {
		t.Fatal(err)
	}
	g, err := owner.CreateGrant(ctx, custodian.GrantInput{
		Recipient:  custodian.Recipient{Kind: "consumer", ID: "tutor"},
		Purpose:    "tutoring",
		Operations: []string{"read", "contribute"},
		Selectors:  custodian.Selectors{Keys: []string{"learning.*"}},
		ExpiresAt:  time.Now().Add(time.Hour).UTC().Truncate(time.Second),
	})
	if err != nil || g.ID == "" {
		t.Fatalf("CreateGrant = %+v, %v", g, err)
	}
	tok, err := anon.MintToken(ctx, client.TokenRequest{Consumer: "tutor", Secret: "tutor-secret-0123456789",
		Scope: "learning.*", Mode: "read-write", TTL: "1h", Purpose: "tutoring"})
	if err != nil || tok.Token == "" {
		t.Fatalf("MintToken = %+v, %v", tok, err)
	}
	app := anon.WithToken(tok.Token)
	p, err := app.Propose(ctx, custodian.ProposalInput{Key: "learning.goal", Value: json.RawMessage(`"Spanish"`), Kind: "goal", Assertion: "reported"})
	if err != nil || p.ProposalID == "" {
		t.Fatalf("Propose = %+v, %v", p, err)
	}
	items, err := owner.Review(ctx)
	if err != nil || len(items) != 1 || items[0].ID != p.ProposalID || string(items[0].Value) != `"Spanish"` {
		t.Fatalf("Review = %+v, %v; want the proposal", items, err)
	}
	w, err := owner.Confirm(ctx, p.ProposalID, custodian.ConfirmInput{Personas: []string{"learning"}})
	if err != nil || w.Claim.Key != "learning.goal" || w.Claim.Version != 1 {
		t.Fatalf("Confirm = %+v, %v", w, err)
	}
	if w, err := owner.Correct(ctx, w.Claim.ID, custodian.CorrectionInput{Value: json.RawMessage(`"Catalan"`)}); err != nil || w.Claim.Version != 2 {
		t.Fatalf("Correct = %+v, %v; want version 2", w, err)
	}
	if _, err := owner.CreateEntity(ctx, custodian.EntityInput{Type: "person", Name: "Ana", Key: "people.ana.name"}); err != nil {
		t.Fatal(err)
	}

	grants, err := owner.Grants(ctx)
	if err != nil || len(grants) != 1 {
		t.Fatalf("Grants = %+v, %v", grants, err)
	}
	sameAnswer(t, base, "/phc/v1/grants", ownerToken, map[string]any{"grants": grants})
	consumers, err := owner.Consumers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, base, "/phc/v1/consumers", ownerToken, map[string]any{"consumers": consumers})
	personas, err := owner.Personas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, base, "/phc/v1/personas", ownerToken, map[string]any{"personas": personas})
	claims, err := owner.Claims(ctx, "", "")
	if err != nil || len(claims.Claims) != 2 {
		t.Fatalf("Claims = %+v, %v; want the goal and Ana's name", claims, err)
	}
	sameAnswer(t, base, "/phc/v1/claims?", ownerToken, claims)
	versions, err := owner.Versions(ctx, w.Claim.ID)
	if err != nil || len(versions.Claims) != 2 {
		t.Fatalf("Versions = %+v, %v", versions, err)
	}
	entities, err := owner.Entities(ctx)
	if err != nil || len(entities) != 1 {
		t.Fatalf("Entities = %+v, %v", entities, err)
	}
	sameAnswer(t, base, "/phc/v1/entities", ownerToken, map[string]any{"entities": entities})
	tokens, err := owner.Tokens(ctx)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("Tokens = %+v, %v", tokens, err)
	}
	sameAnswer(t, base, "/context/tokens/service", ownerToken, map[string]any{"tokens": tokens})
	receipts, err := owner.Receipts(ctx, 1000)
	if err != nil || len(receipts) == 0 {
		t.Fatalf("Receipts = %d, %v", len(receipts), err)
	}
	sameAnswer(t, base, "/phc/v1/receipts?limit=1000", ownerToken, map[string]any{"receipts": receipts})
	settings, err := owner.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, base, "/phc/v1/settings", ownerToken, settings)
	card, err := owner.Card(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, base, "/phc/v1/card", ownerToken, card)
	if v, err := owner.VerifyReceipts(ctx); err != nil || !v.OK {
		t.Errorf("VerifyReceipts = %+v, %v", v, err)
	}
	if rep, err := owner.Check(ctx); err != nil || !rep.OK {
		t.Errorf("Check = %+v, %v", rep, err)
	}
}

// An error answer is an *Error with the status, the constraint code and
// the public message of the daemon's error table, and a schema violation's
// violations.
func TestErrorAnswers(t *testing.T) {
	base, ownerToken := startDaemon(t)
	ctx := t.Context()
	owner := client.New(base).WithToken(ownerToken)

	_, err := owner.DeletePersona(ctx, "nobody")
	e, ok := errors.AsType[*client.Error](err)
	if !ok || e.Status != 404 || e.Constraint != "not_found" || e.Message == "" {
		t.Errorf("DeletePersona(unknown) = %#v; want a 404 not_found *Error", err)
	}
	if !client.IsConstraint(err, "not_found") || client.IsConstraint(err, "conflict") {
		t.Errorf("IsConstraint(%v) disagrees with the code", err)
	}

	_, err = owner.CreateGrant(ctx, custodian.GrantInput{Recipient: custodian.Recipient{Kind: "consumer", ID: "x"},
		Purpose: "p", Operations: []string{"read"}, ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Second)})
	e, ok = errors.AsType[*client.Error](err)
	if !ok || e.Status != 400 || e.Constraint != "schema_violation" || len(e.Violations) == 0 {
		t.Fatalf("CreateGrant(no selectors) = %#v; want a schema violation", err)
	}

	if _, err := client.New(base).WithToken("ctx_not-a-session").Grants(ctx); !client.IsConstraint(err, "unauthenticated") {
		t.Errorf("Grants(bad token) = %v; want unauthenticated", err)
	}
}

// CheckToken can refuse to send the token: nothing reaches the server.
func TestCheckTokenRefuses(t *testing.T) {
	reached := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		w.Write([]byte(`{"initialized":true,"locked":false}`))
	}))
	t.Cleanup(srv.Close)
	refusal := errors.New("not this daemon's session")
	cl := client.New(srv.URL).WithToken("ctx_secret")
	cl.CheckToken = func() error { return refusal }
	if _, err := cl.Status(t.Context()); !errors.Is(err, refusal) || reached {
		t.Errorf("Status with a refused token = %v (server reached: %v); want the refusal, nothing sent", err, reached)
	}
	cl.Token = ""
	if _, err := cl.Status(t.Context()); err != nil || !reached {
		t.Errorf("Status without a token = %v (server reached: %v); want it sent", err, reached)
	}
}

// An error answer that is not the daemon's (no constraint) reads as the
// status's text with the code "unknown".
func TestForeignErrorAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL).Status(t.Context())
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Status != 502 || e.Constraint != "unknown" || e.Message != "Bad Gateway" {
		t.Errorf("Status from a proxy's error = %#v", err)
	}
}
