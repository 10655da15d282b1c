package custodian

import (
	"context"

	"github.com/phc-project/phc/graph"
)

// deltaMerger joins consecutive deltas into one equal to applying them in
// order. Deltas are exact diffs of the projection — an edge is added only
// when absent and removed only when present — so an edge whose first and
// last change agree ends as that change says, and one whose first and last
// change differ (added then removed, or removed then added back) ends as it
// began: it is left out, never removed from a graph that does not hold it.
type deltaMerger struct {
	first map[graph.Edge]bool // edge → its first change: added (true) or removed
	last  map[graph.Edge]bool // edge → its last change
	order []graph.Edge        // first-seen order, for a stable delta
	fresh []string
}

// merge adds d after the deltas merged so far.
func (m *deltaMerger) merge(d *graph.Delta) {
	if len(d.Add)+len(d.Remove) == 0 {
		return
	}
	if m.last == nil {
		m.first = make(map[graph.Edge]bool, len(d.Add)+len(d.Remove))
		m.last = make(map[graph.Edge]bool, len(d.Add)+len(d.Remove))
	}
	set := func(e graph.Edge, add bool) {
		if _, ok := m.last[e]; !ok {
			m.order = append(m.order, e)
			m.first[e] = add
		}
		m.last[e] = add
	}
	for _, e := range d.Remove {
		set(e, false)
	}
	for _, e := range d.Add {
		set(e, true)
	}
	m.fresh = append(m.fresh, d.Fresh...)
}

// changes reports whether any delta was merged (the group then has an
// outbox record and a watermark to reach, even if its changes cancel out).
func (m *deltaMerger) changes() bool { return len(m.order) > 0 }

// delta returns the merged delta, reaching watermark.
func (m *deltaMerger) delta(watermark uint64) graph.Delta {
	d := graph.Delta{Fresh: m.fresh, Watermark: watermark}
	for _, e := range m.order {
		if m.first[e] != m.last[e] {
			continue
		}
		if m.last[e] {
			d.Add = append(d.Add, e)
		} else {
			d.Remove = append(d.Remove, e)
		}
	}
	return d
}

// mergeJob adds a job's delta to the group's, and records the lineage it
// adds as pending until the graph has it.
func (m *deltaMerger) mergeJob(st *state, d *graph.Delta) {
	m.merge(d)
	for _, e := range d.Add {
		if e.Predicate == graph.DerivedFrom {
			st.lag.addPending(e.Object, e.Subject)
		}
	}
}

// dependents is the graph's Dependents along lineage, joined with the
// lineage the graph does not hold yet (st.lag's pending edges: summaries
// made in the journal's group, or in groups the graph worker has not
// applied). Lineage edges are only ever added, so the graph and the pending
// edges together are the whole lineage.
func (s *Service) dependents(st *state, roots []string, visit func(string) bool) ([]graph.Dependent, error) {
	pending := st.lag.lineage()
	if len(pending) == 0 {
		return s.graph.Dependents(context.Background(), roots, graph.DerivedFrom, visit)
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
		deps, err := s.graph.Dependents(context.Background(), frontier, graph.DerivedFrom, once)
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
