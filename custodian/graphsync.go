package custodian

import (
	"context"
	"errors"
	"sync"
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

// graphLag is a state's view of how far the graph has followed it.
type graphLag struct {
	mu     sync.Mutex
	cond   *sync.Cond
	hurry  chan struct{} // a waiter asks the worker not to wait for more deltas
	want   uint64        // watermark of the last delta handed to the worker
	at     uint64        // watermark the graph has applied (for this state)
	failed bool

	// pending holds the lineage edges (parent ref → dependents) the graph
	// does not hold yet, each with the watermark of the delta that adds it
	// (0 while its group is being built).
	pending map[string][]derivedEdge

	// outboxDone lists outbox keys the graph has applied, to prune with
	// the next commit; floor is the highest revision pruned so (known: the
	// store records one; dirty: to be written with the next commit).
	outboxDone []string
	floor      uint64
	floorKnown bool
	floorDirty bool
}

type derivedEdge struct {
	child string
	w     uint64
}

func newGraphLag() *graphLag {
	l := &graphLag{pending: make(map[string][]derivedEdge), hurry: make(chan struct{}, 1)}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// addPending records lineage edges of the group being built.
func (l *graphLag) addPending(parent, child string) {
	l.mu.Lock()
	l.pending[parent] = append(l.pending[parent], derivedEdge{child: child})
	l.mu.Unlock()
}

// sealPending stamps the group's pending edges with its watermark w.
func (l *graphLag) sealPending(w uint64) {
	l.mu.Lock()
	for _, es := range l.pending {
		for i := range es {
			if es[i].w == 0 {
				es[i].w = w
			}
		}
	}
	l.mu.Unlock()
}

// lineage returns a copy of the pending lineage (nil if there is none).
func (l *graphLag) lineage() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return nil
	}
	out := make(map[string][]string, len(l.pending))
	for p, es := range l.pending {
		for _, e := range es {
			out[p] = append(out[p], e.child)
		}
	}
	return out
}

// handed records that the delta reaching w goes to the worker.
func (l *graphLag) handed(w uint64) {
	l.mu.Lock()
	l.want = max(l.want, w)
	l.mu.Unlock()
}

// applied records that the graph holds every delta up to w, whose outbox
// keys are keys.
func (l *graphLag) applied(w uint64, keys []string) {
	l.mu.Lock()
	l.at = max(l.at, w)
	l.outboxDone = append(l.outboxDone, keys...)
	l.floor, l.floorKnown, l.floorDirty = max(l.floor, w), true, true
	for p, es := range l.pending {
		kept := es[:0]
		for _, e := range es {
			if e.w == 0 || e.w > w {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(l.pending, p)
		} else {
			l.pending[p] = kept
		}
	}
	l.mu.Unlock()
	l.cond.Broadcast()
}

// fail records that the graph could not apply a delta.
func (l *graphLag) fail() {
	l.mu.Lock()
	l.failed = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

// wait waits until the graph has every delta handed over so far, and
// reports whether it has (false: an update failed).
func (l *graphLag) wait() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	want := l.want
	for l.at < want && !l.failed {
		select {
		case l.hurry <- struct{}{}:
		default:
		}
		l.cond.Wait()
	}
	return !l.failed
}

// prunable takes what the next commit writes about the graph: the outbox
// keys to delete, and the floor if it changed.
func (l *graphLag) prunable() (keys []string, floor uint64, dirty bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys, l.outboxDone = l.outboxDone, nil
	floor, dirty = l.floor, l.floorDirty
	l.floorDirty = false
	return keys, floor, dirty
}

// awaitGraph waits until the graph holds every write st has committed.
func (st *state) awaitGraph(op string) error {
	if !st.lag.wait() {
		return internalf(op, "the graph could not follow the store")
	}
	return nil
}

// maxApplyEdges bounds the edges the worker joins into one graph commit:
// a bbolt transaction of many random keys costs more than linearly (see
// docs/benchmarks/history.md), so a few large commits beat one huge one. A single delta
// larger than this is still applied whole.
var maxApplyEdges = 10_000 // a variable for tests only

// graphDelay is how long the worker collects deltas after the first one
// before it commits them to the graph, unless a traversal, check or export
// is waiting for it (then at once): a graph commit (two fdatasyncs and a
// write per page) costs about what a hundred owner writes do, and a key
// written again and again within the delay changes the graph once (see
// deltaMerger). At a million claims a commit's pages are scattered writes
// of their own; 250 ms rather than 50 cut the disk writes per owner write
// by a sixth (4.8–5.1 → 3.9–4.2 I/Os), 1 s rather than 250 ms (with the
// store's flush every 2 s rather than 500 ms) by half again (docs/benchmarks/history.md).
const graphDelay = time.Second

// graphJob is a committed group's delta for the worker.
type graphJob struct {
	st *state
	d  graph.Delta
}

// graphWorker applies committed deltas to the graph: after the first one
// it collects more for graphDelay (or until someone waits for the graph),
// then applies what it has for the same state as one.
func (s *Service) graphWorker() {
	defer s.wg.Done()
	timer := time.NewTimer(graphDelay)
	timer.Stop()
	var carry *graphJob
	for {
		if carry == nil {
			select {
			case <-s.stop:
				return
			case j := <-s.graphQ:
				carry = &j
			}
		}
		batch := []graphJob{*carry}
		edges := carry.size()
		carry = nil
		lag := batch[0].st.lag
		timer.Reset(graphDelay)
		waiting := true
	collect:
		for len(batch) < maxGroup {
			var j graphJob
			if waiting {
				select {
				case j = <-s.graphQ:
				case <-lag.hurry:
					waiting = false
					continue
				case <-timer.C:
					waiting = false
					continue
				case <-s.stop:
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
			if j.st != batch[0].st || edges+j.size() > maxApplyEdges {
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
		// Applied maxApplyEdges at a time (a single larger delta whole):
		// a batch collected while the graph was held may be larger.
		for len(batch) > 0 {
			n, edges := 1, batch[0].size()
			for n < len(batch) && edges+batch[n].size() <= maxApplyEdges {
				edges += batch[n].size()
				n++
			}
			s.applyGraph(batch[:n])
			batch = batch[n:]
		}
	}
}

// holdGraph keeps the graph worker from applying deltas until the
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
func (s *Service) holdGraph(ctx context.Context, st *state) (held context.Context, letGo func()) {
	held, cancel := context.WithCancelCause(ctx)
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if s.locking[nil] > 0 || s.locking[st] > 0 {
		cancel(errHoldBroken)
		return held, func() {}
	}
	if len(s.holds) == 0 {
		s.graphHold = make(chan struct{})
	}
	s.holdSeq++
	id := s.holdSeq
	s.holds[id] = graphHold{st: st, cancel: cancel}
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

// graphHold is one hold of the graph: the state it was taken in, and the
// cancel of its context.
type graphHold struct {
	st     *state
	cancel context.CancelCauseFunc
}

// heldHook, when set (tests), runs with the number of deltas the worker
// has collected while the graph is held, each time it grows.
var heldHook func(collected int)

// errHoldBroken is the cause of a hold's context when a lock broke it.
var errHoldBroken = errors.New("the vault was locked while the graph was held")

// breakHoldsLocked lets go of every hold of the graph taken in st (nil:
// in any state), cancelling each one's context; s.holdMu is held.
func (s *Service) breakHoldsLocked(st *state) {
	for id, h := range s.holds {
		if st == nil || h.st == st {
			h.cancel(errHoldBroken)
			delete(s.holds, id)
		}
	}
	s.endHoldLocked()
}

// endHoldLocked lets the worker go on once no hold is left; s.holdMu is
// held.
func (s *Service) endHoldLocked() {
	if len(s.holds) == 0 && s.graphHold != nil {
		close(s.graphHold)
		s.graphHold = nil
	}
}

// heldGraph returns the channel a hold closes when let go, or nil.
func (s *Service) heldGraph() chan struct{} {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	return s.graphHold
}

// collectHeld adds to batch the deltas committed while the graph is held,
// until the hold is let go (or the service stops). A job of another state
// ends the collection (carry is then it); so does a carry already there.
func (s *Service) collectHeld(hold chan struct{}, batch []graphJob, carry *graphJob) ([]graphJob, *graphJob) {
	// A carry of this state (the batch was full) joins it: the worker
	// must keep receiving, or the queue fills and the journal, sending to
	// it, holds every write until the hold ends.
	if carry != nil && carry.st == batch[0].st {
		batch, carry = append(batch, *carry), nil
	}
	if heldHook != nil {
		heldHook(len(batch))
	}
	for carry == nil {
		select {
		case j := <-s.graphQ:
			if j.st != batch[0].st {
				carry = &j
				continue
			}
			batch = append(batch, j)
			if heldHook != nil {
				heldHook(len(batch))
			}
		case <-hold:
			if hold = s.heldGraph(); hold == nil {
				return batch, nil
			}
		case <-s.stop:
			return batch, nil
		}
	}
	// Not of this state: wait for the hold to end, receiving nothing more.
	for hold != nil {
		select {
		case <-hold:
			hold = s.heldGraph()
		case <-s.stop:
			return batch, carry
		}
	}
	return batch, carry
}

// applyGraph applies the deltas of jobs (of one state, in order) as one.
// They are durable in the outbox, so a failure loses nothing: the vault
// locks, and the next unlock replays the outbox into the graph.
func (s *Service) applyGraph(jobs []graphJob) {
	st := jobs[0].st
	if st.lag.hasFailed() {
		return
	}
	var m deltaMerger
	keys := make([]string, 0, len(jobs))
	for _, j := range jobs {
		m.merge(&j.d)
		keys = append(keys, receiptKey(j.d.Watermark))
	}
	w := jobs[len(jobs)-1].d.Watermark
	if err := s.graph.Apply(m.delta(w)); err != nil {
		s.log.Error("graph update failed; locking the vault until the graph is replayed", "err", err)
		st.lag.fail()
		go func() {
			st.mu.Lock()
			st.broken = true
			st.mu.Unlock()
			s.lockBroken(st)
		}()
		return
	}
	st.lag.applied(w, keys)
}

// hasFailed reports whether an update has failed already.
func (l *graphLag) hasFailed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// size is the number of edges j's delta changes.
func (j graphJob) size() int { return len(j.d.Add) + len(j.d.Remove) }
