package custodian_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestCheckFindsClaimProblems: Check reports a meta in the store that the
// view lacks, a claim of the view whose meta the store lacks, and a meta
// that differs from the view's, whatever the chunks it compares them in.
func TestCheckFindsClaimProblems(t *testing.T) {
	for _, chunk := range []int{1, 2, 3, 1024} {
		t.Run(fmt.Sprint("chunk ", chunk), func(t *testing.T) {
			ts := newTestService(t, custodian.WithCheckTuning(chunk, nil))
			ctx := t.Context()
			var ids []string
			for i := range 7 {
				ids = append(ids, ts.mustClaim(fmt.Sprintf("work.k%d", i), "value").Claim.ID)
			}
			slices.Sort(ids)
			if rep, err := ts.Check(ctx, ts.owner); err != nil || !rep.OK || len(rep.Claims) != 0 {
				t.Fatalf("Check before = %+v, %v; want ok", rep, err)
			}
			stray := ids[2] + "x" // sorts between ids[2] and ids[3]
			err := ts.store.Memory.Update(func(tx custodian.Tx) error {
				raw, _, err := tx.Get(custodian.BucketMetas, ids[0])
				if err != nil {
					return err
				}
				if err := tx.Put(custodian.BucketMetas, stray, raw); err != nil {
					return err
				}
				if err := tx.Delete(custodian.BucketMetas, ids[4]); err != nil {
					return err
				}
				raw, _, err = tx.Get(custodian.BucketMetas, ids[6])
				if err != nil {
					return err
				}
				return tx.Put(custodian.BucketMetas, ids[6], bytes.Replace(raw, []byte(`"status":"active"`), []byte(`"status":"deleted"`), 1))
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ts.Check(ctx, ts.owner)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"claim " + stray + ": in the store, not in the view",
				"claim " + ids[4] + ": in the view, not in the store",
				"claim " + ids[6] + ": the view's meta differs from the store's",
			}
			slices.Sort(want)
			if rep.OK || !slices.Equal(rep.Claims, want) {
				t.Errorf("Check = ok %v, claims %q; want not ok, claims %q", rep.OK, rep.Claims, want)
			}
		})
	}
}

// TestCheckLetsWritesThrough: Check compares the graph (held where it was)
// and the claims (a chunk at a time) outside the journal, so writes go
// through while it runs (at millions of claims it reads for minutes); what
// they change is not reported as a problem, and the graph gets their
// changes once the check lets it go.
func TestCheckLetsWritesThrough(t *testing.T) {
	for _, stage := range []string{"graph", "claims"} {
		t.Run(stage, func(t *testing.T) {
			tuning, paused, resume := pauseCheck(stage)
			collected := make(chan int, 100)
			ts := newTestService(t, tuning, custodian.WithHeldHook(func(n int) { collected <- n }))
			ctx := t.Context()
			ts.mustPersona("work")
			var ids []string
			for i := range 6 {
				ids = append(ids, ts.mustClaim(fmt.Sprintf("work.k%d", i), "value", "work").Claim.ID)
			}
			type result struct {
				rep custodian.CheckReport
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, err := ts.Check(ctx, ts.owner)
				done <- result{rep, err}
			}()
			<-paused
			// Were the check in the journal, none of these would return
			// until it ended, and the test would hang.
			ts.mustClaim("work.new", "written during the check", "work")
			if _, _, err := ts.PutField(ctx, ts.owner, "work.k1", input[custodian.FieldInput](ts, []byte(`{"value":"changed during the check"}`))); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{ids[0], ids[5]} {
				if _, err := ts.DeleteClaim(ctx, ts.owner, id); err != nil {
					t.Fatal(err)
				}
			}
			if stage == "graph" {
				// The worker received their deltas and keeps them while
				// the check holds the graph (were the hold nothing, it
				// would apply them and this would wait for ever).
				for n := range collected {
					if n > 0 {
						break
					}
				}
			}
			close(resume)
			r := <-done
			if r.err != nil || !r.rep.OK || len(r.rep.Claims) != 0 {
				t.Errorf("Check with writes during it = %+v, %v; want ok", r.rep, r.err)
			}
			if stage == "graph" && r.rep.Graph.Watermark != r.rep.Graph.Revision {
				t.Errorf("graph compared at watermark %d, the check's revision %d: want the graph held there",
					r.rep.Graph.Watermark, r.rep.Graph.Revision)
			}
			if msg := fmt.Sprint(r.rep); strings.Contains(msg, "changed during") {
				t.Errorf("a value in the report: %s", msg)
			}
			// The graph has the writes of the pause now (they changed
			// edges: a new claim in a persona, two deleted).
			rep, err := ts.Check(ctx, ts.owner)
			if err != nil || !rep.OK || rep.Graph.Watermark != rep.Graph.Revision {
				t.Errorf("Check after = %+v, %v; want ok, the graph at the store's revision", rep, err)
			}
			if rep.Graph.Revision <= r.rep.Graph.Revision || rep.Graph.Edges == r.rep.Graph.Edges {
				t.Errorf("graph at revision %d with %d edges after the check, %d with %d during it; want a later revision, other edges",
					rep.Graph.Revision, rep.Graph.Edges, r.rep.Graph.Revision, r.rep.Graph.Edges)
			}
		})
	}
}

// TestCheckLetsManyDeltasThrough: while a check holds the graph, the
// worker keeps receiving deltas however many edges they carry (once it
// stopped at a batch's edge limit, the queue filled, and the journal,
// waiting to hand it a delta, held every write until the check ended);
// the graph gets them all, in order, when the check lets it go.
func TestCheckLetsManyDeltasThrough(t *testing.T) {
	ts, done, resume := startHeldCheck(t, custodian.WithMaxApplyEdges(1)) // every delta fills a batch
	ctx := t.Context()
	// One group each, more than the worker's queue holds.
	for i := range custodian.MaxGroup + 50 {
		ts.mustClaim(fmt.Sprintf("work.n%d", i), "written while the graph is held", "work")
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK || rep.Graph.Watermark != rep.Graph.Revision {
		t.Errorf("Check after = %+v, %v; want ok, the graph at the store's revision", rep, err)
	}
}

// TestCheckDuringLock: a lock while Check runs waits for one chunk of its
// claims at most, and breaks its hold of the graph; the check then stops
// with vault_locked (or has ended); neither hangs (Check once took the
// service's life lock twice, which deadlocked with a lock waiting between
// the two). A traversal waiting for the held graph does not keep the lock
// waiting either, and a check whose hold a lock broke says so, even when
// the vault is open again by then.
func TestCheckDuringLock(t *testing.T) {
	for _, stage := range []string{"graph", "claims"} {
		t.Run(stage, func(t *testing.T) {
			tuning, paused, resume := pauseCheck(stage)
			ts := newTestService(t, tuning)
			ctx := t.Context()
			for i := range 6 {
				ts.mustClaim(fmt.Sprintf("work.k%d", i), "value")
			}
			done := make(chan error, 1)
			go func() {
				_, err := ts.Check(ctx, ts.owner)
				done <- err
			}()
			<-paused
			traversed := make(chan error, 1)
			if stage == "graph" {
				// A write the graph does not have while it is held, and a
				// traversal that waits for it (with the vault open).
				ts.mustClaim("work.during", "value")
				go func() {
					_, err := ts.Traverse(ctx, ts.owner, custodian.NeighborQuery{Node: "self"})
					traversed <- err
				}()
			}
			locked := make(chan error, 1)
			go func() { locked <- ts.Lock(ctx, ts.owner) }()
			if stage == "graph" {
				// The check compares outside the vault's life lock, and
				// the lock breaks its hold of the graph: the traversal and
				// the lock go through while the check is paused.
				if err := <-locked; err != nil {
					t.Fatal(err)
				}
				if err := <-traversed; err != nil && custodian.KindOf(err) != custodian.KindLocked {
					t.Fatalf("traversal across a lock: %v", err)
				}
				// Open again before the check goes on: what it compares
				// now is not what it held, and it says so.
				ts.unlock()
			}
			close(resume)
			err := <-done
			if stage == "claims" {
				// The lock waits for the chunk under way; whether the
				// check's next step comes before it is the scheduler's.
				if lerr := <-locked; lerr != nil {
					t.Fatal(lerr)
				}
				if err == nil {
					return
				}
			}
			wantKind(t, "Check across a lock", err, custodian.KindLocked)
		})
	}
}

// TestCheckKeepsTheGraphsOtherUsersOutOfTheJournal: a graph rebuild, a
// graph export or a second check started while a check holds the graph
// waits for it outside the journal, so writes go on meanwhile (each waits
// in the journal for the graph to have every write, which it cannot while
// held: the journal, and every write behind it, would wait as long as the
// check compares the graph).
func TestCheckKeepsTheGraphsOtherUsersOutOfTheJournal(t *testing.T) {
	users := map[string]func(ts *testService) error{
		"rebuild": func(ts *testService) error {
			_, err := ts.RebuildGraph(ts.t.Context(), ts.owner)
			return err
		},
		"export": func(ts *testService) error {
			return ts.ExportGraph(ts.t.Context(), ts.owner, io.Discard)
		},
		"check": checkOK,
	}
	for _, name := range slices.Sorted(maps.Keys(users)) {
		t.Run(name, func(t *testing.T) {
			waiting := make(chan string, 1)
			ts, done, resume := startHeldCheck(t, custodian.WithGraphWaitHook(func(op string) { waiting <- op }))
			// A delta the held graph lacks, then the other user.
			ts.mustClaim("work.k1", "value", "work")
			used := make(chan error, 1)
			go func() { used <- users[name](ts) }()
			<-waiting // for the check, outside the journal
			for i := range 3 {
				ts.mustClaim(fmt.Sprintf("work.w%d", i), "written while the "+name+" waits", "work")
			}
			close(resume)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := <-used; err != nil {
				t.Fatalf("%s after the check: %v", name, err)
			}
		})
	}
}

// TestCheckWaitsForTheGroupInFlight: a write the view has applied but the
// store has not committed yet (its group in flight) is not a difference:
// the check compares at a cut where the store has every group the view
// has, waiting for the one in flight.
func TestCheckWaitsForTheGroupInFlight(t *testing.T) {
	paused, resume := make(chan struct{}), make(chan struct{})
	inUpdate, commit := make(chan struct{}), make(chan struct{})
	var once sync.Once
	letCommit := func() { once.Do(func() { close(commit) }) }
	first := true
	tuning := custodian.WithCheckTuning(2, func(at string) {
		switch {
		case at == "claims" && first:
			first = false
			close(paused)
			<-resume
		case at == "cut", at == "claims":
			// The check waits for the group in flight: let it commit
			// (at the next chunk, had it not waited).
			letCommit()
		}
	})
	ts := newTestService(t, tuning)
	ctx := t.Context()
	byID := map[string]string{}
	for i := range 4 {
		key := fmt.Sprintf("work.k%d", i)
		byID[ts.mustClaim(key, "value").Claim.ID] = key
	}
	firstKey := byID[slices.Sorted(maps.Keys(byID))[0]] // in the first chunk
	done := make(chan custodian.CheckReport, 1)
	go func() {
		rep, err := ts.Check(ctx, ts.owner)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	<-paused
	hold := func() { close(inUpdate); <-commit }
	ts.store.pause.Store(&hold)
	written := make(chan error, 1)
	go func() {
		_, _, err := ts.PutField(ctx, ts.owner, firstKey, input[custodian.FieldInput](ts, []byte(`{"value":"in flight"}`)))
		written <- err
	}()
	<-inUpdate // applied to the view, not committed
	ts.store.pause.Store(nil)
	close(resume)
	rep := <-done
	letCommit() // had the check not waited for it
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Claims) != 0 {
		t.Errorf("Check with a group in flight = %+v; want ok", rep)
	}
}

// checkOK runs a check as the owner; an error unless it finds nothing.
func checkOK(ts *testService) error {
	rep, err := ts.Check(ts.t.Context(), ts.owner)
	if err == nil && !rep.OK {
		err = fmt.Errorf("check: %+v", rep)
	}
	return err
}

// goCheck starts checkOK; its answer comes on the returned channel.
func goCheck(ts *testService) <-chan error {
	done := make(chan error, 1)
	go func() { done <- checkOK(ts) }()
	return done
}

// startHeldCheck makes a service with a claim in persona work, and starts
// a check of it that it pauses holding the graph (close resume to let it
// go on); its answer comes on done. opts configure the service.
func startHeldCheck(t *testing.T, opts ...func(*custodian.Config)) (ts *testService, done <-chan error, resume chan struct{}) {
	tuning, paused, resume := pauseCheck("graph")
	ts = newTestService(t, append(opts, tuning)...)
	ts.mustPersona("work")
	ts.mustClaim("work.k0", "value", "work")
	done = goCheck(ts)
	<-paused
	return ts, done, resume
}

// pauseCheck returns an option making Check compare claims two at a time
// and stop the first time it reaches stage: paused is closed then, and it goes on once resume
// is closed.
func pauseCheck(stage string) (opt func(*custodian.Config), paused, resume chan struct{}) {
	paused, resume = make(chan struct{}), make(chan struct{})
	first := true
	opt = custodian.WithCheckTuning(2, func(at string) {
		if at == stage && first {
			first = false
			close(paused)
			<-resume
		}
	})
	return opt, paused, resume
}
