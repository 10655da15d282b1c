package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
)

// The graph follows the store off the writes' critical path. The journal
// commits a group (its delta durable in the outbox with it), answers its
// writers, and hands the delta to the graph worker, which applies whatever
// has queued up as one delta: one graph commit for many groups. Until the
// graph has a delta, the lineage it adds is kept in memory (see dependents),
// so that invalidation never misses a dependent; traversals, checks and
// exports first wait for the graph to reach the last delta handed over
// (awaitGraph). A failed graph update locks the vault; the next unlock
// replays the outbox.

// awaitGraph waits until the graph holds every write st has committed.
func (st *state) awaitGraph(op string) error {
	if !st.Lag.Wait() {
		return model.Internalf(op, "the graph could not follow the store")
	}
	return nil
}

// tests lower it (testHooks.maxApplyEdges)
