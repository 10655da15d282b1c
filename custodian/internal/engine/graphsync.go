package engine

import (
	"context"
	"errors"
	"time"

	"github.com/phc-project/phc/graph"
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

// DefaultMaxApplyEdges bounds the edges the worker joins into one graph commit:
// a bbolt transaction of many random keys costs more than linearly (see
// docs/benchmarks/history.md), so a few large commits beat one huge one. A single delta
// larger than this is still applied whole.
const DefaultMaxApplyEdges = 10_000 // tests lower it (Hooks.MaxApplyEdges)

// graphDelay is how long the worker collects deltas after the first one
// before it commits them to the graph, unless a traversal, check or export
// is waiting for it (then at once): a graph commit (two fdatasyncs and a
// write per page) costs about what a hundred owner writes do, and a key
// written again and again within the delay changes the graph once (see
// DeltaMerger). At a million claims a commit's pages are scattered writes
// of their own; 250 ms rather than 50 cut the disk writes per owner write
// by a sixth (4.8–5.1 → 3.9–4.2 I/Os), 1 s rather than 250 ms (with the
// store's flush every 2 s rather than 500 ms) by half again (docs/benchmarks/history.md).
const graphDelay = time.Second

// GraphJob is a committed group's delta for the worker.
type GraphJob struct {
	st *State
	d  graph.Delta
}

// graphWorker applies committed deltas to the graph: after the first one
// it collects more for graphDelay (or until someone waits for the graph),
// then applies what it has for the same state as one.
func (s *Engine) graphWorker() {
	defer s.Wg.Done()
	timer := time.NewTimer(graphDelay)
	timer.Stop()
	var carry *GraphJob
	for {
		if carry == nil {
			select {
			case <-s.Stop:
				return
			case j := <-s.graphQ:
				carry = &j
			}
		}
		batch := []GraphJob{*carry}
		edges := carry.size()
		carry = nil
		lag := batch[0].st.Lag
		timer.Reset(graphDelay)
		waiting := true
	collect:
		for len(batch) < MaxGroup {
			var j GraphJob
			if waiting {
				select {
				case j = <-s.graphQ:
				case <-lag.Hurry():
					waiting = false
					continue
				case <-timer.C:
					waiting = false
					continue
				case <-s.Stop:
					waiting = false
					continue
				}
			} else {
				select {
				case j = <-s.graphQ:
				default:
					break collect
				}
			}
			if j.st != batch[0].st || edges+j.size() > s.Hooks.MaxApplyEdges {
				carry = &j
				break
			}
			batch = append(batch, j)
			edges += j.size()
		}
		timer.Stop()
		if hold := s.heldGraph(); hold != nil {
			batch, carry = s.collectHeld(hold, batch, carry)
		}
		// Applied s.hooks.maxApplyEdges at a time (a single larger delta whole):
		// a batch collected while the graph was held may be larger.
		for len(batch) > 0 {
			n, edges := 1, batch[0].size()
			for n < len(batch) && edges+batch[n].size() <= s.Hooks.MaxApplyEdges {
				edges += batch[n].size()
				n++
			}
			s.applyGraph(batch[:n])
			batch = batch[n:]
		}
	}
}

// HoldGraph keeps the graph worker from applying deltas until the
// returned function is called (once or more): a check compares the graph,
// outside the journal, at the revision it held when the check began. The
// worker collects the deltas committed meanwhile, so that no write waits
// for the graph; traversals do, as they wait for every write before them.
// Call it in the journal, once the graph has every delta (awaitGraph): no
// delta is then on its way to the worker that the graph lacks.
//
// A lock (or a stop) breaks every hold rather than wait for it (see
// lockLife): the returned context is then cancelled with errHoldBroken,
// and what was compared under it means nothing. A hold asked for while a
// lock waits is broken from the start.
func (s *Engine) HoldGraph(ctx context.Context, st *State) (held context.Context, letGo func()) {
	held, cancel := context.WithCancelCause(ctx)
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if s.locking[nil] > 0 || s.locking[st] > 0 {
		cancel(ErrHoldBroken)
		return held, func() {}
	}
	if len(s.holds) == 0 {
		s.graphHold = make(chan struct{})
	}
	s.holdSeq++
	id := s.holdSeq
	s.holds[id] = GraphHold{st: st, cancel: cancel}
	return held, func() {
		s.holdMu.Lock()
		defer s.holdMu.Unlock()
		if _, ok := s.holds[id]; ok {
			delete(s.holds, id)
			cancel(nil)
			s.endHoldLocked()
		}
	}
}

// GraphHold is one hold of the graph: the state it was taken in, and the
// cancel of its context.
type GraphHold struct {
	st     *State
	cancel context.CancelCauseFunc
}

// ErrHoldBroken is the cause of a hold's context when a lock broke it.
var ErrHoldBroken = errors.New("the vault was locked while the graph was held")

// breakHoldsLocked lets go of every hold of the graph taken in st (nil:
// in any state), cancelling each one's context; s.holdMu is held.
func (s *Engine) breakHoldsLocked(st *State) {
	for id, h := range s.holds {
		if st == nil || h.st == st {
			h.cancel(ErrHoldBroken)
			delete(s.holds, id)
		}
	}
	s.endHoldLocked()
}

// endHoldLocked lets the worker go on once no hold is left; s.holdMu is
// held.
func (s *Engine) endHoldLocked() {
	if len(s.holds) == 0 && s.graphHold != nil {
		close(s.graphHold)
		s.graphHold = nil
	}
}

// heldGraph returns the channel a hold closes when let go, or nil.
func (s *Engine) heldGraph() chan struct{} {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	return s.graphHold
}

// collectHeld adds to batch the deltas committed while the graph is held,
// until the hold is let go (or the service stops). A job of another state
// ends the collection (carry is then it); so does a carry already there.
func (s *Engine) collectHeld(hold chan struct{}, batch []GraphJob, carry *GraphJob) ([]GraphJob, *GraphJob) {
	// A carry of this state (the batch was full) joins it: the worker
	// must keep receiving, or the queue fills and the journal, sending to
	// it, holds every write until the hold ends.
	if carry != nil && carry.st == batch[0].st {
		batch, carry = append(batch, *carry), nil
	}
	if s.Hooks.Held != nil {
		s.Hooks.Held(len(batch))
	}
	for carry == nil {
		select {
		case j := <-s.graphQ:
			if j.st != batch[0].st {
				carry = &j
				continue
			}
			batch = append(batch, j)
			if s.Hooks.Held != nil {
				s.Hooks.Held(len(batch))
			}
		case <-hold:
			if hold = s.heldGraph(); hold == nil {
				return batch, nil
			}
		case <-s.Stop:
			return batch, nil
		}
	}
	// Not of this state: wait for the hold to end, receiving nothing more.
	for hold != nil {
		select {
		case <-hold:
			hold = s.heldGraph()
		case <-s.Stop:
			return batch, carry
		}
	}
	return batch, carry
}

// applyGraph applies the deltas of jobs (of one state, in order) as one.
// They are durable in the outbox, so a failure loses nothing: the vault
// locks, and the next unlock replays the outbox into the graph.
func (s *Engine) applyGraph(jobs []GraphJob) {
	st := jobs[0].st
	if st.Lag.Failed() {
		return
	}
	var m DeltaMerger
	keys := make([]string, 0, len(jobs))
	for _, j := range jobs {
		m.Merge(&j.d)
		keys = append(keys, ReceiptKey(j.d.Watermark))
	}
	w := jobs[len(jobs)-1].d.Watermark
	if err := s.Graph.Apply(m.Delta(w)); err != nil {
		s.Log.Error("graph update failed; locking the vault until the graph is replayed", "err", err)
		st.Lag.Fail()
		go func() {
			st.Mu.Lock()
			st.Broken = true
			st.Mu.Unlock()
			s.Broken(st)
		}()
		return
	}
	st.Lag.Applied(w, keys)
}

// size is the number of edges j's delta changes.
func (j GraphJob) size() int { return len(j.d.Add) + len(j.d.Remove) }
