package custodian_test

import (
	"sync"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestReadDecidedInCommitOrder: a recipient read whose snapshot was taken
// before a revocation, but whose receipt commits after it, is decided again
// and refused. The journal is held on a write so that the revocation queues
// ahead of the read's receipt.
func TestReadDecidedInCommitOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(ts *testService, grantID, claimID string) error
	}{
		{"grant revoked", func(ts *testService, g, _ string) error {
			_, err := ts.RevokeGrant(t.Context(), ts.owner, g)
			return err
		}},
		{"claim deleted", func(ts *testService, _, c string) error {
			_, err := ts.DeleteClaim(t.Context(), ts.owner, c)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestService(t)
			ctx := t.Context()
			ts.mustConsumer("app")
			w := ts.mustClaim("prefs.color", "blue")
			g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"prefs.*"}})
			app := ts.mustPrincipal("app", "*", custodian.ModeRead)
			ts.snapshotSettled()

			entered := make(chan struct{})
			release := make(chan struct{})
			var once sync.Once
			pause := func() { once.Do(func() { close(entered); <-release }) }
			ts.store.pause.Store(&pause)
			go ts.mustPersona("holder") // occupies the journal until released
			<-entered

			revoked := make(chan error, 1)
			go func() { revoked <- tc.revoke(ts, g.ID, w.Claim.ID) }()
			ts.await(func() bool { return ts.QueuedJobs() == 1 }) // the revocation queues first
			type result struct {
				read custodian.ClaimRead
				err  error
			}
			read := make(chan result, 1)
			go func() {
				r, err := ts.GetClaim(ctx, app, w.Claim.ID, "assist")
				read <- result{r, err}
			}()
			ts.await(func() bool { return ts.QueuedJobs() == 2 }) // then the read, its snapshot taken
			ts.store.pause.Store(nil)
			close(release)
			if err := <-revoked; err != nil {
				t.Fatal(err)
			}
			r := <-read
			revokedAt := uint64(0)
			for _, rc := range ts.receipts() {
				switch {
				case rc.Operation == "grant.revoke" || rc.Operation == "claim.delete":
					revokedAt = rc.Seq
				case rc.Operation == "claim.read" && rc.Decision == "allow" && revokedAt != 0:
					t.Fatalf("receipt %d allows a read after the %s receipt %d", rc.Seq, tc.name, revokedAt)
				}
			}
			if r.err == nil && revokedAt != 0 {
				// Allowed only if its receipt came before the revocation's.
				t.Logf("read allowed before the revocation committed: %s", r.read.Claim.Value)
			}
		})
	}
}

// TestSingleUseGrant: a single-use grant serves exactly one read, even when
// several readers race for it.
func TestSingleUseGrant(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	w := ts.mustClaim("prefs.color", "blue")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"prefs.*"}, usage: "single"})
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	var wg sync.WaitGroup
	var mu sync.Mutex
	served := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.GetClaim(ctx, app, w.Claim.ID, "assist"); err == nil {
				mu.Lock()
				served++
				mu.Unlock()
			} else {
				wantKind(t, "GetClaim after the single use", err, custodian.KindNotFound)
			}
		}()
	}
	wg.Wait()
	if served != 1 {
		t.Fatalf("a single-use grant served %d reads; want 1", served)
	}
	res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist"})
	if err != nil || len(res.Claims) != 0 {
		t.Fatalf("Context after the single use = %d claims, %v; want none", len(res.Claims), err)
	}
	grants, err := ts.ListGrants(ctx, ts.owner)
	if err != nil || len(grants) != 1 || grants[0].SpentAt == nil {
		t.Fatalf("grants = %+v, %v; want the grant spent", grants, err)
	}
}
