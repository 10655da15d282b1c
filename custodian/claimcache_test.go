package custodian_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

// TestMetasFromBeforeTheirIndexFields: a store whose claim metas predate
// the index fields (key, subject, tier, kind, head revision) unlocks, is
// indexed from the claims' heads, serves the same fields, and has its metas
// upgraded by the unlock so that the next unlock reads metas alone.
func TestMetasFromBeforeTheirIndexFields(t *testing.T) {
	ctx := t.Context()
	ts := newTestService(t)
	ts.mustPersona("work")
	ts.mustClaim("work.employer", "Analytical Engines Ltd", "work")
	w := ts.mustClaim("work.title", "engineer", "work")
	if _, err := ts.Correct(ctx, ts.owner, w.Claim.ID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": "lead engineer"}))); err != nil {
		t.Fatal(err)
	}
	gone := ts.mustClaim("work.desk", "4F")
	if _, err := ts.DeleteClaim(ctx, ts.owner, gone.Claim.ID); err != nil {
		t.Fatal(err)
	}
	before, err := ts.FieldsInCategory(ctx, ts.owner, "work", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}

	indexFields := []string{"key", "subject", "tier", "kind", "head_revision"}
	strip := func(tx custodian.Tx) error {
		metas := map[string][]byte{}
		if err := tx.ForEach("claim_meta", func(k string, v []byte) error {
			metas[k] = v
			return nil
		}); err != nil {
			return err
		}
		// A store from before has no snapshot of the metas either.
		for _, k := range []string{"claim_meta_snapshot", "claim_meta_snapshot_log"} {
			if err := tx.Delete("meta", k); err != nil {
				return err
			}
		}
		for k, v := range metas {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			for _, f := range indexFields {
				delete(m, f)
			}
			raw, _ := json.Marshal(m)
			if err := tx.Put("claim_meta", k, raw); err != nil {
				return err
			}
		}
		return nil
	}
	if err := ts.store.Update(strip); err != nil {
		t.Fatal(err)
	}
	ts.unlock()

	after, err := ts.FieldsInCategory(ctx, ts.owner, "work", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, after.Fields), mustJSON(t, before.Fields); string(got) != string(want) {
		t.Errorf("fields after the upgrade = %s; want %s", got, want)
	}
	vs, err := ts.Versions(ctx, ts.owner, w.Claim.ID)
	if err != nil || len(vs.Claims) != 2 || string(vs.Claims[1].Value) != `"lead engineer"` {
		t.Errorf("Versions = %+v, %v; want both versions", vs, err)
	}
	// The unlock wrote the index fields back.
	if err := ts.store.View(func(tx custodian.Tx) error {
		return tx.ForEach("claim_meta", func(k string, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			if m["head_revision"] == nil {
				t.Errorf("meta %s after the unlock = %s; want its index fields", k, v)
			}
			if m["status"] == "active" && (m["key"] == nil || m["tier"] == nil) {
				t.Errorf("active meta %s after the unlock = %s; want key and tier", k, v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOwnProposalsByApp: an app's question about its proposals lists its
// own (pending and decided) from the per-app index: not another app's, not
// the owner's, none of a removed namesake's; and a store from before the
// index gets it at the unlock.
func TestOwnProposalsByApp(t *testing.T) {
	ctx := t.Context()
	ts := newTestService(t)
	for _, app := range []string{"tutor", "coach"} {
		ts.mustConsumer(app)
		ts.mustGrant(grantSpec{recipient: app, ops: []string{"contribute"}, keys: []string{"learning.*"}})
	}
	tutor := ts.mustPrincipal("tutor", "*", "write")
	coach := ts.mustPrincipal("coach", "*", "write")
	ts.clock.Advance(time.Second)
	t1 := ts.mustPropose(tutor, proposal(t, "learning.a", "one"))
	t2 := ts.mustPropose(tutor, proposal(t, "learning.b", "two"))
	c1 := ts.mustPropose(coach, proposal(t, "learning.c", "three"))
	ts.mustPropose(ts.owner, proposal(t, "learning.d", "four"))
	ts.mustConfirm(t2.ProposalID)

	ids := func(p custodian.Principal) []string {
		t.Helper()
		got, err := ts.OwnProposals(ctx, p, "")
		if err != nil {
			t.Fatalf("OwnProposals = %v", err)
		}
		var out []string
		for _, s := range got.Proposals {
			out = append(out, s.ProposalID+":"+s.Status)
		}
		slices.Sort(out)
		return out
	}
	wantTutor := []string{t1.ProposalID + ":proposed", t2.ProposalID + ":confirmed"}
	slices.Sort(wantTutor)
	check := func(when string) {
		t.Helper()
		if got := ids(tutor); !slices.Equal(got, wantTutor) {
			t.Errorf("%s: tutor's proposals = %q; want %q", when, got, wantTutor)
		}
		if got, want := ids(coach), []string{c1.ProposalID + ":proposed"}; !slices.Equal(got, want) {
			t.Errorf("%s: coach's proposals = %q; want %q", when, got, want)
		}
	}
	check("indexed as proposed")

	// A store from before the index: the unlock builds it.
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Update(func(tx custodian.Tx) error {
		var keys []string
		if err := tx.ForEach("proposals_by_app", func(k string, _ []byte) error {
			keys = append(keys, k)
			return nil
		}); err != nil {
			return err
		}
		if len(keys) != 3 {
			t.Errorf("index entries = %q; want the apps' three proposals", keys)
		}
		for _, k := range keys {
			if err := tx.Delete("proposals_by_app", k); err != nil {
				return err
			}
		}
		// and from before the index of pending proposals
		var pending []string
		if err := tx.ForEach("proposals_pending", func(k string, _ []byte) error {
			pending = append(pending, k)
			return nil
		}); err != nil {
			return err
		}
		for _, k := range pending {
			if err := tx.Delete("proposals_pending", k); err != nil {
				return err
			}
		}
		if err := tx.Delete("meta", "pending_index"); err != nil {
			return err
		}
		return tx.Delete("meta", "proposals_by_app_index")
	}); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if err := ts.store.View(func(tx custodian.Tx) error {
		n := 0
		if err := tx.ForEach("proposals_pending", func(string, []byte) error { n++; return nil }); err != nil {
			return err
		}
		_, flagged, err := tx.Get("meta", "pending_index")
		if n != 3 || !flagged {
			t.Errorf("after the unlock: %d pending proposals indexed, flag %v; want the three waiting, flagged", n, flagged)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tutor = ts.mustPrincipal("tutor", "*", "write")
	coach = ts.mustPrincipal("coach", "*", "write")
	check("rebuilt at the unlock")

	// A namesake of a removed app inherits none.
	if _, err := ts.DeleteConsumer(ctx, ts.owner, "tutor"); err != nil {
		t.Fatal(err)
	}
	ts.clock.Advance(time.Second)
	ts.mustConsumer("tutor")
	if got := ids(ts.mustPrincipal("tutor", "*", "write")); len(got) != 0 {
		t.Errorf("the namesake's proposals = %q; want none", got)
	}
}
