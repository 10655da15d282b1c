package custodian

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// publish sets m[id] = v in the view, first noting for the journal's job
// (which of its maps, noted says) the version v replaces.
func publish[T any](st *state, m map[string]*T, noted func(*jobCtx) *map[string]*T, id string, v *T) {
	if st.Job != nil {
		engine.NoteOld(noted(st.Job), id, m[id])
	}
	m[id] = v
}

func (st *state) setGrant(g *Grant) {
	if old := st.Grants[g.ID]; old != nil {
		delete(st.GrantsBy[old.Recipient.Name()], g.ID)
	}
	publish(st, st.Grants, func(j *jobCtx) *map[string]*Grant { return &j.Grants }, g.ID, g)
	st.indexGrant(g)
}

// indexGrant files g under its recipient.
func (st *state) indexGrant(g *Grant) {
	m := st.GrantsBy[g.Recipient.Name()]
	if m == nil {
		m = map[string]*Grant{}
		st.GrantsBy[g.Recipient.Name()] = m
	}
	m[g.ID] = g
}

func (st *state) setPersona(p *Persona) {
	publish(st, st.Personas, func(j *jobCtx) *map[string]*Persona { return &j.Personas }, p.ID, p)
}

// deletePersona takes persona id out of the view (its node leaves the
// graph at the end of the write).
func (st *state) deletePersona(id string) {
	if st.Job != nil {
		engine.NoteOld(&st.Job.Personas, id, st.Personas[id])
	}
	delete(st.Personas, id)
}

func (st *state) setSummary(s *Summary) {
	publish(st, st.Summaries, func(j *jobCtx) *map[string]*Summary { return &j.Summaries }, s.ID, s)
}

func (st *state) setEntity(e *Entity) {
	publish(st, st.Entities, func(j *jobCtx) *map[string]*Entity { return &j.Entities }, e.ID, e)
}

// claimEdges is the projection of one claim record: an active claim is a
// node about its subject, in its personas; a relationship is also an edge
// between its ends, labelled with its head ref (which a traversal checks is
// still the head). A new version that keeps the subject, the personas and
// the ends changes nothing in the graph.
// Anything not active — deleted, retracted, proposed, quarantined — is not
// in the graph. Only a relationship's edges need the claim's content (its
// ends): the rest comes from the meta, so that the whole projection (a
// check, a rebuild) reads no other claim from the store.
func (st *state) claimEdges(r *claimRecord) []graph.Edge {
	if r == nil || r.Meta.Status != StatusActive {
		return nil
	}
	id := r.Meta.ID
	es := []graph.Edge{{Subject: id, Predicate: graph.About, Object: r.Meta.Subject}}
	for _, pid := range r.Meta.Personas {
		if p := st.Personas[pid]; p != nil && p.Node != "" {
			es = append(es, graph.Edge{Subject: id, Predicate: graph.InPersona, Object: p.Node})
		}
	}
	if r.Meta.Kind == KindRelationship {
		c := r.Head()
		if rel, ok := model.RelationshipOf(c); ok {
			es = append(es, graph.Edge{Subject: rel.From, Predicate: graph.Related, Object: rel.To, Label: c.Ref()})
		}
	}
	return es
}

// summaryEdges: a summary's lineage, kept whatever its status (lineage is
// history; staleness is recorded on the summary).
func summaryEdges(s *Summary) []graph.Edge {
	if s == nil {
		return nil
	}
	es := make([]graph.Edge, 0, len(s.DerivedFrom))
	for _, p := range s.DerivedFrom {
		es = append(es, graph.Edge{Subject: s.Ref(), Predicate: graph.DerivedFrom, Object: p})
	}
	return es
}

func entityEdges(e *Entity) []graph.Edge {
	if e == nil {
		return nil
	}
	return []graph.Edge{{Subject: e.ID, Predicate: graph.Type, Object: graph.NS + model.EntityTypes[e.Type]}}
}

// personaEdges: a persona is a node under its opaque key; its id is the
// owner's own word and stays in the encrypted store.
func personaEdges(p *Persona) []graph.Edge {
	if p == nil || p.Node == "" {
		return nil
	}
	return []graph.Edge{{Subject: p.Node, Predicate: graph.Type, Object: graph.NS + "Persona"}}
}

// grantEdges: a grant in force (not revoked) is a node. Its recipient's
// name stays out of the graph.
func grantEdges(g *Grant) []graph.Edge {
	if g == nil || g.RevokedAt != nil {
		return nil
	}
	return []graph.Edge{{Subject: g.ID, Predicate: graph.Type, Object: graph.NS + "Grant"}}
}

// projection is the whole graph the view implies, sorted.
func (st *state) projection() []graph.Edge {
	var es []graph.Edge
	for _, r := range st.Claims {
		es = append(es, st.claimEdges(r)...)
	}
	for _, s := range st.Summaries {
		es = append(es, summaryEdges(s)...)
	}
	for _, e := range st.Entities {
		es = append(es, entityEdges(e)...)
	}
	for _, p := range st.Personas {
		es = append(es, personaEdges(p)...)
	}
	for _, g := range st.Grants {
		es = append(es, grantEdges(g)...)
	}
	graph.SortEdges(es)
	return es
}

// diffEdges adds to d what turns before into after.
func diffEdges(d *graph.Delta, before, after []graph.Edge) {
	if len(before) == 0 && len(after) == 0 {
		return
	}
	in := make(map[graph.Edge]bool, len(before))
	for _, e := range before {
		in[e] = true
	}
	for _, e := range after {
		if in[e] {
			delete(in, e)
			continue
		}
		d.Add = append(d.Add, e)
	}
	for _, e := range before {
		if in[e] {
			d.Remove = append(d.Remove, e)
		}
	}
}

// finishJob computes, at the end of a write, the graph delta of what it
// changed and invalidates the dependents of every claim it corrected,
// deleted, retracted or narrowed. The graph holds every earlier group's
// writes that the graph worker has applied, and st.lag the lineage of the
// others, so the lineage it walks is whole (see dependents).
func (s *Service) finishJob(st *state, b *batch) error {
	j := st.Job
	for id, old := range j.Claims {
		diffEdges(&b.Graph, st.claimEdges(old), st.claimEdges(st.Claims[id]))
	}
	for id, old := range j.Personas {
		diffEdges(&b.Graph, personaEdges(old), personaEdges(st.Personas[id]))
	}
	for id, old := range j.Entities {
		diffEdges(&b.Graph, entityEdges(old), entityEdges(st.Entities[id]))
		if old == nil {
			b.Graph.Fresh = append(b.Graph.Fresh, id)
		}
	}
	for id, old := range j.Grants {
		diffEdges(&b.Graph, grantEdges(old), grantEdges(st.Grants[id]))
	}
	ids := make([]string, 0, len(j.Claims))
	for id := range j.Claims {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		old := j.Claims[id]
		cause := invalidationCause(old, st.Claims[id])
		if cause == "" {
			continue
		}
		// Only the head can have current dependents: each earlier version
		// made its own stale when it was superseded, and no summary may be
		// derived from a superseded version. (Walking every version would
		// make each write cost the claim's whole history.)
		if err := s.invalidate(st, b, old.Head().Ref(), cause); err != nil {
			return err
		}
	}
	// Summaries last: invalidation only changes their status.
	for id, old := range j.Summaries {
		if old == nil { // a summary's lineage is fixed when it is made
			sm := st.Summaries[id]
			b.Graph.Add = append(b.Graph.Add, summaryEdges(sm)...)
			b.Graph.Fresh = append(b.Graph.Fresh, sm.Ref())
		}
	}
	return nil
}

// Invalidation causes, as GET /phc/v1/summaries/{id} reports them.
const (
	CauseCorrected           = "corrected"
	CauseDeleted             = "deleted"
	CauseRetracted           = "retracted"
	CauseDisputed            = "disputed"
	CausePersonasNarrowed    = "personas_narrowed"
	CauseRestrictionsChanged = "restrictions_changed"
	CauseSensitivityChanged  = "sensitivity_changed"
	CauseParentStale         = "parent_stale"
)

// invalidationCause says why a change from old to nw invalidates what was
// derived from old, or "" when it does not.
func invalidationCause(old, nw *claimRecord) string {
	if old == nil || old.Meta.Status != StatusActive {
		return ""
	}
	switch {
	case nw == nil || nw.Meta.Status == StatusDeleted:
		return CauseDeleted
	case nw.Meta.Status != StatusActive:
		return CauseRetracted
	case nw.Meta.Head != old.Meta.Head:
		a, b := old.Head(), nw.Head()
		switch {
		case string(a.Value) != string(b.Value) || a.Key != b.Key || a.Kind != b.Kind || a.Subject != b.Subject:
			return CauseCorrected
		case !sameRestrictions(a.Restrictions, b.Restrictions):
			return CauseRestrictionsChanged
		case a.Sensitivity != b.Sensitivity:
			return CauseSensitivityChanged
		}
		return CauseCorrected // any new version supersedes the one derived from
	}
	if old.Meta.DisputedAt == nil && nw.Meta.DisputedAt != nil {
		return CauseDisputed
	}
	for _, p := range old.Meta.Personas {
		if !nw.InPersona(p) {
			return CausePersonasNarrowed
		}
	}
	return ""
}

func sameRestrictions(a, b []Restriction) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

// invalidate marks every current summary that depends on the claim version
// root, transitively along lineage, stale as of this write's revision.
func (s *Service) invalidate(st *state, b *batch, root, cause string) error {
	if len(st.Summaries) == 0 {
		return nil // only summaries are made stale: no walk of the graph
	}
	deps, err := s.dependents(st, []string{root}, func(n string) bool {
		sm := st.summaryByRef(n)
		return sm != nil && sm.Status == SummaryCurrent
	})
	if err != nil {
		return model.Wrap("invalidate", KindInternal, err)
	}
	inv := invalidation{Revision: st.Revision, At: b.Now, Root: root, Cause: cause}
	for _, d := range deps {
		sm := st.summaryByRef(d.Node)
		if sm == nil || sm.Status != SummaryCurrent {
			continue
		}
		inv.Stale = append(inv.Stale, staleEntry{ID: sm.ID, Parent: d.Via})
	}
	if len(inv.Stale) == 0 {
		return nil
	}
	inv.apply(st.State)
	// One record for the whole closure: the summaries themselves are not
	// rewritten (10,000 dependents make one write, not 10,000).
	b.Put(bucketInvalidations, fmt.Sprintf("%016x-%s", inv.Revision, root), &inv)
	return nil
}

// invalidation is the stored record of one change's invalidation closure.
type invalidation struct {
	Revision uint64       `json:"revision"`
	At       time.Time    `json:"at"`
	Root     string       `json:"root"`  // the claim version whose change started it
	Cause    string       `json:"cause"` // how it changed
	Stale    []staleEntry `json:"stale"`
}

// staleEntry: a summary made stale, and the parent through which.
type staleEntry struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
}

const bucketInvalidations = "invalidations" // %016x revision-root → invalidation

// apply marks the record's summaries stale in the view.
func (inv *invalidation) apply(st *State) {
	at := inv.At
	rootID := model.IDOfRef(inv.Root)
	for _, e := range inv.Stale {
		sm := st.Summaries[e.ID]
		if sm == nil || sm.Status != SummaryCurrent {
			continue
		}
		ns := *sm
		ns.Status = SummaryStale
		c := CauseParentStale
		if model.IDOfRef(e.Parent) == rootID {
			c = inv.Cause
		}
		ns.Stale = &Staleness{Parent: e.Parent, Cause: c, Root: inv.Root, RootCause: inv.Cause, Revision: inv.Revision, At: &at}
		st.Summaries[e.ID] = &ns // a status change: nothing to project
	}
}

// syncGraph brings the graph up to the store at unlock: it replays the
// outbox's deltas the graph lacks, or rebuilds the graph when it cannot
// (a graph never built, behind the pruned outbox, or ahead of the store).
func (s *Service) syncGraph(st *state) error {
	w, err := s.eng.Graph.Watermark()
	if err != nil {
		return err
	}
	var keys []string
	var deltas []graph.Delta
	if err := s.eng.Store.View(func(tx Tx) error {
		return tx.ForEach(engine.BucketOutbox, func(k string, v []byte) error {
			var d graph.Delta
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("graph outbox %s: %w", k, err)
			}
			keys = append(keys, k)
			deltas = append(deltas, d)
			return nil
		})
	}); err != nil {
		return err
	}
	floor, floorKnown := st.Lag.Resume(keys)
	switch {
	case !floorKnown, w < floor, w > st.Revision, w == 0 && st.Revision > 0:
		// Never built, behind what the outbox still holds, ahead of the
		// store (restored from elsewhere), or emptied (a rebuild that did
		// not finish).
		s.eng.Log.Info("rebuilding the graph from the store", "watermark", w, "revision", st.Revision)
		st.GraphSync = fmt.Sprintf("rebuilt at unlock: the graph was at watermark %d, the store at revision %d", w, st.Revision)
		return s.rebuildGraph(st)
	case st.ProjectionAt != engine.ProjectionVersion:
		s.eng.Log.Info("rebuilding the graph from the store: its projection changed", "from", st.ProjectionAt, "to", engine.ProjectionVersion)
		st.GraphSync = fmt.Sprintf("rebuilt at unlock: the graph was built with projection %d, this version projects %d", st.ProjectionAt, engine.ProjectionVersion)
		return s.rebuildGraph(st)
	}
	replayed := 0
	for _, d := range deltas {
		if d.Watermark <= w {
			continue
		}
		if err := s.eng.Graph.Apply(d); err != nil {
			return err
		}
		replayed++
		w = d.Watermark
	}
	if replayed > 0 {
		st.GraphSync = fmt.Sprintf("replayed %d deltas from the outbox at unlock, to revision %d", replayed, w)
	}
	st.Lag.RaiseFloor(w)
	return nil
}

// rebuildGraph replaces the graph by the view's projection, at the view's
// revision. Callers hold st.mu or own st alone.
func (s *Service) rebuildGraph(st *state) error {
	if err := s.eng.Graph.Replace(st.projection(), st.Revision); err != nil {
		return err
	}
	st.Lag.Applied(st.Revision, nil)
	return nil
}

// GraphReport is what [Service.Check] found about the graph.
type GraphReport struct {
	OK        bool     `json:"ok"`
	Edges     int      `json:"edges"`
	Watermark uint64   `json:"watermark"`
	Revision  uint64   `json:"revision"`
	Missing   int      `json:"missing"` // in the store's projection, not in the graph
	Extra     int      `json:"extra"`   // in the graph, not in the projection
	Problems  []string `json:"problems"`
	// Sync says what the last unlock did to bring the graph up to the
	// store (replayed the outbox, or rebuilt it), if anything.
	Sync string `json:"sync,omitempty"`
}

// CheckReport is the answer of phc check.
type CheckReport struct {
	OK        bool         `json:"ok"`
	Graph     GraphReport  `json:"graph"`
	Receipts  Verification `json:"receipts"`
	Summaries []string     `json:"summaries"` // current summaries with a parent that is not current
	// Claims lists the claims whose meta in the view (loaded from the
	// metas snapshot and the metas written since) differs from their meta
	// in the store.
	Claims []string `json:"claims"`
}

// Check verifies that the graph agrees with the store (every edge the
// store implies is in it, and nothing else), that no current summary has a
// parent that is not current, that the view holds every claim as its meta
// in the store says, and the receipt chain (owner only). Only the
// summaries and the projection of the view are taken in the journal. The
// graph is compared outside it, held where it was (see holdGraph), and so
// are the claims, whose metas it reads from the store (minutes at millions
// of claims on a cold file; see claimProblems): writes go on meanwhile.
func (s *Service) Check(ctx context.Context, p Principal) (CheckReport, error) {
	const op = "check"
	if err := requireOwner(op, p); err != nil {
		return CheckReport{}, err
	}
	// The vault stays open only for the journal's part, then for each
	// chunk of claims: a lock or a stop waits for no more than one step
	// (and no request behind it for longer).
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return CheckReport{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		doneGraph()
		return CheckReport{}, err
	}
	var rep CheckReport
	var want []graph.Edge
	held := ctx
	letGo := func() {}
	defer func() { letGo(); doneGraph() }()
	t0 := time.Now()
	var inJournal time.Duration
	// A group of its own: the graph then has every write the view has.
	err = s.commitAlone(st, func(st *state, b *batch) error {
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		defer func(t time.Time) { inJournal = time.Since(t) }(time.Now())
		rep.Summaries = st.summaryProblems()
		want = st.projection()
		rep.Graph = GraphReport{Revision: st.Revision, Sync: st.GraphSync}
		held, letGo = s.eng.HoldGraph(ctx, st.State)
		return nil
	})
	release()
	if err != nil {
		return CheckReport{}, err
	}
	t1 := time.Now()
	s.checkPause("graph")
	s.compareGraph(held, &rep.Graph, want)
	broken := errors.Is(context.Cause(held), engine.ErrHoldBroken)
	letGo() // both again, harmlessly, when Check returns
	doneGraph()
	if broken {
		return CheckReport{}, model.Fail(op, KindLocked, "the vault was locked during the check: unlock it and run the check again")
	}
	want = nil
	t2 := time.Now()
	if rep.Claims, err = s.claimProblems(ctx, op, p, st); err != nil {
		return CheckReport{}, err
	}
	t3 := time.Now()
	rep.Receipts, err = s.VerifyReceipts(ctx, p)
	if err != nil {
		return CheckReport{}, err
	}
	s.eng.Log.Info("check done", "journal_ms", inJournal.Milliseconds(), "waited_ms", (t1.Sub(t0) - inJournal).Milliseconds(),
		"graph_ms", t2.Sub(t1).Milliseconds(), "claims_ms", t3.Sub(t2).Milliseconds(), "receipts_ms", time.Since(t3).Milliseconds())
	rep.OK = rep.Graph.OK && rep.Receipts.OK && len(rep.Summaries) == 0 && len(rep.Claims) == 0
	return rep, nil
}

// compareGraph compares the graph, held at rep.Revision, with want, the
// view's projection at that revision (sorted): both sorted, then walked
// side by side.
func (s *Service) compareGraph(ctx context.Context, rep *GraphReport, want []graph.Edge) {
	rep.Problems = []string{}
	problem := func(format string, args ...any) {
		if len(rep.Problems) < 20 {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
	}
	var got []graph.Edge
	if err := s.eng.Graph.Each(ctx, func(e graph.Edge) error {
		got = append(got, e)
		if len(got)%1024 == 0 {
			s.touch()        // a check at work is not idle
			return ctx.Err() // a lock broke the hold, or the caller went
		}
		return nil
	}); err != nil {
		problem("graph: %v", err)
	}
	graph.SortEdges(got)
	got = slices.Compact(got)
	want = slices.Compact(want)
	rep.Edges = len(got)
	var extra, missing []string
	for len(got) > 0 || len(want) > 0 {
		c := 0
		switch {
		case len(got) == 0:
			c = 1
		case len(want) == 0:
			c = -1
		default:
			c = graph.CompareEdges(got[0], want[0])
		}
		switch {
		case c < 0:
			rep.Extra++
			if len(extra) < 20 {
				extra = append(extra, got[0].String())
			}
			got = got[1:]
		case c > 0:
			rep.Missing++
			if len(missing) < 20 {
				missing = append(missing, want[0].String())
			}
			want = want[1:]
		default:
			got, want = got[1:], want[1:]
		}
	}
	for _, e := range missing {
		problem("missing from the graph: %s", e)
	}
	for _, e := range extra {
		problem("in the graph but not the store: %s", e)
	}
	w, err := s.eng.Graph.Watermark()
	if err != nil {
		problem("graph watermark: %v", err)
	}
	rep.Watermark = w
	if w > rep.Revision {
		problem("the graph's watermark %d is ahead of the store's revision %d", w, rep.Revision)
	}
	rep.OK = len(rep.Problems) == 0
}

// RebuildGraph rebuilds the graph from the store (owner only) and returns
// the revision it reflects.
func (s *Service) RebuildGraph(ctx context.Context, p Principal) (uint64, error) {
	const op = "graph.rebuild"
	if err := requireOwner(op, p); err != nil {
		return 0, err
	}
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return 0, err
	}
	defer doneGraph()
	var rev uint64
	err = s.write(op, p, func(st *state, b *batch) error {
		if err := requireOwner(op, p); err != nil {
			return err
		}
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		if err := s.rebuildGraph(st); err != nil {
			// The graph may be half built: nothing may use it until the
			// next unlock rebuilds it (its watermark is 0).
			st.Broken = true
			go s.lockBroken(st.State)
			return model.Wrap(op, KindInternal, err)
		}
		rev = st.Revision
		b.Receipt(Receipt{Actor: "owner", Operation: "graph.rebuild", Decision: "allow", Revision: rev})
		return nil
	})
	return rev, err
}

// ExportGraph writes the graph as N-Quads (owner only).
func (s *Service) ExportGraph(ctx context.Context, p Principal, w io.Writer) error {
	const op = "graph.export"
	if err := requireOwner(op, p); err != nil {
		return err
	}
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return err
	}
	defer doneGraph()
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	// Inside the journal: no write or rebuild moves the graph meanwhile, so
	// the edges and the watermark are one snapshot.
	return s.commit(st, func(st *state, b *batch) error {
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		if err := s.eng.Graph.WriteNQuads(ctx, w); err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		return nil
	})
}

// useGraph waits until no other check, graph rebuild or graph export uses
// the graph (see Service.graphSem), or until ctx ends. Call it before
// entering the vault: a lock waits for those inside, and a check holding
// the graph needs to enter again.
func (s *Service) useGraph(ctx context.Context, op string) (done func(), err error) {
	var once sync.Once
	done = func() { once.Do(func() { <-s.graphSem }) }
	select {
	case s.graphSem <- struct{}{}:
		return done, nil
	default:
	}
	if s.test.graphWait != nil {
		s.test.graphWait(op)
	}
	select {
	case s.graphSem <- struct{}{}:
		return done, nil
	case <-ctx.Done():
		return nil, model.Wrap(op, KindInternal, ctx.Err())
	}
}

// graphTime is the form of times in graph exports.
func graphTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// defaultCheckChunk is how many claim metas claimProblems compares under
// one read lock of the view (testHooks.checkChunk: another).
const defaultCheckChunk = 1024

// checkPause runs the check's pause hook, if a test set one, with stage.
func (s *Service) checkPause(stage string) {
	if s.test.checkPause != nil {
		s.test.checkPause(stage)
	}
}

// claimProblems compares every claim meta of the store with the view's,
// a chunk of ids at a time and outside the journal, so that writes go on
// meanwhile: at 2,000,000 claims on a cold file, reading every meta took
// more than seven minutes, which in the journal held every write (and the
// daemon's stop) that long. Each chunk is read twice: first with no lock
// (the slow part: it brings the pages in from the disk and decodes), then
// again in a store transaction at a cut where the store and the view agree
// (see atCut), where it is compared. A claim is checked for a meta in the
// store if the view held it when the check began; one written since is
// compared when its meta is met.
func (s *Service) claimProblems(ctx context.Context, op string, p Principal, st *state) ([]string, error) {
	var ids []string
	st.ReadLocked(func() { ids = slices.Collect(maps.Keys(st.Claims)) })
	slices.Sort(ids)
	problems := []string{}
	from := ""
	for done := false; !done; {
		if err := ctx.Err(); err != nil {
			return nil, model.Wrap(op, KindInternal, err)
		}
		// The vault open for this chunk only, as it was when the check
		// began.
		now, release, err := s.enter(op, p)
		if err != nil {
			return nil, err
		}
		s.touch()
		if now != st {
			release()
			return nil, model.Fail(op, KindConflict, "the vault was locked and unlocked during the check: run it again")
		}
		if done, err = s.claimChunk(op, st, ids, &from, &problems); err != nil {
			release()
			return nil, err
		}
		release()
		for len(ids) > 0 && (done || ids[0] < from) {
			ids = ids[1:]
		}
	}
	slices.Sort(problems)
	return problems, nil
}

// claimChunk compares the chunk of claim metas that begins at *from (see
// claimProblems), moves *from past it, and reports whether it was the
// last. ids are the claims the view held when the check began, sorted,
// from *from on.
func (s *Service) claimChunk(op string, st *state, ids []string, from *string, problems *[]string) (done bool, err error) {
	// First read: the chunk's metas, decoded, with no lock held.
	type read struct {
		raw  []byte
		meta claimMeta
		err  error
		met  bool // met again at the cut
	}
	decode := func(raw []byte) *read {
		r := &read{raw: raw}
		r.err = fastjson.Unmarshal(raw, &r.meta)
		return r
	}
	pre := make(map[string]*read, s.test.checkChunk)
	err = s.eng.Store.View(func(tx Tx) error {
		return forEachFrom(tx, engine.BucketClaimMeta, *from, func(id string, raw []byte) error {
			if len(pre) == s.test.checkChunk {
				return errStopWalk
			}
			pre[id] = decode(raw)
			return nil
		})
	})
	if err != nil && err != errStopWalk {
		return false, model.Wrap(op, KindInternal, err)
	}
	s.checkPause("claims")
	// Second read, at a cut: compare.
	problem := func(id, what string) { *problems = append(*problems, "claim "+id+": "+what) }
	err = s.atCut(op, st, func(tx Tx) error {
		n, last := 0, ""
		err := forEachFrom(tx, engine.BucketClaimMeta, *from, func(id string, raw []byte) error {
			if n == s.test.checkChunk {
				return errStopWalk
			}
			n, last = n+1, id
			r := pre[id]
			if r == nil || !bytes.Equal(r.raw, raw) {
				r = decode(raw)
				pre[id] = r
			}
			r.met = true
			v := st.Claims[id]
			switch {
			case r.err != nil:
				problem(id, "its meta in the store does not decode")
			case v == nil:
				problem(id, "in the store, not in the view")
			default:
				m := r.meta
				m.ID = id
				if !reflect.DeepEqual(normalMeta(m), normalMeta(v.Meta)) {
					problem(id, "the view's meta differs from the store's")
				}
			}
			return nil
		})
		if err != nil && err != errStopWalk {
			return err
		}
		// The chunk covers [from, last], or [from, …) when the walk
		// reached the bucket's end.
		done = n < s.test.checkChunk
		for _, id := range ids {
			if !done && id > last {
				break
			}
			if r := pre[id]; (r == nil || !r.met) && st.Claims[id] != nil {
				problem(id, "in the view, not in the store")
			}
		}
		*from = last + "\x00"
		return nil
	})
	return done, err
}

// errStopWalk ends a walk over a bucket early.
var errStopWalk = errors.New("stop the walk")

// atCut runs fn on a store transaction that agrees with the view, with the
// view read-locked: every group the view has applied is durable, so
// committed before the transaction began, and no other can be applied
// until fn returns. If a group is being committed, it waits for it first.
func (s *Service) atCut(op string, st *state, fn func(tx Tx) error) error {
	for {
		var wait uint64
		var err error
		uerr := st.ReadLocked(func() {
			durable, failed := st.Dur.State()
			switch {
			case st.Broken || failed:
				err = model.Internalf(op, "the view is broken")
			case durable < st.Applied:
				wait = st.Applied
				s.checkPause("cut")
			default:
				if err = s.eng.Store.View(fn); err != nil {
					err = model.Wrap(op, KindInternal, err)
				}
			}
		})
		if uerr != nil {
			return uerr
		}
		if wait == 0 {
			return err
		}
		if err := st.AwaitDurable(op, wait); err != nil {
			return err
		}
	}
}

// normalMeta is m as compared: no personas is no personas, and instants
// compare as instants.
func normalMeta(m claimMeta) claimMeta {
	if len(m.Personas) == 0 {
		m.Personas = nil
	}
	if m.DisputedAt != nil {
		at := m.DisputedAt.UTC()
		m.DisputedAt = &at
	}
	return m
}
