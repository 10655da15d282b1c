package custodian_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

// TestConcurrentProposals runs 50 proposals at once (meant for -race).
func TestConcurrentProposals(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	// 50 proposals from one token: above the default ten writes a minute.
	if _, _, err := ts.PutSettings(ctx, ts.owner, input[custodian.SettingsInput](ts, []byte(`{"writes_per_minute":1000}`))); err != nil {
		t.Fatal(err)
	}
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"notes.*"}})
	app := ts.mustPrincipal("app", "notes.*", custodian.ModeWrite)
	start := ts.revision()
	receiptsBefore := len(ts.receipts())

	const n = 50
	var (
		wg   sync.WaitGroup
		outs [n]custodian.Proposed
		errs [n]error
	)
	for i := range n {
		wg.Go(func() {
			p := app
			if i%2 == 0 {
				p = ts.owner
			}
			outs[i], errs[i] = ts.Propose(ctx, p, input[custodian.ProposalInput](ts, proposal(t, fmt.Sprintf("notes.n%02d", i), i)))
		})
	}
	wg.Wait()

	ids := map[string]bool{}
	var revs []uint64
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Propose %d = %v", i, errs[i])
			continue
		}
		if ids[outs[i].ProposalID] {
			t.Errorf("proposal id %s returned twice", outs[i].ProposalID)
		}
		ids[outs[i].ProposalID] = true
		revs = append(revs, outs[i].Revision)
	}
	slices.Sort(revs)
	for i, r := range revs {
		if r != start+uint64(i)+1 {
			t.Errorf("sorted revisions = %v; want %d..%d, each once", revs, start+1, start+n)
			break
		}
	}
	if got := ts.revision(); got != start+n {
		t.Errorf("revision = %d; want %d", got, start+n)
	}
	if q, err := ts.Review(ctx, ts.owner); err != nil || len(q) != n {
		t.Errorf("Review = %d proposals, %v; want %d", len(q), err, n)
	}
	if got := len(ts.receipts()) - receiptsBefore; got != n {
		t.Errorf("%d receipts added; want %d", got, n)
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || !v.OK {
		t.Errorf("VerifyReceipts = %+v, %v; want ok", v, err)
	}
	if got := ts.store.storedRevision(t); got != start+n {
		t.Errorf("stored revision = %d; want %d", got, start+n)
	}
}

// TestConcurrentReadsAndWrites mixes recipient reads with owner writes (for -race).
func TestConcurrentReadsAndWrites(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	c := ts.mustClaim("counter.value", 0)

	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if _, err := ts.Correct(ctx, ts.owner, c.Claim.ID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": i + 1}))); err != nil {
				t.Errorf("Correct = %v", err)
			}
		})
		wg.Go(func() {
			res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"})
			if err != nil || len(res.Claims) != 1 || res.Claims[0].Revision > res.Revision {
				t.Errorf("Context = %+v, %v; want the one claim at or before the result's revision", res, err)
			}
		})
		wg.Go(func() {
			if _, err := ts.ListClaims(ctx, ts.owner, "", ""); err != nil {
				t.Errorf("ListClaims = %v", err)
			}
		})
	}
	wg.Wait()
	vs, err := ts.Versions(ctx, ts.owner, c.Claim.ID)
	if err != nil || len(vs.Claims) != 11 {
		t.Errorf("Versions = %d, %v; want 11", len(vs.Claims), err)
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || !v.OK {
		t.Errorf("VerifyReceipts = %+v, %v; want ok", v, err)
	}
}

// TestCommitFailureLocks makes the store fail a commit: the write reports
// KindInternal, the service locks itself, and the next unlock sees exactly
// what the store holds.
func TestCommitFailureLocks(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	kept := ts.mustClaim("identity.full_name", "Ada", "work")
	rev := ts.revision()
	nReceipts := len(ts.receipts())
	before := ts.store.dump(t)

	ts.store.fail.Store(true)
	_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, proposal(t, "identity.nickname", "phantom-value")))
	wantKind(t, "Propose with a failing store", err, custodian.KindInternal)
	if !eventually(ts.Locked) {
		t.Fatalf("the service did not lock after a failed commit")
	}
	if !ts.vault.Locked() {
		t.Errorf("the vault keeps its keys after a failed commit")
	}
	_, err = ts.Authenticate(ctx, ts.ownerToken)
	wantKind(t, "Authenticate after a failed commit", err, custodian.KindLocked)
	if after := ts.store.dump(t); !bytes.Equal(before, after) {
		t.Errorf("a failed commit changed the store")
	}

	ts.store.fail.Store(false)
	ts.unlock()
	if got := ts.revision(); got != rev || got != ts.store.storedRevision(t) {
		t.Errorf("revision after reload = %d (stored %d); want %d", got, ts.store.storedRevision(t), rev)
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 0 {
		t.Errorf("Review after reload = %+v; want no phantom proposal", q)
	}
	if l, _ := ts.ListClaims(ctx, ts.owner, "", ""); len(l.Claims) != 1 || l.Claims[0].ID != kept.Claim.ID {
		t.Errorf("ListClaims after reload = %+v; want the one committed claim", l.Claims)
	}
	rs := ts.receipts()
	if len(rs) != nReceipts+1 || rs[len(rs)-1].Operation != "vault.unlock" {
		t.Errorf("receipts after reload: %d, last %q; want %d ending in the new unlock", len(rs), rs[len(rs)-1].Operation, nReceipts+1)
	}
	if v, err := ts.VerifyReceipts(ctx, ts.owner); err != nil || !v.OK {
		t.Errorf("VerifyReceipts after reload = %+v, %v; want ok", v, err)
	}
	p := ts.mustPropose(ts.owner, proposal(t, "identity.nickname", "real"))
	if p.Revision != rev+1 {
		t.Errorf("first write after reload has revision %d; want %d", p.Revision, rev+1)
	}
}

// TestCommitFailureFailsEveryWriteInFlight fails a commit while several
// writes are queued: none of them may report success.
func TestCommitFailureFailsEveryWriteInFlight(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	rev := ts.revision()
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	pause := func() { once.Do(func() { close(entered); <-release }) }
	ts.store.pause.Store(&pause)
	ts.store.fail.Store(true)

	const n = 8
	errs := make(chan error, n)
	go func() {
		_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, proposal(t, "a.first", 0)))
		errs <- err
	}()
	<-entered
	for i := 1; i < n; i++ {
		go func() {
			_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, proposal(t, fmt.Sprintf("a.n%d", i), i)))
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the others queue behind the paused commit
	close(release)
	for range n {
		err := <-errs
		if k := custodian.KindOf(err); err == nil || (k != custodian.KindInternal && k != custodian.KindLocked) {
			t.Errorf("a write in flight during a failed commit = %v; want KindInternal or KindLocked", err)
		}
	}
	if !eventually(ts.Locked) {
		t.Fatalf("the service did not lock after a failed commit")
	}
	ts.store.pause.Store(nil)
	ts.store.fail.Store(false)
	ts.unlock()
	if got := ts.revision(); got != rev {
		t.Errorf("revision after reload = %d; want %d", got, rev)
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 0 {
		t.Errorf("Review after reload = %d proposals; want none", len(q))
	}
}

// TestUncommittedWriteNotServed pauses a commit that will fail and reads in
// the meantime. A recipient must never receive the write; the owner's reads
// should not show it either, since it never becomes durable.
func TestUncommittedWriteNotServed(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	p := ts.mustPropose(ts.owner, proposal(t, "identity.full_name", "never-durable"))
	rev := ts.revision()

	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	pause := func() { once.Do(func() { close(entered); <-release }) }
	ts.store.pause.Store(&pause)
	ts.store.fail.Store(true)

	confirmed := make(chan error, 1)
	go func() {
		_, err := ts.Confirm(ctx, ts.owner, p.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":[]}`)))
		confirmed <- err
	}()
	<-entered // the confirmation is applied in memory, its commit paused

	type ctxResult struct {
		res custodian.ContextResult
		err error
	}
	read := make(chan ctxResult, 1)
	go func() {
		res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"})
		read <- ctxResult{res, err}
	}()

	// The owner's reads see the view, which already holds the write: they
	// must wait for its commit, and fail with it, rather than answer.
	type listResult struct {
		l   custodian.ClaimList
		err error
	}
	listed := make(chan listResult, 1)
	go func() {
		l, err := ts.ListClaims(ctx, ts.owner, "", "")
		listed <- listResult{l, err}
	}()
	status := make(chan custodian.Status, 1)
	go func() { status <- ts.Status(ctx, ts.owner) }()

	time.Sleep(20 * time.Millisecond) // let the reads reach their wait
	select {
	case l := <-listed:
		t.Errorf("ListClaims answered during the commit: %d claims, %v", len(l.l.Claims), l.err)
	default:
	}
	close(release)
	wantKind(t, "Confirm with a failing commit", <-confirmed, custodian.KindInternal)
	r := <-read
	if r.err == nil && len(r.res.Claims) != 0 {
		t.Errorf("a recipient received %d claims from a commit that failed", len(r.res.Claims))
	}
	if l := <-listed; l.err == nil && len(l.l.Claims) != 0 {
		t.Errorf("ListClaims(owner) = %d claims at revision %d from a commit that failed (durable revision %d)", len(l.l.Claims), l.l.Revision, rev)
	}
	if st := <-status; st.FieldCount != nil && *st.FieldCount != 0 {
		t.Errorf("Status(owner) counted %d fields from a commit that failed", *st.FieldCount)
	}
	if !eventually(ts.Locked) {
		t.Fatalf("the service did not lock after a failed commit")
	}
	ts.store.pause.Store(nil)
	ts.store.fail.Store(false)
	ts.unlock()
	if l, _ := ts.ListClaims(ctx, ts.owner, "", ""); len(l.Claims) != 0 {
		t.Errorf("after reload ListClaims = %d; want 0", len(l.Claims))
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 1 || q[0].ID != p.ProposalID {
		t.Errorf("after reload the proposal is not pending again: %+v", q)
	}
}

// TestUnencodableWriteLocks: a grant whose expiry lies past year 9999 once
// in UTC is refused; and should any write ever fail to encode after it has
// changed the view, the service locks rather than serve that view.
func TestUnencodableWriteLocks(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	_, err := ts.CreateGrant(ctx, ts.owner, input[custodian.GrantInput](ts, []byte(`{"recipient":{"kind":"consumer","id":"app"},"purpose":"assist","operations":["read"],"selectors":{"keys":["*"]},"expires_at":"9999-12-31T23:59:59-23:59"}`)))
	wantKind(t, "CreateGrant(expiry past 9999 in UTC)", err, custodian.KindInvalid)
	grants, err := ts.ListGrants(ctx, ts.owner)
	if err != nil || len(grants) != 0 {
		t.Fatalf("ListGrants = %v, %v; want none", grants, err)
	}
	_, err = ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, proposal(t, "a.b", 1, map[string]any{"valid_from": "9999-12-31T23:59:59-23:59"})))
	if err != nil {
		// Stored with its own offset, this date encodes; either answer is
		// fine as long as the service stays consistent.
		wantKind(t, "Propose(valid_from at the edge)", err, custodian.KindInvalid)
	}
	if ts.Locked() {
		t.Fatal("the service locked on a refused document")
	}

	rev := ts.revision()
	wantKind(t, "a write that cannot be encoded", ts.CommitUnencodable(), custodian.KindInternal)
	if !eventually(ts.Locked) {
		t.Fatal("the service did not lock after a write it could not encode")
	}
	ts.unlock()
	if got := ts.revision(); got != rev {
		t.Fatalf("revision after reload = %d; want %d (the failed write is gone)", got, rev)
	}
}

// TestFailedJobAfterChangeLocks runs a job that changes the view (an
// active claim, a revision, a staged write) and then fails. What it changed
// is never stored: the write answers KindInternal, no read serves the
// half-applied claim, the service locks, and after the next unlock the view
// is the store's again.
func TestFailedJobAfterChangeLocks(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	kept := ts.mustClaim("identity.full_name", "Ada")

	// A write refused before it changes anything is only refused.
	_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, []byte(`{"key":"Not A Key"}`)))
	wantKind(t, "Propose(bad key)", err, custodian.KindSchema)
	if ts.Locked() {
		t.Fatal("a refused write locked the service")
	}

	rev := ts.revision()
	// Let the snapshot the unlock started end (and write one of the view
	// now), so that only the failing job could change the store below.
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	before := ts.store.dump(t)
	err = ts.CommitFailingAfterChange(ts.owner, "identity.nickname")
	wantKind(t, "a job that fails after changing the view", err, custodian.KindInternal)

	// Until the lock, every read fails or shows only what is stored.
	if l, err := ts.ListClaims(ctx, ts.owner, "", ""); err == nil {
		for _, c := range l.Claims {
			if c.Key == "identity.nickname" {
				t.Errorf("ListClaims(owner) served the half-applied claim %s at revision %d", c.ID, l.Revision)
			}
		}
	}
	if res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"}); err == nil {
		for _, c := range res.Claims {
			if c.Key == "identity.nickname" {
				t.Errorf("Context(app) served the half-applied claim %s", c.ID)
			}
		}
	}
	if f, err := ts.GetField(ctx, ts.owner, "identity.nickname", ""); err == nil {
		t.Errorf("GetField(owner, identity.nickname) = %+v; want an error", f)
	}
	if !eventually(ts.Locked) {
		t.Fatal("the service did not lock after a job failed having changed the view")
	}
	if after := ts.store.dump(t); !bytes.Equal(before, after) {
		t.Errorf("the failed job changed the store")
	}

	ts.unlock()
	if got := ts.revision(); got != rev || got != ts.store.storedRevision(t) {
		t.Errorf("revision after reload = %d (stored %d); want %d", got, ts.store.storedRevision(t), rev)
	}
	l, err := ts.ListClaims(ctx, ts.owner, "", "")
	if err != nil || len(l.Claims) != 1 || l.Claims[0].ID != kept.Claim.ID {
		t.Errorf("ListClaims after reload = %+v, %v; want only the committed claim", l.Claims, err)
	}
	if rep, err := ts.Check(ctx, ts.owner); err != nil || !rep.OK {
		t.Errorf("Check after reload = %+v, %v; want ok", rep, err)
	}
	if w := ts.mustClaim("identity.nickname", "real"); w.Revision <= rev {
		t.Errorf("first write after reload has revision %d; want above %d", w.Revision, rev)
	}
}

// TestConcurrentOwnerWritesOnDisk: sixteen owners' writers new and
// correcting the same fields, on the daemon's own storage, share group
// commits and graph updates; every write is answered and the graph agrees
// with the store afterwards. (It once spun forever in bbolt's Cursor.Last
// inside a write transaction that had deleted keys.)
func TestConcurrentOwnerWritesOnDisk(t *testing.T) {
	ts := newTestService(t, onDisk(t))
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				key := fmt.Sprintf("notes.n%05d", (c*1000+i)%40)
				if _, _, err := ts.PutField(t.Context(), ts.owner, key, input[custodian.FieldInput](ts, []byte(fmt.Sprintf(`{"value": "v%d"}`, i)))); err != nil {
					t.Errorf("PutField(%s) = %v", key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := ts.Check(t.Context(), ts.owner)
	if err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
	if l, err := ts.ListClaims(t.Context(), ts.owner, "notes.*", ""); err != nil || len(l.Claims) != 40 {
		t.Fatalf("ListClaims(notes.*) = %d claims, %v; want 40", len(l.Claims), err)
	}
}

// A stored claim that no longer reads back (a damaged file) fails the
// write that needs it as internal, and locks the vault: the journal, which
// runs every write, survives it, and no stored byte reaches the error.
func TestUnreadableStoredClaim(t *testing.T) {
	for _, tc := range []struct {
		name, stored string
	}{
		{"not JSON", `{"value":"the secret stored value", broken`},
		{"wrong shape", `{"value":"the secret stored value","version":"one"}`},
		{"missing", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestService(t)
			ctx := t.Context()
			w := ts.mustClaim("work.role", "engineer")
			ts.mustClaim("work.team", "platform")
			// Damage the stored head behind the journal's back, as a
			// bad disk would. The claim cache of one byte holds no head.
			err := ts.store.Memory.Update(func(tx custodian.Tx) error {
				k := custodian.VersionKey(w.Claim.ID, w.Claim.Version)
				if tc.stored == "" {
					return tx.Delete(custodian.BucketClaims, k)
				}
				return tx.Put(custodian.BucketClaims, k, []byte(tc.stored))
			})
			if err != nil {
				t.Fatal(err)
			}
			// A read that meets it panics with the unreadable claim,
			// which a server recovers (HTTP and MCP do) — the owner's
			// read and an app's alike. Neither leaves the view locked:
			// a write still goes through after them.
			ts.mustConsumer("app")
			app := ts.mustPrincipal("app", "*", "read")
			ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"work.*"}})
			for name, read := range map[string]func(){
				"the owner's GetField": func() { ts.GetField(ctx, ts.owner, "work.role", "") },
				"an app's Context":     func() { ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"}) },
			} {
				func() {
					defer func() {
						if _, ok := custodian.Unreadable(recover()); !ok {
							t.Errorf("%s of the damaged claim: want a panic that Unreadable recognises", name)
						}
					}()
					read()
				}()
				if _, _, err := ts.PutField(ctx, ts.owner, "work.team", input[custodian.FieldInput](ts, []byte(`{"value":"platform two"}`))); err != nil {
					t.Fatalf("PutField(work.team) after %s = %v", name, err)
				}
			}
			_, _, err = ts.PutField(ctx, ts.owner, "work.role", input[custodian.FieldInput](ts, []byte(`{"value":"manager"}`)))
			wantKind(t, "PutField on the damaged claim", err, custodian.KindInternal)
			if msg := fmt.Sprint(err); !strings.Contains(msg, w.Claim.ID) || strings.Contains(msg, "secret") {
				t.Errorf("error %q: want the claim's id and none of its stored bytes", msg)
			}
			if !eventually(ts.Locked) {
				t.Fatal("the vault did not lock after a write met a damaged claim")
			}
			// The service goes on: unlocked again, the other claims serve.
			ts.unlock()
			if _, err := ts.GetField(ctx, ts.owner, "work.team", ""); err != nil {
				t.Errorf("GetField(work.team) after the unlock = %v", err)
			}
		})
	}
}
