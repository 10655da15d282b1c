package custodian_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

// TestEveryWriteAndReadIsReceipted runs one operation per step and checks the
// single receipt it leaves.
func TestEveryWriteAndReadIsReceipted(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()

	var (
		app      custodian.Principal
		grant    custodian.GrantCreated
		prop     custodian.Proposed
		rejected custodian.Proposed
		claim    custodian.Written
		corr     custodian.Written
	)
	secretValues := []string{"Ada-Value-1", "Ada-Value-2", "Rejected-Value-3", "Persona Work Name"}
	type step struct {
		name   string
		run    func(t *testing.T) (records []string, revision uint64)
		op     string
		actor  string
		deny   bool
		purpse string
	}
	steps := []step{
		{name: "CreatePersona", op: "persona.create", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			_, rev, err := ts.CreatePersona(ctx, ts.owner, input[custodian.PersonaInput](ts, []byte(`{"id":"work","name":"Persona Work Name"}`)))
			if err != nil {
				t.Fatal(err)
			}
			return []string{"work"}, rev
		}},
		{name: "AddConsumer", op: "consumer.add", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			ts.mustConsumer("app")
			return nil, ts.revision()
		}},
		{name: "MintServiceToken", op: "token.create", actor: "consumer:app", run: func(t *testing.T) ([]string, uint64) {
			app = ts.mustPrincipal("app", "*", custodian.ModeReadWrite)
			return nil, 0
		}},
		{name: "CreateGrant", op: "grant.create", actor: "owner", purpse: "assist", run: func(t *testing.T) ([]string, uint64) {
			grant = ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read", "contribute"}, keys: []string{"identity.*"}})
			return []string{grant.ID}, grant.Revision
		}},
		{name: "Propose", op: "proposal.create", actor: "consumer:app", run: func(t *testing.T) ([]string, uint64) {
			prop = ts.mustPropose(app, proposal(t, "identity.full_name", "Ada-Value-1"))
			return []string{prop.ProposalID}, prop.Revision
		}},
		{name: "Confirm", op: "proposal.confirm", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			claim = ts.mustConfirm(prop.ProposalID, "work")
			return []string{prop.ProposalID, claim.Claim.ID + "@1"}, claim.Revision
		}},
		{name: "SetPersonas", op: "claim.personas", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			w, err := ts.SetPersonas(ctx, ts.owner, claim.Claim.ID, input[custodian.PersonasInput](ts, []byte(`{"personas":[]}`)))
			if err != nil {
				t.Fatal(err)
			}
			return []string{claim.Claim.ID + "@1"}, w.Revision
		}},
		{name: "Correct", op: "claim.correct", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			var err error
			corr, err = ts.Correct(ctx, ts.owner, claim.Claim.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":"Ada-Value-2"}`)))
			if err != nil {
				t.Fatal(err)
			}
			return []string{claim.Claim.ID + "@1", claim.Claim.ID + "@2"}, corr.Revision
		}},
		{name: "Context allowed", op: "context.read", actor: "consumer:app", purpse: "assist", run: func(t *testing.T) ([]string, uint64) {
			res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"})
			if err != nil || len(res.Claims) != 1 {
				t.Fatalf("Context = %v, %v", res, err)
			}
			// The disclosed version, then the grant that authorised it.
			return []string{claim.Claim.ID + "@2", grant.ID}, res.Revision
		}},
		{name: "Context with nothing to disclose", op: "context.read", actor: "consumer:app", purpse: "other", deny: true, run: func(t *testing.T) ([]string, uint64) {
			if _, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "other"}); err != nil {
				t.Fatal(err)
			}
			return nil, ts.revision()
		}},
		{name: "GetClaim allowed", op: "claim.read", actor: "consumer:app", purpse: "assist", run: func(t *testing.T) ([]string, uint64) {
			got, err := ts.GetClaim(ctx, app, claim.Claim.ID, "assist")
			if err != nil {
				t.Fatal(err)
			}
			return []string{claim.Claim.ID + "@2", grant.ID}, got.Revision
		}},
		{name: "GetClaim denied", op: "claim.read", actor: "consumer:app", purpse: "assist", deny: true, run: func(t *testing.T) ([]string, uint64) {
			_, err := ts.GetClaim(ctx, app, "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "assist")
			wantKind(t, "GetClaim(absent)", err, custodian.KindNotFound)
			return nil, 0
		}},
		{name: "Propose again", op: "proposal.create", actor: "consumer:app", run: func(t *testing.T) ([]string, uint64) {
			rejected = ts.mustPropose(app, proposal(t, "identity.nickname", "Rejected-Value-3"))
			return []string{rejected.ProposalID}, rejected.Revision
		}},
		{name: "Reject", op: "proposal.reject", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			rev, err := ts.Reject(ctx, ts.owner, rejected.ProposalID, input[custodian.RejectInput](ts, []byte(`{"reason":"no"}`)))
			if err != nil {
				t.Fatal(err)
			}
			return []string{rejected.ProposalID}, rev
		}},
		{name: "RevokeGrant", op: "grant.revoke", actor: "owner", purpse: "assist", run: func(t *testing.T) ([]string, uint64) {
			rev, err := ts.RevokeGrant(ctx, ts.owner, grant.ID)
			if err != nil {
				t.Fatal(err)
			}
			return []string{grant.ID}, rev
		}},
		{name: "DeleteClaim", op: "claim.delete", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			rev, err := ts.DeleteClaim(ctx, ts.owner, claim.Claim.ID)
			if err != nil {
				t.Fatal(err)
			}
			return []string{claim.Claim.ID + "@1", claim.Claim.ID + "@2"}, rev
		}},
		{name: "Lock", op: "vault.lock", actor: "owner", run: func(t *testing.T) ([]string, uint64) {
			if err := ts.Lock(ctx, ts.owner); err != nil {
				t.Fatal(err)
			}
			ts.unlock() // itself receipted: checked by the next step
			return nil, 0
		}},
	}

	prev := ts.receipts()
	if len(prev) != 1 || prev[0].Operation != "vault.unlock" {
		t.Fatalf("receipts after the first unlock = %+v; want one vault.unlock", prev)
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			records, rev := st.run(t)
			now := ts.receipts()
			added := now[len(prev):]
			prev = now
			if st.op == "vault.lock" {
				// Lock and the following Unlock.
				if len(added) != 2 || added[0].Operation != "vault.lock" || added[1].Operation != "vault.unlock" {
					t.Fatalf("Lock+Unlock added %+v; want vault.lock then vault.unlock", added)
				}
				return
			}
			if len(added) != 1 {
				t.Fatalf("%s added %d receipts; want 1: %+v", st.name, len(added), added)
			}
			r := added[0]
			wantDecision := "allow"
			if st.deny {
				wantDecision = "deny"
			}
			if r.Operation != st.op || r.Actor != st.actor || r.Decision != wantDecision || r.Purpose != st.purpse {
				t.Errorf("receipt = {op %q actor %q decision %q purpose %q}; want {%q %q %q %q}",
					r.Operation, r.Actor, r.Decision, r.Purpose, st.op, st.actor, wantDecision, st.purpse)
			}
			if st.deny && r.Constraint != "not_found" {
				t.Errorf("deny receipt constraint = %q; want not_found", r.Constraint)
			}
			if records != nil {
				if diff := cmp.Diff(records, r.Records); diff != "" {
					t.Errorf("receipt records (-want +got):\n%s", diff)
				}
			}
			if rev != 0 && r.Revision != rev {
				t.Errorf("receipt revision = %d; want %d", r.Revision, rev)
			}
			if r.Records == nil {
				t.Errorf("receipt records = nil; want a list")
			}
		})
	}

	// Receipts hold ids and versions, never values.
	all, err := json.Marshal(ts.receipts())
	if err != nil {
		t.Fatal(err)
	}
	raw := receiptBucket(t, ts)
	for _, v := range append(secretValues, "identity.full_name", "identity.nickname") {
		if bytes.Contains(all, []byte(v)) || bytes.Contains(raw, []byte(v)) {
			t.Errorf("receipts contain %q", v)
		}
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || !v.OK || v.Count != uint64(len(ts.receipts())) {
		t.Errorf("VerifyReceipts = %+v, %v; want ok over every receipt", v, err)
	}
}

func receiptBucket(t *testing.T, ts *testService) []byte {
	t.Helper()
	var out bytes.Buffer
	err := ts.store.View(func(tx custodian.Tx) error {
		return tx.ForEach(custodian.BucketReceipts, func(k string, v []byte) error {
			out.Write(v)
			out.WriteByte('\n')
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestReceiptsLimit(t *testing.T) {
	ts := newTestService(t)
	for _, id := range []string{"a", "b", "c"} {
		ts.mustPersona(id)
	}
	rs, err := ts.Receipts(t.Context(), ts.owner, 2)
	if err != nil || len(rs) != 2 || rs[0].Seq != 4 || rs[1].Seq != 3 {
		t.Errorf("Receipts(limit 2) = %+v, %v; want seq 4 and 3, newest first", rs, err)
	}
	rs, err = ts.Receipts(t.Context(), ts.owner, 0)
	if err != nil || len(rs) != 4 {
		t.Errorf("Receipts(limit 0) = %d, %v; want all 4", len(rs), err)
	}
	for _, bad := range []int{-1, 1001} {
		_, err := ts.Receipts(t.Context(), ts.owner, bad)
		wantKind(t, "Receipts(bad limit)", err, custodian.KindInvalid)
	}
}

// TestReceiptChainTamper alters the stored receipts behind the service's back.
func TestReceiptChainTamper(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ts.mustPersona(id)
	}
	const n = 6 // the unlock and five personas
	verify := func() custodian.Verification {
		t.Helper()
		v, err := ts.VerifyReceipts(ctx, ts.owner)
		if err != nil {
			t.Fatalf("VerifyReceipts = %v; a broken chain is a result, not an error", err)
		}
		return v
	}
	if v := verify(); !v.OK || v.Count != n || len(v.Problems) != 0 {
		t.Fatalf("VerifyReceipts = %+v; want ok over %d", v, n)
	}
	get := func(seq uint64) []byte {
		var raw []byte
		if err := ts.store.View(func(tx custodian.Tx) error {
			var err error
			raw, _, err = tx.Get(custodian.BucketReceipts, custodian.ReceiptKey(seq))
			return err
		}); err != nil || raw == nil {
			t.Fatalf("read receipt %d: %v", seq, err)
		}
		return raw
	}
	put := func(seq uint64, raw []byte) {
		if err := ts.store.Memory.Update(func(tx custodian.Tx) error {
			if raw == nil {
				return tx.Delete(custodian.BucketReceipts, custodian.ReceiptKey(seq))
			}
			return tx.Put(custodian.BucketReceipts, custodian.ReceiptKey(seq), raw)
		}); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(seq uint64, f func(r *custodian.Receipt)) []byte {
		var r custodian.Receipt
		if err := json.Unmarshal(get(seq), &r); err != nil {
			t.Fatal(err)
		}
		f(&r)
		return mustJSON(t, &r)
	}

	tests := []struct {
		name    string
		seq     uint64
		tamper  func() []byte // the replacement; nil deletes
		problem string        // a substring of one problem
	}{
		{"changed operation", 3, func() []byte { return edit(3, func(r *custodian.Receipt) { r.Operation = "persona.delete" }) }, "receipt 3"},
		{"changed actor", 2, func() []byte { return edit(2, func(r *custodian.Receipt) { r.Actor = "consumer:x" }) }, "receipt 2"},
		{"changed records", 4, func() []byte { return edit(4, func(r *custodian.Receipt) { r.Records = []string{"z"} }) }, "receipt 4"},
		{"changed decision", 5, func() []byte { return edit(5, func(r *custodian.Receipt) { r.Decision = "deny" }) }, "receipt 5"},
		{"changed and rehashed", 3, func() []byte {
			return edit(3, func(r *custodian.Receipt) { r.Operation = "persona.delete"; r.Hash = custodian.ReceiptHash(r) })
		}, "receipt 4"},
		{"last changed and rehashed", n, func() []byte {
			return edit(n, func(r *custodian.Receipt) { r.Actor = "x"; r.Hash = custodian.ReceiptHash(r) })
		}, "head"},
		{"first deleted", 1, func() []byte { return nil }, "receipt 1"},
		{"middle deleted", 3, func() []byte { return nil }, "receipt 3"},
		{"last deleted", n, func() []byte { return nil }, "receipt 6"},
		{"garbage", 2, func() []byte { return []byte("not json") }, "receipt 2"},
		{"sequence swapped", 2, func() []byte { return get(3) }, "receipt 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := get(tt.seq)
			put(tt.seq, tt.tamper())
			defer put(tt.seq, orig)
			v := verify()
			if v.OK {
				t.Fatalf("VerifyReceipts after tampering = %+v; want not ok", v)
			}
			if !strings.Contains(strings.Join(v.Problems, "\n"), tt.problem) {
				t.Errorf("Problems = %q; want one mentioning %q", v.Problems, tt.problem)
			}
		})
	}
	if v := verify(); !v.OK {
		t.Fatalf("VerifyReceipts after restoring = %+v; want ok", v)
	}

	// A receipt appended beyond the recorded head.
	extra := edit(n, func(r *custodian.Receipt) { r.Seq = n + 1; r.Prev = r.Hash; r.Hash = custodian.ReceiptHash(r) })
	put(n+1, extra)
	if v := verify(); v.OK || !strings.Contains(strings.Join(v.Problems, "\n"), "beyond") {
		t.Errorf("VerifyReceipts with a receipt beyond the head = %+v; want a problem", v)
	}
	put(n+1, nil)

	// Listing a chain with a hole fails as an internal error, not silently.
	orig := get(3)
	put(3, nil)
	_, err := ts.Receipts(ctx, ts.owner, 100)
	wantKind(t, "Receipts with a missing receipt", err, custodian.KindInternal)
	put(3, orig)
}

// TestReceiptChainAcrossReload checks that the chain continues, unbroken,
// across Lock and Unlock.
func TestReceiptChainAcrossReload(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	for i, id := range []string{"a", "b", "c"} {
		ts.mustPersona(id)
		if err := ts.Lock(ctx, ts.owner); err != nil {
			t.Fatal(err)
		}
		ts.unlock()
		if i == 1 {
			ts.mustClaim("identity.full_name", "Ada", "a")
		}
	}
	rs := ts.receipts()
	prev := ""
	for i, r := range rs {
		if r.Seq != uint64(i+1) {
			t.Errorf("receipt %d has seq %d; want %d", i, r.Seq, i+1)
		}
		if r.Prev != prev {
			t.Errorf("receipt %d prev = %q; want %q", r.Seq, r.Prev, prev)
		}
		if h := custodian.ReceiptHash(&r); h != r.Hash {
			t.Errorf("receipt %d hash = %q; recomputes to %q", r.Seq, r.Hash, h)
		}
		prev = r.Hash
	}
	ops := []string{}
	for _, r := range rs {
		ops = append(ops, r.Operation)
	}
	want := []string{"vault.unlock",
		"persona.create", "vault.lock", "vault.unlock",
		"persona.create", "vault.lock", "vault.unlock", "proposal.create", "proposal.confirm",
		"persona.create", "vault.lock", "vault.unlock"}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("receipt operations (-want +got):\n%s", diff)
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || !v.OK || v.Count != uint64(len(want)) {
		t.Errorf("VerifyReceipts = %+v, %v; want ok over %d", v, err, len(want))
	}
}

// TestRefusedProposalReceipted: a consumer's refused proposal is a decision
// too, and leaves a deny receipt with its constraint.
func TestRefusedProposalReceipted(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"notes.*"}})
	tests := []struct {
		name       string
		scope      string
		mode       string
		key        string
		constraint string
	}{
		{"read token", "*", custodian.ModeRead, "notes.a", "mode_denied"},
		{"outside the token's scope", "notes.*", custodian.ModeWrite, "identity.name", "scope_exceeded"},
		{"outside the grant", "*", custodian.ModeWrite, "identity.name", "scope_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ts.mustPrincipal("app", tt.scope, tt.mode)
			_, err := ts.Propose(ctx, p, input[custodian.ProposalInput](ts, proposal(t, tt.key, "x")))
			if custodian.KindOf(err).String() != tt.constraint {
				t.Fatalf("Propose = %v; want %s", err, tt.constraint)
			}
			rs := ts.receipts()
			last := rs[len(rs)-1]
			if last.Operation != "proposal.create" || last.Decision != "deny" || last.Constraint != tt.constraint || last.Actor != "consumer:app" {
				t.Fatalf("last receipt = %+v; want a proposal.create deny %s by consumer:app", last, tt.constraint)
			}
		})
	}
}

// TestAuditExpiry: grants and tokens that ran out appear in the audit as
// EXPIRE entries at their expiry, newest first among the receipts.
func TestAuditExpiry(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}, expires: ts.clock.Now().Add(time.Hour)})
	if _, err := ts.MintServiceToken(ctx, input[custodian.TokenRequest](ts, mustJSON(t, map[string]any{"consumer": "app", "secret": secretOf("app"), "scope": "*", "ttl": "30m"}))); err != nil {
		t.Fatal(err)
	}
	entries, err := ts.Audit(ctx, ts.owner, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Action == "EXPIRE" {
			t.Fatalf("an EXPIRE entry before anything expired: %+v", e)
		}
	}
	ts.clock.Advance(2 * time.Hour)
	entries, err = ts.Audit(ctx, ts.owner, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 2 || entries[0].Action != "EXPIRE" || entries[0].Operation != "grant.expire" || entries[0].Consumer != "app" ||
		entries[1].Action != "EXPIRE" || entries[1].Operation != "token.expire" {
		t.Fatalf("audit after expiry = %+v; want the grant's then the token's EXPIRE first", entries[:min(3, len(entries))])
	}
}

// TestReceiptRetention: receipts older than the retention are rolled into
// a MAC'ed checkpoint (with the disclosed sets only they named); the chain
// still verifies across it, listings hold the kept receipts only, and an
// altered checkpoint, or a rolled receipt left behind, is found.
func TestReceiptRetention(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	if _, _, err := ts.PutSettings(ctx, ts.owner, input[custodian.SettingsInput](ts, []byte(`{"receipt_retention_days": 30, "reads_per_minute": 100000}`))); err != nil {
		t.Fatal(err)
	}
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"ret.*"}, expires: t0.Add(400 * 24 * time.Hour)})
	for i := 0; i < 12; i++ {
		ts.mustClaim(fmt.Sprintf("ret.k%02d", i), i)
	}
	read := func() {
		t.Helper()
		app := ts.mustPrincipal("app", "*", custodian.ModeRead)
		if res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"}); err != nil || len(res.Claims) != 12 {
			t.Fatalf("Context = %d claims, %v", len(res.Claims), err)
		}
	}
	read() // a set of 13 refs (12 claims and the grant), stored once
	old := ts.receipts()
	ts.clock.Advance(100 * 24 * time.Hour)
	read() // this month's copy of the same set
	if n, err := ts.RollReceipts(); err != nil || n != uint64(len(old)) {
		t.Fatalf("RollReceipts = %d, %v; want the %d receipts made before the retention", n, err, len(old))
	}
	v, err := ts.VerifyReceipts(ctx, ts.owner)
	if err != nil || !v.OK || v.Rolled != uint64(len(old)) || v.Checkpoints != 1 {
		t.Fatalf("VerifyReceipts after the roll = %+v, %v", v, err)
	}
	kept := ts.receipts()
	for _, r := range kept {
		if r.Seq <= old[0].Seq {
			t.Fatalf("receipt %d is listed after it was rolled", r.Seq)
		}
		if r.Set != "" && len(r.Records) != r.Count {
			t.Fatalf("receipt %d lists %d of its set's %d records", r.Seq, len(r.Records), r.Count)
		}
	}
	if n, err := ts.RollReceipts(); err != nil || n != 0 {
		t.Fatalf("a second RollReceipts = %d, %v; want nothing left to roll", n, err)
	}
	months := map[string]bool{}
	ts.store.View(func(tx custodian.Tx) error {
		return tx.ForEach(custodian.BucketSets, func(k string, _ []byte) error { months[k[:6]] = true; return nil })
	})
	if len(months) != 1 || !months[t0.Add(100*24*time.Hour).Format("200601")] {
		t.Errorf("disclosed sets kept for months %v; want only the read's after the roll", months)
	}

	// An altered checkpoint no longer verifies.
	if err := ts.store.Update(func(tx custodian.Tx) error {
		return tx.ForEach(custodian.BucketCheckpoints, func(k string, v []byte) error {
			var cp custodian.Checkpoint
			json.Unmarshal(v, &cp)
			cp.Deny, cp.Allow = cp.Deny+1, cp.Allow-1
			raw, _ := json.Marshal(cp)
			return tx.Put(custodian.BucketCheckpoints, k, raw)
		})
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || v.OK {
		t.Fatalf("VerifyReceipts with an altered checkpoint = %+v, %v; want a problem", v, err)
	}
}
