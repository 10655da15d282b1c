package custodian_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/schema"
)

func TestNewRequiresStoreVaultSchema(t *testing.T) {
	val, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]custodian.Config{
		"no store":  {Vault: nil, Graph: cayley.OpenMemory(), Schema: val},
		"no graph":  {Store: store.NewMemory(), Schema: val},
		"no vault":  {Store: store.NewMemory(), Graph: cayley.OpenMemory(), Schema: val},
		"no schema": {Store: store.NewMemory(), Graph: cayley.OpenMemory()},
	} {
		if s, err := custodian.New(cfg); err == nil {
			s.Close()
			t.Errorf("New(%s) = nil error; want an error", name)
		}
	}
}

// lockedOps returns one call of every operation, with principals and ids that
// would pass validation, so that only the lock state can refuse them.
func lockedOps(ts *testService, consumer custodian.Principal, consumerToken, proposalID, claimID, grantID string) map[string]func(context.Context) error {
	t := ts.t
	owner := ts.owner
	return map[string]func(context.Context) error{
		"Authenticate(owner)": func(ctx context.Context) error { _, err := ts.Authenticate(ctx, ts.ownerToken); return err },
		"Authenticate(consumer)": func(ctx context.Context) error {
			_, err := ts.Authenticate(ctx, consumerToken)
			return err
		},
		"MintServiceToken": func(ctx context.Context) error {
			_, err := ts.MintServiceToken(ctx, input[custodian.TokenRequest](ts, mustJSON(t, map[string]any{"consumer": "app", "secret": secretOf("app"), "scope": "*"})))
			return err
		},
		"Propose(owner)": func(ctx context.Context) error {
			_, err := ts.Propose(ctx, owner, input[custodian.ProposalInput](ts, proposal(t, "a.b", 1)))
			return err
		},
		"Propose(consumer)": func(ctx context.Context) error {
			_, err := ts.Propose(ctx, consumer, input[custodian.ProposalInput](ts, proposal(t, "a.b", 1)))
			return err
		},
		"Review": func(ctx context.Context) error { _, err := ts.Review(ctx, owner); return err },
		"Confirm": func(ctx context.Context) error {
			_, err := ts.Confirm(ctx, owner, proposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":[]}`)))
			return err
		},
		"Reject": func(ctx context.Context) error {
			_, err := ts.Reject(ctx, owner, proposalID, custodian.RejectInput{})
			return err
		},
		"GetClaim(owner)":    func(ctx context.Context) error { _, err := ts.GetClaim(ctx, owner, claimID, ""); return err },
		"GetClaim(consumer)": func(ctx context.Context) error { _, err := ts.GetClaim(ctx, consumer, claimID, "assist"); return err },
		"ListClaims":         func(ctx context.Context) error { _, err := ts.ListClaims(ctx, owner, "", ""); return err },
		"Versions":           func(ctx context.Context) error { _, err := ts.Versions(ctx, owner, claimID); return err },
		"Correct": func(ctx context.Context) error {
			_, err := ts.Correct(ctx, owner, claimID, input[custodian.CorrectionInput](ts, []byte(`{"value":2}`)))
			return err
		},
		"SetPersonas": func(ctx context.Context) error {
			_, err := ts.SetPersonas(ctx, owner, claimID, input[custodian.PersonasInput](ts, []byte(`{"personas":[]}`)))
			return err
		},
		"DeleteClaim": func(ctx context.Context) error { _, err := ts.DeleteClaim(ctx, owner, claimID); return err },
		"CreatePersona": func(ctx context.Context) error {
			_, _, err := ts.CreatePersona(ctx, owner, input[custodian.PersonaInput](ts, []byte(`{"id":"x","name":"X"}`)))
			return err
		},
		"ListPersonas": func(ctx context.Context) error { _, err := ts.ListPersonas(ctx, owner); return err },
		"CreateGrant": func(ctx context.Context) error {
			_, err := ts.CreateGrant(ctx, owner, input[custodian.GrantInput](ts, ts.grantDoc(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})))
			return err
		},
		"ListGrants":  func(ctx context.Context) error { _, err := ts.ListGrants(ctx, owner); return err },
		"RevokeGrant": func(ctx context.Context) error { _, err := ts.RevokeGrant(ctx, owner, grantID); return err },
		"AddConsumer": func(ctx context.Context) error {
			_, err := ts.AddConsumer(ctx, owner, input[custodian.ConsumerInput](ts, mustJSON(t, custodian.ConsumerInput{Name: "other", Secret: secretOf("other")})))
			return err
		},
		"ListConsumers": func(ctx context.Context) error { _, err := ts.ListConsumers(ctx, owner); return err },
		"Context": func(ctx context.Context) error {
			_, err := ts.Context(ctx, consumer, custodian.ContextQuery{Purpose: "assist"})
			return err
		},
		"Receipts":       func(ctx context.Context) error { _, err := ts.Receipts(ctx, owner, 10); return err },
		"VerifyReceipts": func(ctx context.Context) error { _, err := ts.VerifyReceipts(ctx, owner); return err },
	}
}

func TestLockedServiceRefusesEverything(t *testing.T) {
	ts := newTestService(t)
	ts.mustPersona("work")
	ts.mustConsumer("app")
	consumerToken := ts.mustToken("app", "*", custodian.ModeReadWrite)
	consumer, err := ts.Authenticate(t.Context(), consumerToken)
	if err != nil {
		t.Fatal(err)
	}
	g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read", "contribute"}, keys: []string{"*"}})
	claim := ts.mustClaim("identity.full_name", "Ada", "work")
	pending := ts.mustPropose(ts.owner, proposal(t, "identity.nickname", "A"))

	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatalf("Lock = %v", err)
	}
	if !ts.vault.Locked() || !ts.Locked() {
		t.Fatalf("after Lock: vault.Locked() = %v, Locked() = %v; want both true", ts.vault.Locked(), ts.Locked())
	}
	if st := ts.Status(t.Context(), ts.owner); !st.Locked || st.FieldCount != nil || st.Revision != 0 {
		t.Errorf("Status while locked = %+v; want locked with no counts", st)
	}
	for name, call := range lockedOps(ts, consumer, consumerToken, pending.ProposalID, claim.Claim.ID, g.ID) {
		t.Run(name, func(t *testing.T) {
			wantKind(t, name+" while locked", call(t.Context()), custodian.KindLocked)
		})
	}
}

func TestNeverUnlockedServiceRefusesEverything(t *testing.T) {
	ts := newLockedTestService(t)
	ts.owner = custodian.ForgedOwner() // an owner principal with no live session
	ts.ownerToken = "ctx_" + strings.Repeat("A", 43)
	const (
		prp = "prp_AAAAAAAAAAAAAAAAAAAAAAAAAA"
		clm = "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA"
		grt = "grt_AAAAAAAAAAAAAAAAAAAAAAAAAA"
	)
	for name, call := range lockedOps(ts, custodian.Principal{}, "ctxs_"+strings.Repeat("A", 43), prp, clm, grt) {
		if strings.Contains(name, "(consumer)") || name == "Context" {
			continue // no consumer principal exists before the first unlock
		}
		t.Run(name, func(t *testing.T) {
			wantKind(t, name+" before unlock", call(t.Context()), custodian.KindLocked)
		})
	}
	if st := ts.Status(t.Context(), custodian.Principal{}); !st.Locked || !st.Initialized {
		t.Errorf("Status = %+v; want initialized and locked", st)
	}
}

func TestUnlockAndLock(t *testing.T) {
	var (
		mu       sync.Mutex
		unlocked []string
		locks    int
	)
	ts := newLockedTestService(t, func(c *custodian.Config) {
		c.OnUnlock = func(tok string) error { mu.Lock(); unlocked = append(unlocked, tok); mu.Unlock(); return nil }
		c.OnLock = func() { mu.Lock(); locks++; mu.Unlock() }
	})
	ctx := t.Context()

	_, errPassword := ts.Unlock(ctx, []byte("wrong password"), ts.secretKey)
	wantKind(t, "Unlock(wrong password)", errPassword, custodian.KindUnauthenticated)
	_, errKey := ts.Unlock(ctx, []byte(testPassword), "not-a-secret-key")
	wantKind(t, "Unlock(malformed Secret Key)", errKey, custodian.KindUnauthenticated)
	if e1, e2 := errPassword.(*custodian.Error), errKey.(*custodian.Error); e1.Message() != e2.Message() {
		t.Errorf("wrong password says %q, malformed key says %q; want the same text", e1.Message(), e2.Message())
	}
	if !ts.vault.Locked() {
		t.Fatalf("vault unlocked after failed attempts")
	}

	ts.unlock()
	first := ts.ownerToken
	if !strings.HasPrefix(first, "ctx_") {
		t.Errorf("owner token = %q; want a ctx_ token", first)
	}
	mu.Lock()
	if len(unlocked) != 1 || unlocked[0] != first {
		t.Errorf("OnUnlock got %d tokens; want the one Unlock returned", len(unlocked))
	}
	mu.Unlock()

	_, err := ts.Unlock(ctx, []byte(testPassword), ts.secretKey)
	wantKind(t, "Unlock while unlocked", err, custodian.KindConflict)

	ts.mustConsumer("app")
	consumerToken := ts.mustToken("app", "*", custodian.ModeRead)
	consumer, err := ts.Authenticate(ctx, consumerToken)
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, "Lock by a consumer", ts.Lock(ctx, consumer), custodian.KindSessionRequired)
	wantKind(t, "Lock anonymously", ts.Lock(ctx, custodian.Principal{}), custodian.KindSessionRequired)
	if ts.Locked() {
		t.Fatalf("a non-owner locked the vault")
	}

	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatalf("Lock = %v", err)
	}
	if !ts.vault.Locked() {
		t.Errorf("after Lock the vault holds its keys; want them zeroised (vault.Locked() = true)")
	}
	mu.Lock()
	if locks != 1 {
		t.Errorf("OnLock called %d times; want 1", locks)
	}
	mu.Unlock()
	_, err = ts.Authenticate(ctx, first)
	wantKind(t, "Authenticate(old session) while locked", err, custodian.KindLocked)
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Errorf("second Lock = %v; want nil (idempotent)", err)
	}

	ts.unlock()
	if ts.ownerToken == first {
		t.Fatalf("Unlock returned the same session token twice")
	}
	_, err = ts.Authenticate(ctx, first)
	wantKind(t, "Authenticate(session from before the lock)", err, custodian.KindUnauthenticated)
	if _, err := ts.Authenticate(ctx, consumerToken); err != nil {
		t.Errorf("Authenticate(service token) after a new unlock = %v; want it to survive the lock", err)
	}

	for _, bearer := range []string{"", "ctx_", "ctx_short", "Bearer " + ts.ownerToken, ts.ownerToken + "x",
		"ctx_" + strings.Repeat("A", 43), "ctxs_" + strings.Repeat("A", 43), strings.Replace(ts.ownerToken, "ctx_", "ctxs_", 1)} {
		_, err := ts.Authenticate(ctx, bearer)
		wantKind(t, "Authenticate("+bearer+")", err, custodian.KindUnauthenticated)
	}
}

// TestUnlockRateLimit: five failed unlocks a minute from one source, then
// that source waits until the oldest failure is a minute old. Malformed
// Secret Keys cost no key derivation and count apart: they never refuse
// the right Secret Key (limits.Unlock; TestUnlockNoLockout in internal/cli
// has the attacks over HTTP).
func TestUnlockRateLimit(t *testing.T) {
	ts := newLockedTestService(t)
	ctx := t.Context()
	for _, c := range []struct {
		name        string
		key, passwd string
	}{
		{"malformed Secret Key", "malformed", testPassword},
		{"wrong password", "", "wrong password"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := c.key
			if key == "" {
				key = ts.secretKey
			}
			start := ts.clock.Now()
			for i := range 5 {
				ts.clock.Set(start.Add(time.Duration(i) * time.Second))
				_, err := ts.Unlock(ctx, []byte(c.passwd), key)
				wantKind(t, "failed Unlock", err, custodian.KindUnauthenticated)
			}
			for _, tt := range []struct {
				at        time.Duration
				wantRetry time.Duration
			}{
				{5 * time.Second, 55 * time.Second},
				{59 * time.Second, time.Second},
				{59*time.Second + 900*time.Millisecond, time.Second}, // never less than a second
			} {
				ts.clock.Set(start.Add(tt.at))
				_, err := ts.Unlock(ctx, []byte(c.passwd), key)
				wantKind(t, "sixth Unlock", err, custodian.KindRateLimited)
				if e, ok := errors.AsType[*custodian.Error](err); ok && e.RetryAfter != tt.wantRetry {
					t.Errorf("at +%v: RetryAfter = %v; want %v", tt.at, e.RetryAfter, tt.wantRetry)
				}
				if !ts.vault.Locked() {
					t.Fatalf("a rate-limited Unlock unlocked the vault")
				}
			}
			// A minute after the first failure, one slot is free again.
			ts.clock.Set(start.Add(time.Minute))
		})
	}
	// Malformed keys refuse no well-formed one: after five of them, the
	// wrong password above still had its five tries; now the right one
	// unlocks.
	ts.unlock()
}

func TestIdleAutoLock(t *testing.T) {
	const idle = 50 * time.Millisecond
	ts := newTestService(t, func(c *custodian.Config) { c.IdleLock = idle })
	// The watcher ticks on real time, but measures idleness on the fake
	// clock. Two looks after a change of the clock, one at least has read
	// the clock since the change.
	twoLooks := func() {
		n := ts.IdleLooks()
		ts.await(func() bool { return ts.IdleLooks() >= n+2 })
	}
	twoLooks()
	if ts.Locked() {
		t.Fatalf("locked while the fake clock stood still")
	}
	ts.clock.Advance(idle - time.Millisecond)
	if _, err := ts.Authenticate(t.Context(), ts.ownerToken); err != nil { // activity resets the timer
		t.Fatal(err)
	}
	ts.clock.Advance(idle - time.Millisecond)
	twoLooks()
	if ts.Locked() {
		t.Fatalf("locked %v after the last request; want only after %v", idle-time.Millisecond, idle)
	}
	ts.clock.Advance(time.Millisecond)
	ts.await(ts.Locked)
	if !ts.vault.Locked() {
		t.Errorf("idle lock left the vault keys in memory")
	}
	_, err := ts.Authenticate(t.Context(), ts.ownerToken)
	wantKind(t, "Authenticate after idle lock", err, custodian.KindLocked)
}

func TestServiceTokens(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")

	mint := func(m map[string]any) (custodian.TokenIssued, error) {
		return ts.MintServiceToken(ctx, input[custodian.TokenRequest](ts, mustJSON(t, m)))
	}
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"consumer": "app", "secret": secretOf("app"), "scope": "identity.*, learning.*"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	issued, err := mint(base(map[string]any{"ttl": 60}))
	if err != nil {
		t.Fatalf("MintServiceToken = %v", err)
	}
	if !strings.HasPrefix(issued.Token, "ctxs_") || issued.Mode != custodian.ModeRead ||
		!issued.ExpiresAt.Equal(t0.Add(time.Minute)) || len(issued.Scope) != 2 {
		t.Errorf("MintServiceToken = %+v; want a ctxs_ read token for 2 patterns expiring at %v", issued, t0.Add(time.Minute))
	}
	ts.clock.Set(t0.Add(59 * time.Second))
	if _, err := ts.Authenticate(ctx, issued.Token); err != nil {
		t.Errorf("Authenticate a second before expiry = %v", err)
	}
	ts.clock.Set(t0.Add(time.Minute))
	_, err = ts.Authenticate(ctx, issued.Token)
	wantKind(t, "Authenticate at the exact expiry", err, custodian.KindUnauthenticated)
	ts.clock.Set(t0)

	tests := []struct {
		name string
		req  map[string]any
		want custodian.Kind
	}{
		{"wrong secret", base(map[string]any{"secret": "wrong-secret-0123456789"}), custodian.KindUnauthenticated},
		{"unknown consumer", base(map[string]any{"consumer": "nobody"}), custodian.KindUnauthenticated},
		{"over-long secret", base(map[string]any{"secret": strings.Repeat("s", 300)}), custodian.KindUnauthenticated},
		{"bad mode", base(map[string]any{"mode": "admin"}), custodian.KindInvalid},
		{"empty scope", base(map[string]any{"scope": " , "}), custodian.KindInvalid},
		{"bad scope", base(map[string]any{"scope": "Identity.*"}), custodian.KindInvalid},
		{"ttl too short", base(map[string]any{"ttl": 59}), custodian.KindInvalid},
		{"ttl negative", base(map[string]any{"ttl": -60}), custodian.KindInvalid},
		{"ttl not a duration", base(map[string]any{"ttl": "soon"}), custodian.KindInvalid},
		{"unknown member", base(map[string]any{"admin": true}), custodian.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mint(tt.req)
			wantKind(t, "MintServiceToken", err, tt.want)
		})
	}
	// Unknown names and wrong secrets must be indistinguishable.
	_, e1 := mint(base(map[string]any{"secret": "wrong-secret-0123456789"}))
	_, e2 := mint(base(map[string]any{"consumer": "nobody"}))
	if e1 != nil && e2 != nil && e1.(*custodian.Error).Message() != e2.(*custodian.Error).Message() {
		t.Errorf("wrong secret says %q, unknown consumer says %q; want the same", e1.(*custodian.Error).Message(), e2.(*custodian.Error).Message())
	}
}

func TestOwnerOnlyOperations(t *testing.T) {
	ts := newTestService(t)
	ts.mustPersona("work")
	ts.mustConsumer("app")
	// Even a grant naming every operation, confirm included, gives an app no
	// owner power.
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read", "contribute", "confirm", "share"}, keys: []string{"*"}})
	app := ts.mustPrincipal("app", "*", custodian.ModeReadWrite)
	own := ts.mustPropose(app, proposal(t, "learning.goal", "fluency"))
	claim := ts.mustClaim("identity.full_name", "Ada", "work")
	g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	rev := ts.revision()

	ctx := t.Context()
	for _, p := range []struct {
		name string
		p    custodian.Principal
	}{{"consumer", app}, {"anonymous", custodian.Principal{}}} {
		calls := map[string]func() error{
			"Confirm own proposal": func() error {
				_, err := ts.Confirm(ctx, p.p, own.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":["work"]}`)))
				return err
			},
			"Reject": func() error { _, err := ts.Reject(ctx, p.p, own.ProposalID, custodian.RejectInput{}); return err },
			"Review": func() error { _, err := ts.Review(ctx, p.p); return err },
			"Correct": func() error {
				_, err := ts.Correct(ctx, p.p, claim.Claim.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":"x"}`)))
				return err
			},
			"DeleteClaim": func() error { _, err := ts.DeleteClaim(ctx, p.p, claim.Claim.ID); return err },
			"SetPersonas": func() error {
				_, err := ts.SetPersonas(ctx, p.p, claim.Claim.ID, input[custodian.PersonasInput](ts, []byte(`{"personas":[]}`)))
				return err
			},
			"ListClaims": func() error { _, err := ts.ListClaims(ctx, p.p, "", ""); return err },
			"Versions":   func() error { _, err := ts.Versions(ctx, p.p, claim.Claim.ID); return err },
			"CreateGrant": func() error {
				_, err := ts.CreateGrant(ctx, p.p, input[custodian.GrantInput](ts, ts.grantDoc(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})))
				return err
			},
			"RevokeGrant": func() error { _, err := ts.RevokeGrant(ctx, p.p, g.ID); return err },
			"ListGrants":  func() error { _, err := ts.ListGrants(ctx, p.p); return err },
			"CreatePersona": func() error {
				_, _, err := ts.CreatePersona(ctx, p.p, input[custodian.PersonaInput](ts, []byte(`{"id":"x","name":"X"}`)))
				return err
			},
			"ListPersonas": func() error { _, err := ts.ListPersonas(ctx, p.p); return err },
			"AddConsumer": func() error {
				_, err := ts.AddConsumer(ctx, p.p, input[custodian.ConsumerInput](ts, mustJSON(t, custodian.ConsumerInput{Name: "evil", Secret: secretOf("evil")})))
				return err
			},
			"ListConsumers":  func() error { _, err := ts.ListConsumers(ctx, p.p); return err },
			"Receipts":       func() error { _, err := ts.Receipts(ctx, p.p, 10); return err },
			"VerifyReceipts": func() error { _, err := ts.VerifyReceipts(ctx, p.p); return err },
		}
		for name, call := range calls {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				wantKind(t, name, call(), custodian.KindSessionRequired)
			})
		}
	}
	if got := ts.revision(); got != rev {
		t.Errorf("revision = %d after refused calls; want %d (nothing written)", got, rev)
	}
	q, err := ts.Review(ctx, ts.owner)
	if err != nil || len(q) != 1 || q[0].ID != own.ProposalID {
		t.Errorf("Review = %v, %v; want the app's proposal still pending", q, err)
	}
	// Status shows counts to the owner only.
	if st := ts.Status(ctx, app); st.FieldCount != nil || st.Revision != 0 || st.Categories != nil {
		t.Errorf("Status(consumer) = %+v; want no counts", st)
	}
	if st := ts.Status(ctx, ts.owner); st.FieldCount == nil || *st.FieldCount != 1 || st.Revision != rev {
		t.Errorf("Status(owner) = %+v; want 1 field at revision %d", st, rev)
	}
}

// TestOwnerPrincipalBoundToSession: an owner principal works only while the
// session it was authenticated with lives.
func TestOwnerPrincipalBoundToSession(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	if _, err := ts.ListClaims(ctx, ts.owner, "", ""); err != nil {
		t.Fatalf("ListClaims(owner) = %v", err)
	}
	_, err := ts.ListClaims(ctx, custodian.ForgedOwner(), "", "")
	wantKind(t, "ListClaims(forged owner)", err, custodian.KindUnauthenticated)

	old := ts.owner
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	_, err = ts.ListClaims(ctx, old, "", "")
	wantKind(t, "ListClaims(owner of an ended session)", err, custodian.KindUnauthenticated)
	if _, err := ts.ListClaims(ctx, ts.owner, "", ""); err != nil {
		t.Fatalf("ListClaims(new owner) = %v", err)
	}
}

// TestMintRateLimited: ten wrong secrets for one consumer name in a minute
// from one source stop that source's further attempts for the name, even
// with the right secret, until the minute has passed; the same name from
// another source, and other names, are unaffected.
func TestMintRateLimited(t *testing.T) {
	ts := newTestService(t)
	attacker := custodian.WithPeer(t.Context(), "127.0.0.1:40000")
	app := custodian.WithPeer(t.Context(), "127.0.0.1:50000")
	ts.mustConsumer("app")
	ts.mustConsumer("other")
	wrong := mustJSON(t, map[string]any{"consumer": "app", "secret": "not-the-secret-0000", "scope": "*"})
	for i := range 10 {
		_, err := ts.MintServiceToken(attacker, input[custodian.TokenRequest](ts, wrong))
		wantKind(t, fmt.Sprintf("wrong secret #%d", i+1), err, custodian.KindUnauthenticated)
	}
	right := mustJSON(t, map[string]any{"consumer": "app", "secret": secretOf("app"), "scope": "*"})
	_, err := ts.MintServiceToken(attacker, input[custodian.TokenRequest](ts, right))
	wantKind(t, "right secret after ten wrong ones, same source", err, custodian.KindRateLimited)
	if e, ok := errors.AsType[*custodian.Error](err); !ok || e.RetryAfter <= 0 {
		t.Fatalf("rate-limited error = %+v; want a RetryAfter", err)
	}
	if _, err := ts.MintServiceToken(app, input[custodian.TokenRequest](ts, right)); err != nil {
		t.Fatalf("right secret from another source after ten wrong ones = %v; want a token", err)
	}
	ts.mustToken("other", "*", custodian.ModeRead)
	ts.clock.Advance(time.Minute)
	if _, err := ts.MintServiceToken(attacker, input[custodian.TokenRequest](ts, right)); err != nil {
		t.Fatalf("right secret from the first source a minute later = %v; want a token", err)
	}
}
