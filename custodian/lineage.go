package custodian

import (
	"context"

	"github.com/phc-project/phc/graph"
)

// dependents is the graph's Dependents along lineage, joined with the
// lineage the graph does not hold yet (st.lag's pending edges: summaries
// made in the journal's group, or in groups the graph worker has not
// applied). Lineage edges are only ever added, so the graph and the pending
// edges together are the whole lineage.
func (s *Service) dependents(st *state, roots []string, visit func(string) bool) ([]graph.Dependent, error) {
	pending := st.Lag.Lineage()
	if len(pending) == 0 {
		return s.eng.Graph.Dependents(context.Background(), roots, graph.DerivedFrom, visit)
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
		deps, err := s.eng.Graph.Dependents(context.Background(), frontier, graph.DerivedFrom, once)
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
