package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// The projection's store records: the outbox holds each committed group's
// graph delta under its revision until the graph has it; meta/graph_floor
// is the highest revision whose delta was applied and pruned.
const (
	BucketOutbox        = "graph_outbox" // %016x revision → graph.Delta
	MetaGraphFloor      = "graph_floor"
	MetaGraphProjection = "graph_projection" // the projectionVersion the graph was built with
)

// ProjectionVersion numbers what ClaimEdges and its siblings project. A
// graph built with another (a store without the record: 1) is rebuilt at
// unlock. 2: an About edge has no label (it was the claim's head ref, which
// made every correction two graph writes).
const ProjectionVersion = 2

// publish sets m[id] = v in the view, first noting for the journal's job
// (which of its maps, noted says) the version v replaces.
func publish[T any](st *State, m map[string]*T, noted func(*JobCtx) *map[string]*T, id string, v *T) {
	if st.Job != nil {
		NoteOld(noted(st.Job), id, m[id])
	}
	m[id] = v
}

func (st *State) SetGrant(g *model.Grant) {
	if old := st.Grants[g.ID]; old != nil {
		delete(st.GrantsBy[old.Recipient.Name()], g.ID)
	}
	publish(st, st.Grants, func(j *JobCtx) *map[string]*model.Grant { return &j.Grants }, g.ID, g)
	st.IndexGrant(g)
}

// IndexGrant files g under its recipient.
func (st *State) IndexGrant(g *model.Grant) {
	m := st.GrantsBy[g.Recipient.Name()]
	if m == nil {
		m = map[string]*model.Grant{}
		st.GrantsBy[g.Recipient.Name()] = m
	}
	m[g.ID] = g
}

func (st *State) SetPersona(p *model.Persona) {
	publish(st, st.Personas, func(j *JobCtx) *map[string]*model.Persona { return &j.Personas }, p.ID, p)
}

// DeletePersona takes persona id out of the view (its node leaves the
// graph at the end of the write).
func (st *State) DeletePersona(id string) {
	if st.Job != nil {
		NoteOld(&st.Job.Personas, id, st.Personas[id])
	}
	delete(st.Personas, id)
}

func (st *State) SetSummary(s *model.Summary) {
	publish(st, st.Summaries, func(j *JobCtx) *map[string]*model.Summary { return &j.Summaries }, s.ID, s)
}

func (st *State) SetEntity(e *model.Entity) {
	publish(st, st.Entities, func(j *JobCtx) *map[string]*model.Entity { return &j.Entities }, e.ID, e)
}

// ClaimEdges is the projection of one claim record: an active claim is a
// node about its subject, in its personas; a relationship is also an edge
// between its ends, labelled with its head ref (which a traversal checks is
// still the head). A new version that keeps the subject, the personas and
// the ends changes nothing in the graph.
// Anything not active — deleted, retracted, proposed, quarantined — is not
// in the graph. Only a relationship's edges need the claim's content (its
// ends): the rest comes from the meta, so that the whole projection (a
// check, a rebuild) reads no other claim from the store.
func (st *State) ClaimEdges(r *ClaimRecord) []graph.Edge {
	if r == nil || r.Meta.Status != model.StatusActive {
		return nil
	}
	id := r.Meta.ID
	es := []graph.Edge{{Subject: id, Predicate: graph.About, Object: r.Meta.Subject}}
	for _, pid := range r.Meta.Personas {
		if p := st.Personas[pid]; p != nil && p.Node != "" {
			es = append(es, graph.Edge{Subject: id, Predicate: graph.InPersona, Object: p.Node})
		}
	}
	if r.Meta.Kind == model.KindRelationship {
		c := r.Head()
		if rel, ok := model.RelationshipOf(c); ok {
			es = append(es, graph.Edge{Subject: rel.From, Predicate: graph.Related, Object: rel.To, Label: c.Ref()})
		}
	}
	return es
}

// summaryEdges: a summary's lineage, kept whatever its status (lineage is
// history; staleness is recorded on the summary).
func summaryEdges(s *model.Summary) []graph.Edge {
	if s == nil {
		return nil
	}
	es := make([]graph.Edge, 0, len(s.DerivedFrom))
	for _, p := range s.DerivedFrom {
		es = append(es, graph.Edge{Subject: s.Ref(), Predicate: graph.DerivedFrom, Object: p})
	}
	return es
}

func entityEdges(e *model.Entity) []graph.Edge {
	if e == nil {
		return nil
	}
	return []graph.Edge{{Subject: e.ID, Predicate: graph.Type, Object: graph.NS + model.EntityTypes[e.Type]}}
}

// personaEdges: a persona is a node under its opaque key; its id is the
// owner's own word and stays in the encrypted store.
func personaEdges(p *model.Persona) []graph.Edge {
	if p == nil || p.Node == "" {
		return nil
	}
	return []graph.Edge{{Subject: p.Node, Predicate: graph.Type, Object: graph.NS + "Persona"}}
}

// grantEdges: a grant in force (not revoked) is a node. Its recipient's
// name stays out of the graph.
func grantEdges(g *model.Grant) []graph.Edge {
	if g == nil || g.RevokedAt != nil {
		return nil
	}
	return []graph.Edge{{Subject: g.ID, Predicate: graph.Type, Object: graph.NS + "Grant"}}
}

// Projection is the whole graph the view implies, sorted.
func (st *State) Projection() []graph.Edge {
	var es []graph.Edge
	for _, r := range st.Claims {
		es = append(es, st.ClaimEdges(r)...)
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
func finishJob(g graph.Graph, st *State, b *Batch) error {
	j := st.Job
	for id, old := range j.Claims {
		diffEdges(&b.Graph, st.ClaimEdges(old), st.ClaimEdges(st.Claims[id]))
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
		if err := invalidate(g, st, b, old.Head().Ref(), cause); err != nil {
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

// invalidationCause says why a change from old to nw invalidates what was
// derived from old, or "" when it does not.
func invalidationCause(old, nw *ClaimRecord) string {
	if old == nil || old.Meta.Status != model.StatusActive {
		return ""
	}
	switch {
	case nw == nil || nw.Meta.Status == model.StatusDeleted:
		return model.CauseDeleted
	case nw.Meta.Status != model.StatusActive:
		return model.CauseRetracted
	case nw.Meta.Head != old.Meta.Head:
		a, b := old.Head(), nw.Head()
		switch {
		case string(a.Value) != string(b.Value) || a.Key != b.Key || a.Kind != b.Kind || a.Subject != b.Subject:
			return model.CauseCorrected
		case !sameRestrictions(a.Restrictions, b.Restrictions):
			return model.CauseRestrictionsChanged
		case a.Sensitivity != b.Sensitivity:
			return model.CauseSensitivityChanged
		}
		return model.CauseCorrected // any new version supersedes the one derived from
	}
	if old.Meta.DisputedAt == nil && nw.Meta.DisputedAt != nil {
		return model.CauseDisputed
	}
	for _, p := range old.Meta.Personas {
		if !nw.InPersona(p) {
			return model.CausePersonasNarrowed
		}
	}
	return ""
}

func sameRestrictions(a, b []model.Restriction) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

// invalidate marks every current summary that depends on the claim version
// root, transitively along lineage, stale as of this write's revision.
func invalidate(g graph.Graph, st *State, b *Batch, root, cause string) error {
	if len(st.Summaries) == 0 {
		return nil // only summaries are made stale: no walk of the graph
	}
	deps, err := dependents(g, st, []string{root}, func(n string) bool {
		sm := st.SummaryByRef(n)
		return sm != nil && sm.Status == model.SummaryCurrent
	})
	if err != nil {
		return model.Wrap("invalidate", model.KindInternal, err)
	}
	inv := Invalidation{Revision: st.Revision, At: b.Now, Root: root, Cause: cause}
	for _, d := range deps {
		sm := st.SummaryByRef(d.Node)
		if sm == nil || sm.Status != model.SummaryCurrent {
			continue
		}
		inv.Stale = append(inv.Stale, staleEntry{ID: sm.ID, Parent: d.Via})
	}
	if len(inv.Stale) == 0 {
		return nil
	}
	inv.Apply(st)
	// One record for the whole closure: the summaries themselves are not
	// rewritten (10,000 dependents make one write, not 10,000).
	b.Put(BucketInvalidations, fmt.Sprintf("%016x-%s", inv.Revision, root), &inv)
	return nil
}

// Invalidation is the stored record of one change's invalidation closure.
type Invalidation struct {
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

const BucketInvalidations = "invalidations" // %016x revision-root → invalidation

// Apply marks the record's summaries stale in the view.
func (inv *Invalidation) Apply(st *State) {
	at := inv.At
	rootID := model.IDOfRef(inv.Root)
	for _, e := range inv.Stale {
		sm := st.Summaries[e.ID]
		if sm == nil || sm.Status != model.SummaryCurrent {
			continue
		}
		ns := *sm
		ns.Status = model.SummaryStale
		c := model.CauseParentStale
		if model.IDOfRef(e.Parent) == rootID {
			c = inv.Cause
		}
		ns.Stale = &model.Staleness{Parent: e.Parent, Cause: c, Root: inv.Root, RootCause: inv.Cause, Revision: inv.Revision, At: &at}
		st.Summaries[e.ID] = &ns // a status change: nothing to project
	}
}

// SyncGraph brings the graph up to the store at unlock: it replays the
// outbox's deltas the graph lacks, or rebuilds the graph when it cannot
// (a graph never built, behind the pruned outbox, or ahead of the store).
func (s *Engine) SyncGraph(st *State) error {
	w, err := s.Graph.Watermark()
	if err != nil {
		return err
	}
	var keys []string
	var deltas []graph.Delta
	if err := s.Store.View(func(tx Tx) error {
		return tx.ForEach(BucketOutbox, func(k string, v []byte) error {
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
		s.Log.Info("rebuilding the graph from the store", "watermark", w, "revision", st.Revision)
		st.GraphSync = fmt.Sprintf("rebuilt at unlock: the graph was at watermark %d, the store at revision %d", w, st.Revision)
		return s.RebuildGraph(st)
	case st.ProjectionAt != ProjectionVersion:
		s.Log.Info("rebuilding the graph from the store: its projection changed", "from", st.ProjectionAt, "to", ProjectionVersion)
		st.GraphSync = fmt.Sprintf("rebuilt at unlock: the graph was built with projection %d, this version projects %d", st.ProjectionAt, ProjectionVersion)
		return s.RebuildGraph(st)
	}
	replayed := 0
	for _, d := range deltas {
		if d.Watermark <= w {
			continue
		}
		if err := s.Graph.Apply(d); err != nil {
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

// RebuildGraph replaces the graph by the view's projection, at the view's
// revision. Callers hold st.mu or own st alone.
func (s *Engine) RebuildGraph(st *State) error {
	if err := s.Graph.Replace(st.Projection(), st.Revision); err != nil {
		return err
	}
	st.Lag.Applied(st.Revision, nil)
	return nil
}

// SummaryByRef returns the summary a ref names, if that version exists.
// It is on the invalidation walk's path, so it parses without allocating.
func (st *State) SummaryByRef(ref string) *model.Summary {
	at := strings.IndexByte(ref, '@')
	if at < 0 || at+1 == len(ref) {
		return nil
	}
	s := st.Summaries[ref[:at]]
	if s == nil {
		return nil
	}
	v := 0
	for _, c := range ref[at+1:] {
		if c < '0' || c > '9' || v > 1<<30 {
			return nil
		}
		v = v*10 + int(c-'0')
	}
	if s.Version != v || ref[at+1] == '0' {
		return nil
	}
	return s
}

// dependents is the graph's Dependents along lineage, joined with the
// lineage the graph does not hold yet (st.lag's pending edges: summaries
// made in the journal's group, or in groups the graph worker has not
// applied). Lineage edges are only ever added, so the graph and the pending
// edges together are the whole lineage.
func dependents(g graph.Graph, st *State, roots []string, visit func(string) bool) ([]graph.Dependent, error) {
	pending := st.Lag.Lineage()
	if len(pending) == 0 {
		return g.Dependents(context.Background(), roots, graph.DerivedFrom, visit)
	}
	seen := make(map[string]bool, len(roots))
	for _, r := range roots {
		seen[r] = true
	}
	once := func(n string) bool {
		if seen[n] || !visit(n) {
			return false
		}
		seen[n] = true
		return true
	}
	var out []graph.Dependent
	frontier := roots
	for len(frontier) > 0 {
		deps, err := g.Dependents(context.Background(), frontier, graph.DerivedFrom, once)
		if err != nil {
			return nil, err
		}
		out = append(out, deps...)
		reached := append([]string{}, frontier...)
		for _, d := range deps {
			reached = append(reached, d.Node)
		}
		frontier = nil
		for _, n := range reached {
			for _, c := range pending[n] {
				if once(c) {
					out = append(out, graph.Dependent{Node: c, Via: n})
					frontier = append(frontier, c)
				}
			}
		}
	}
	return out, nil
}
