package custodian_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/graph/cayley"
)

func (ts *testService) mustSummary(p custodian.Principal, value string, purpose string, parents ...string) custodian.Summary {
	ts.t.Helper()
	doc := map[string]any{"value": value, "derived_from": parents}
	if purpose != "" {
		doc["purpose"] = purpose
	}
	out, err := ts.CreateSummary(ts.t.Context(), p, input[custodian.SummaryInput](ts, mustJSON(ts.t, doc)))
	if err != nil {
		ts.t.Fatalf("CreateSummary(%v) = %v", parents, err)
	}
	return out.Summary
}

func (ts *testService) summary(id string) custodian.Summary {
	ts.t.Helper()
	out, err := ts.GetSummary(ts.t.Context(), ts.owner, id, "", 0)
	if err != nil {
		ts.t.Fatalf("GetSummary(%s) = %v", id, err)
	}
	return out.Summary
}

func ref(c custodian.Claim) string { return c.Ref() }

// TestInvalidation: every kind of change to a parent makes a summary and
// the summary derived from it stale in the revision the change returns,
// with the parent and cause recorded; a recipient never receives them, even
// asking with min_revision equal to that revision; summaries of other
// claims stay current.
func TestInvalidation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustPersona("home")
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read-write")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"inv.*"}})

	cases := []struct {
		name   string
		cause  string
		change func(a custodian.Claim) (uint64, error)
	}{
		{"correction", custodian.CauseCorrected, func(a custodian.Claim) (uint64, error) {
			w, err := ts.Correct(ctx, ts.owner, a.ID, input[custodian.CorrectionInput](ts, []byte(`{"value": "changed"}`)))
			return w.Revision, err
		}},
		{"deletion", custodian.CauseDeleted, func(a custodian.Claim) (uint64, error) {
			return ts.DeleteClaim(ctx, ts.owner, a.ID)
		}},
		{"narrowed personas", custodian.CausePersonasNarrowed, func(a custodian.Claim) (uint64, error) {
			w, err := ts.SetPersonas(ctx, ts.owner, a.ID, input[custodian.PersonasInput](ts, []byte(`{"personas": ["work"]}`)))
			return w.Revision, err
		}},
		{"restriction change", custodian.CauseRestrictionsChanged, func(a custodian.Claim) (uint64, error) {
			w, err := ts.Correct(ctx, ts.owner, a.ID, input[custodian.CorrectionInput](ts, []byte(`{"restrictions": [{"type": "no_training", "mandatory": true}]}`)))
			return w.Revision, err
		}},
		{"sensitivity change", custodian.CauseSensitivityChanged, func(a custodian.Claim) (uint64, error) {
			w, err := ts.Correct(ctx, ts.owner, a.ID, input[custodian.CorrectionInput](ts, []byte(`{"sensitivity": "public"}`)))
			return w.Revision, err
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := ts.mustClaim("inv.a"+string(rune('a'+i)), "A", "work", "home").Claim
			b := ts.mustClaim("inv.b"+string(rune('a'+i)), "B").Claim
			other := ts.mustClaim("inv.c"+string(rune('a'+i)), "C").Claim
			s1 := ts.mustSummary(ts.owner, "from a and b", "", ref(a), ref(b))
			s2 := ts.mustSummary(app, "from s1", "assist", s1.Ref())
			s3 := ts.mustSummary(ts.owner, "from b and c", "", ref(b), ref(other))
			if got, err := ts.GetSummary(ctx, app, s2.ID, "assist", 0); err != nil || got.Summary.Value == nil {
				t.Fatalf("before the change the recipient reads s2: %v", err)
			}
			rev, err := c.change(a)
			if err != nil {
				t.Fatalf("change: %v", err)
			}
			got1, got2 := ts.summary(s1.ID), ts.summary(s2.ID)
			if got1.Status != custodian.SummaryStale || got1.Stale == nil || got1.Stale.Parent != ref(a) ||
				got1.Stale.Cause != c.cause || got1.Stale.Revision != rev {
				t.Errorf("s1 = %+v %+v; want stale because %s was %s at revision %d", got1, got1.Stale, ref(a), c.cause, rev)
			}
			if got2.Status != custodian.SummaryStale || got2.Stale == nil || got2.Stale.Parent != s1.Ref() ||
				got2.Stale.Cause != custodian.CauseParentStale || got2.Stale.Root != ref(a) || got2.Stale.RootCause != c.cause || got2.Stale.Revision != rev {
				t.Errorf("s2 = %+v %+v; want stale through %s at revision %d", got2, got2.Stale, s1.Ref(), rev)
			}
			if got3 := ts.summary(s3.ID); got3.Status != custodian.SummaryCurrent {
				t.Errorf("s3 (not derived from a) = %s; want current", got3.Status)
			}
			for _, id := range []string{s1.ID, s2.ID} {
				_, err := ts.GetSummary(ctx, app, id, "assist", rev)
				wantKind(t, "recipient read of a stale summary", err, custodian.KindNotFound)
			}
		})
	}
}

// TestWideningPersonasInvalidatesNothing: only narrowing is a change that
// invalidates.
func TestWideningPersonasInvalidatesNothing(t *testing.T) {
	ts := newTestService(t)
	ts.mustPersona("work")
	a := ts.mustClaim("wide.a", "A").Claim
	s := ts.mustSummary(ts.owner, "s", "", ref(a))
	if _, err := ts.SetPersonas(t.Context(), ts.owner, a.ID, input[custodian.PersonasInput](ts, []byte(`{"personas": ["work"]}`))); err != nil {
		t.Fatal(err)
	}
	if got := ts.summary(s.ID); got.Status != custodian.SummaryCurrent {
		t.Fatalf("after widening: %s; want current", got.Status)
	}
}

// TestSummaryRules: derivation needs current parents the caller can see,
// and inherits restrictions and tier.
func TestSummaryRules(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read-write")
	reader := ts.mustPrincipal("app", "*", "read")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"open.*"}})
	open := ts.mustClaim("open.goal", "G").Claim
	closed := ts.mustClaim("closed.goal", "H").Claim

	pr := ts.mustPropose(ts.owner, proposal(t, "open.limited", "L", map[string]any{"restrictions": []map[string]any{
		{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"assist", "tax"}}}}}))
	limited := ts.mustConfirm(pr.ProposalID).Claim
	pr = ts.mustPropose(ts.owner, proposal(t, "open.tax", "T", map[string]any{"restrictions": []map[string]any{
		{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"tax"}}}}}))
	taxOnly := ts.mustConfirm(pr.ProposalID).Claim

	create := func(p custodian.Principal, purpose string, parents ...string) (custodian.Summary, error) {
		doc := map[string]any{"value": "v", "derived_from": parents}
		if purpose != "" {
			doc["purpose"] = purpose
		}
		out, err := ts.CreateSummary(ctx, p, input[custodian.SummaryInput](ts, mustJSON(t, doc)))
		return out.Summary, err
	}
	_, err := create(app, "assist", ref(closed))
	wantKind(t, "derive from a claim outside the grants", err, custodian.KindNotFound)
	_, err = create(app, "assist", "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA@1")
	wantKind(t, "derive from an absent claim", err, custodian.KindNotFound)
	_, err = create(reader, "assist", ref(open))
	wantKind(t, "derive with a read-only token", err, custodian.KindModeDenied)
	_, err = create(app, "", ref(open))
	wantKind(t, "derive without a purpose", err, custodian.KindInvalid)
	_, err = create(ts.owner, "", open.ID+"@2")
	wantKind(t, "derive from a version that does not exist yet", err, custodian.KindConflict)
	_, err = create(ts.owner, "", ref(open), ref(open))
	wantKind(t, "a parent twice", err, custodian.KindInvalid)
	_, err = create(ts.owner, "")
	wantKind(t, "no parent", err, custodian.KindInvalid)

	s, err := create(ts.owner, "", ref(limited), ref(taxOnly))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != custodian.SummaryCurrent || len(s.Restrictions) != 2 {
		t.Fatalf("summary of assist+tax and tax = %+v; want current with both restrictions", s)
	}
	_, err = ts.GetSummary(ctx, reader, s.ID, "assist", 0)
	wantKind(t, "read for assist a summary of a tax-only claim", err, custodian.KindNotFound)
	ts.mustGrant(grantSpec{recipient: "app", purpose: "tax", ops: []string{"read"}, keys: []string{"open.*"}})
	if _, err := ts.GetSummary(ctx, reader, s.ID, "tax", 0); err != nil {
		t.Fatalf("read for tax (both parents allow it): %v", err)
	}
	pr = ts.mustPropose(ts.owner, proposal(t, "open.health", "X", map[string]any{"restrictions": []map[string]any{
		{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"care"}}}}}))
	care := ts.mustConfirm(pr.ProposalID).Claim
	s, err = create(ts.owner, "", ref(taxOnly), ref(care))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != custodian.SummaryIneligible || s.Ineligible == "" {
		t.Fatalf("summary of tax-only and care-only = %+v; want ineligible", s)
	}

	pr = ts.mustPropose(ts.owner, proposal(t, "open.sens", "S", map[string]any{"sensitivity": "sensitive"}))
	sens := ts.mustConfirm(pr.ProposalID).Claim
	s, err = create(ts.owner, "", ref(open), ref(sens))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sensitivity != custodian.SensitivitySensitive {
		t.Fatalf("summary tier = %s; want sensitive (its highest parent's)", s.Sensitivity)
	}
	_, err = ts.GetSummary(ctx, reader, s.ID, "assist", 0)
	wantKind(t, "read a summary of a sensitive claim under an owner grant", err, custodian.KindNotFound)
}

// TestInvalidationRacesDerivation: summaries derived from a claim while it
// is being corrected are either refused (the version moved on) or made
// stale by the correction: no acknowledged summary of the old version stays
// current, whatever the journal's grouping.
func TestInvalidationRacesDerivation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	for round := 0; round < 40; round++ {
		a := ts.mustClaim("race.a", round).Claim
		var releaseJournal func()
		if round%2 == 1 {
			// Hold the journal in a commit, so that the summaries and the
			// correction queue up and are applied as one group: the
			// correction must find lineage the graph does not hold yet.
			releaseJournal = ts.holdJournal()
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var made []string
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := ts.CreateSummary(ctx, ts.owner, input[custodian.SummaryInput](ts, mustJSON(t, map[string]any{"value": "s", "derived_from": []string{ref(a)}})))
				if err == nil {
					mu.Lock()
					made = append(made, out.Summary.ID)
					mu.Unlock()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.Correct(ctx, ts.owner, a.ID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": -round}))); err != nil {
				t.Errorf("Correct: %v", err)
			}
		}()
		if releaseJournal != nil {
			time.Sleep(10 * time.Millisecond) // let the writes queue (not a limit: any order is checked)
			releaseJournal()
		}
		wg.Wait()
		for _, id := range made {
			if s := ts.summary(id); s.Status != custodian.SummaryStale {
				t.Fatalf("round %d: summary %s of %s is %s after the correction; want stale", round, id, ref(a), s.Status)
			}
		}
	}
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
}

// failingGraph fails Apply while fail is set.
type failingGraph struct {
	*cayley.Graph
	mu   sync.Mutex
	fail bool
}

func (g *failingGraph) Apply(d graph.Delta) error {
	g.mu.Lock()
	fail := g.fail
	g.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return g.Graph.Apply(d)
}

// TestGraphCatchesUpFromTheOutbox: a write whose graph update fails is
// still acknowledged (it is durable, with its delta in the outbox); the
// vault locks, and the next unlock replays the outbox so that the graph
// agrees with the store again.
func TestGraphCatchesUpFromTheOutbox(t *testing.T) {
	fg := &failingGraph{Graph: cayley.OpenMemory()}
	ts := newTestService(t, func(c *custodian.Config) { c.Graph = fg })
	ctx := t.Context()
	ent, err := ts.CreateEntity(ctx, ts.owner, input[custodian.EntityInput](ts, []byte(`{"type": "person", "name": "Ana"}`)))
	if err != nil {
		t.Fatal(err)
	}
	// The graph follows the store off the write's path: a traversal waits
	// for it, so the entity's update is applied before the failures start.
	if _, err := ts.Traverse(ctx, ts.owner, custodian.NeighborQuery{Node: "self"}); err != nil {
		t.Fatal(err)
	}
	fg.mu.Lock()
	fg.fail = true
	fg.mu.Unlock()
	pr := ts.mustPropose(ts.owner, proposal(t, "rel.ana", map[string]string{"from": "self", "to": ent.Entity.ID, "relation": "friend"},
		map[string]any{"kind": "relationship"}))
	w := ts.mustConfirm(pr.ProposalID)
	if !eventually(ts.Locked) {
		t.Fatal("the vault stayed unlocked after a failed graph update")
	}
	fg.mu.Lock()
	fg.fail = false
	fg.mu.Unlock()
	ts.unlock()
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK || !strings.Contains(rep.Graph.Sync, "replayed 1 delta") {
		t.Fatalf("Check after replay = %+v, %v", rep.Graph, err)
	}
	n, err := ts.Traverse(ctx, ts.owner, custodian.NeighborQuery{Node: "self"})
	if err != nil || len(n.Edges) != 1 || n.Edges[0].Edge != ref(w.Claim) {
		t.Fatalf("Traverse after replay = %+v, %v", n, err)
	}
}

// TestGraphRebuiltWhenLost: a graph that lost everything (a new file, say)
// is rebuilt from the store at unlock.
func TestGraphRebuiltWhenLost(t *testing.T) {
	var g graph.Graph = cayley.OpenMemory()
	holder := &swapGraph{Graph: g}
	ts := newTestService(t, func(c *custodian.Config) { c.Graph = holder })
	ctx := t.Context()
	a := ts.mustClaim("lost.a", "A").Claim
	ts.mustSummary(ts.owner, "s", "", ref(a))
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	holder.Graph = cayley.OpenMemory() // the graph is gone
	ts.unlock()
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK || rep.Graph.Edges == 0 {
		t.Fatalf("Check after a lost graph = %+v, %v", rep.Graph, err)
	}
}

type swapGraph struct{ graph.Graph }

// TestConsumerSummaryServedOnlyToItsMaker: an application's summary is its
// own word about the parents, which the custodian cannot check, so it is
// never passed to another application — not even one whose grants cover
// every parent. The owner's summaries are.
func TestConsumerSummaryServedOnlyToItsMaker(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	for _, name := range []string{"maker", "other"} {
		ts.mustConsumer(name)
		ts.mustGrant(grantSpec{recipient: name, ops: []string{"read"}, keys: []string{"shared.*"}})
	}
	maker := ts.mustPrincipal("maker", "*", "read-write")
	other := ts.mustPrincipal("other", "*", "read")
	c := ts.mustClaim("shared.goal", "G").Claim
	mine := ts.mustSummary(maker, "the maker's", "assist", ref(c))
	owners := ts.mustSummary(ts.owner, "the owner's", "", ref(c))
	if _, err := ts.GetSummary(ctx, maker, mine.ID, "assist", 0); err != nil {
		t.Fatalf("the maker reads its summary: %v", err)
	}
	_, err := ts.GetSummary(ctx, other, mine.ID, "assist", 0)
	wantKind(t, "another app reads the maker's summary", err, custodian.KindNotFound)
	if _, err := ts.GetSummary(ctx, other, owners.ID, "assist", 0); err != nil {
		t.Fatalf("another app reads the owner's summary: %v", err)
	}
}

// TestRelationshipReadsNeedBothEnds: a relationship claim is disclosed, by
// any read, only with both of its ends — a recipient that may read the
// edge but not the person at its end gets nothing, as for an absent claim.
func TestRelationshipReadsNeedBothEnds(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"rel.*", "me.*"}})
	ts.mustClaim("me.name", "Me")
	ent, err := ts.CreateEntity(ctx, ts.owner, input[custodian.EntityInput](ts, []byte(`{"type": "person", "name": "Ana", "key": "people.ana"}`)))
	if err != nil {
		t.Fatal(err)
	}
	pr := ts.mustPropose(ts.owner, proposal(t, "rel.ana", map[string]string{"from": "self", "to": ent.Entity.ID, "relation": "friend"},
		map[string]any{"kind": "relationship"}))
	edge := ts.mustConfirm(pr.ProposalID).Claim

	_, err = ts.GetClaim(ctx, app, edge.ID, "assist")
	wantKind(t, "read a relationship to a hidden person", err, custodian.KindNotFound)
	keys, err := ts.contextKeys(app, custodian.ContextQuery{Purpose: "assist"})
	if err != nil || len(keys) != 1 || keys[0] != "me.name" {
		t.Fatalf("context = %v, %v; want only me.name", keys, err)
	}

	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"people.*"}})
	if _, err := ts.GetClaim(ctx, app, edge.ID, "assist"); err != nil {
		t.Fatalf("read the relationship once both ends are visible: %v", err)
	}
	keys, _ = ts.contextKeys(app, custodian.ContextQuery{Purpose: "assist"})
	if len(keys) != 3 {
		t.Fatalf("context = %v; want me.name, people.ana and rel.ana", keys)
	}
}

// failingReplace fails Replace once.
type failingReplace struct {
	*cayley.Graph
	mu   sync.Mutex
	fail bool
}

func (g *failingReplace) Replace(es []graph.Edge, w uint64) error {
	g.mu.Lock()
	fail := g.fail
	g.fail = false
	g.mu.Unlock()
	if fail {
		_ = g.Graph.Reset() // it got as far as emptying the graph
		return errors.New("disk full")
	}
	return g.Graph.Replace(es, w)
}

// TestFailedRebuildIsRebuiltAtUnlock: a rebuild that fails part way locks
// the vault, and the next unlock rebuilds the graph whole.
func TestFailedRebuildIsRebuiltAtUnlock(t *testing.T) {
	fg := &failingReplace{Graph: cayley.OpenMemory()}
	ts := newTestService(t, func(c *custodian.Config) { c.Graph = fg })
	ctx := t.Context()
	a := ts.mustClaim("rb.a", "A").Claim
	ts.mustSummary(ts.owner, "s", "", ref(a))
	fg.mu.Lock()
	fg.fail = true
	fg.mu.Unlock()
	_, err := ts.RebuildGraph(ctx, ts.owner)
	wantKind(t, "a failed rebuild", err, custodian.KindInternal)
	if !eventually(ts.Locked) {
		t.Fatal("the vault stayed unlocked over a half-built graph")
	}
	ts.unlock()
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK || rep.Graph.Edges == 0 || !strings.Contains(rep.Graph.Sync, "rebuilt") {
		t.Fatalf("Check after the unlock = %+v, %v", rep.Graph, err)
	}
}

// holdJournal makes the journal's next commit wait, and returns once it
// waits; the function it returns lets it go on.
func (ts *testService) holdJournal() func() {
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	pause := func() { once.Do(func() { close(entered); <-release }) }
	ts.store.pause.Store(&pause)
	go ts.mustPersona(fmt.Sprintf("hold-%d", time.Now().UnixNano()))
	<-entered
	ts.store.pause.Store(nil)
	return func() { close(release) }
}

// TestOldProjectionIsRebuiltAtUnlock: a graph built by an older projection
// (About edges labelled with the claim's head ref; the store records no
// projection) is rebuilt at the next unlock, and the store then records
// the current one.
func TestOldProjectionIsRebuiltAtUnlock(t *testing.T) {
	g := cayley.OpenMemory()
	ts := newTestService(t, func(c *custodian.Config) { c.Graph = g })
	ctx := t.Context()
	c := ts.mustClaim("proj.a", "A").Claim
	if _, err := ts.Check(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	w, err := g.Watermark()
	if err != nil {
		t.Fatal(err)
	}
	unlabelled := graph.Edge{Subject: c.ID, Predicate: graph.About, Object: c.Subject}
	labelled := unlabelled
	labelled.Label = ref(c)
	if err := g.Apply(graph.Delta{Remove: []graph.Edge{unlabelled}, Add: []graph.Edge{labelled}, Watermark: w}); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Update(func(tx custodian.Tx) error { return tx.Delete(custodian.BucketMeta, "graph_projection") }); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || !rep.OK || !strings.Contains(rep.Graph.Sync, "projection 1") {
		t.Fatalf("Check after the unlock = %+v, %v", rep.Graph, err)
	}
	ts.mustPersona("after-rebuild") // a commit, which records the projection
	var stored string
	ts.store.View(func(tx custodian.Tx) error {
		v, _, err := tx.Get(custodian.BucketMeta, "graph_projection")
		stored = string(v)
		return err
	})
	if stored != "2" {
		t.Fatalf("recorded projection = %q, want 2", stored)
	}
}

// TestSummaryOfAReferenceIsHidden: a summary one of whose parents a reader
// receives only as a reference is not served to that reader (it could
// restate the value); found in review: GetSummary served it in full.
func TestSummaryOfAReferenceIsHidden(t *testing.T) {
	ctx := t.Context()
	ts := newTestService(t)
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", purpose: "assist", ops: []string{"read"}, keys: []string{"travel.*"}})
	app := ts.mustPrincipalFor("app", "*", "read", "assist")
	w := ts.mustClaim("travel.passport_number", "X12345678")
	sm := ts.mustSummary(ts.owner, "passport X12345678, valid", "", w.Claim.ID+"@1")
	if got, err := ts.GetSummary(ctx, app, sm.ID, "assist", 0); err != nil || got.Summary.Value == nil {
		t.Fatalf("GetSummary while the parent is served as a value = %+v, %v", got, err)
	}
	if _, _, err := ts.PutSettings(ctx, ts.owner, input[custodian.SettingsInput](ts, mustJSON(t, map[string]any{"disclosure": map[string]string{"standard": "reference"}}))); err != nil {
		t.Fatal(err)
	}
	_, err := ts.GetSummary(ctx, app, sm.ID, "assist", 0)
	wantKind(t, "GetSummary once the parent is served as a reference", err, custodian.KindNotFound)
	if got, err := ts.GetSummary(ctx, ts.owner, sm.ID, "", 0); err != nil || got.Summary.Value == nil {
		t.Fatalf("the owner's GetSummary = %+v, %v; want the value", got, err)
	}
}
