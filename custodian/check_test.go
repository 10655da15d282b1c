package custodian_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestCheckFindsClaimProblems: Check reports a meta in the store that the
// view lacks, a claim of the view whose meta the store lacks, and a meta
// that differs from the view's, whatever the chunks it compares them in.
func TestCheckFindsClaimProblems(t *testing.T) {
	for _, chunk := range []int{1, 2, 3, 1024} {
		t.Run(fmt.Sprint("chunk ", chunk), func(t *testing.T) {
			t.Cleanup(custodian.SetCheckTuning(chunk, nil))
			ts := newTestService(t)
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

// TestCheckLetsWritesThrough: Check compares the claims outside the
// journal, a chunk at a time, so writes go through while it runs (at
// millions of claims it reads for minutes); what they change is not
// reported as a problem.
func TestCheckLetsWritesThrough(t *testing.T) {
	paused, resume := make(chan struct{}), make(chan struct{})
	first := true
	t.Cleanup(custodian.SetCheckTuning(2, func() {
		if first {
			first = false
			close(paused)
			<-resume
		}
	}))
	ts := newTestService(t)
	ctx := t.Context()
	var ids []string
	for i := range 6 {
		ids = append(ids, ts.mustClaim(fmt.Sprintf("work.k%d", i), "value").Claim.ID)
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
	// Check is between two chunks: were it in the journal, none of these
	// would return until it ended, and the test would hang.
	ts.mustClaim("work.new", "written during the check")
	if _, _, err := ts.PutField(ctx, ts.owner, "work.k1", []byte(`{"value":"changed during the check"}`)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ids[0], ids[5]} {
		if _, err := ts.DeleteClaim(ctx, ts.owner, id); err != nil {
			t.Fatal(err)
		}
	}
	close(resume)
	r := <-done
	if r.err != nil || !r.rep.OK || len(r.rep.Claims) != 0 {
		t.Errorf("Check with writes during it = %+v, %v; want ok", r.rep, r.err)
	}
	if rep, err := ts.Check(ctx, ts.owner); err != nil || !rep.OK {
		t.Errorf("Check after = %+v, %v; want ok", rep, err)
	}
	if msg := fmt.Sprint(r.rep.Claims); strings.Contains(msg, "changed during") {
		t.Errorf("a value in the report: %s", msg)
	}
}
