package engine

import "github.com/phc-project/phc/graph"

// DeltaMerger joins consecutive deltas into one equal to applying them in
// order. Deltas are exact diffs of the projection — an edge is added only
// when absent and removed only when present — so an edge whose first and
// last change agree ends as that change says, and one whose first and last
// change differ (added then removed, or removed then added back) ends as it
// began: it is left out, never removed from a graph that does not hold it.
type DeltaMerger struct {
	first map[graph.Edge]bool // edge → its first change: added (true) or removed
	last  map[graph.Edge]bool // edge → its last change
	order []graph.Edge        // first-seen order, for a stable delta
	fresh []string
}

// Merge adds d after the deltas merged so far.
func (m *DeltaMerger) Merge(d *graph.Delta) {
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

// Changes reports whether any delta was merged (the group then has an
// outbox record and a watermark to reach, even if its changes cancel out).
func (m *DeltaMerger) Changes() bool { return len(m.order) > 0 }

// Delta returns the merged delta, reaching watermark.
func (m *DeltaMerger) Delta(watermark uint64) graph.Delta {
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
