package engine

import "sync"

// GraphLag is a view's record of how far the graph has followed it: the
// graph follows the store off the writes' critical path (the core's graph
// worker applies committed deltas later). Its mutex is a leaf; cond waits
// on it.
type GraphLag struct {
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

// NewGraphLag returns the record of a view the graph has not followed
// yet.
func NewGraphLag() *GraphLag {
	l := &GraphLag{pending: make(map[string][]derivedEdge), hurry: make(chan struct{}, 1)}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// AddPending records lineage edges of the group being built.
func (l *GraphLag) AddPending(parent, child string) {
	l.mu.Lock()
	l.pending[parent] = append(l.pending[parent], derivedEdge{child: child})
	l.mu.Unlock()
}

// SealPending stamps the group's pending edges with its watermark w.
func (l *GraphLag) SealPending(w uint64) {
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

// Lineage returns a copy of the pending lineage (nil if there is none).
func (l *GraphLag) Lineage() map[string][]string {
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

// Handed records that the delta reaching w goes to the worker.
func (l *GraphLag) Handed(w uint64) {
	l.mu.Lock()
	l.want = max(l.want, w)
	l.mu.Unlock()
}

// Applied records that the graph holds every delta up to w, whose outbox
// keys are keys.
func (l *GraphLag) Applied(w uint64, keys []string) {
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

// Fail records that the graph could not apply a delta.
func (l *GraphLag) Fail() {
	l.mu.Lock()
	l.failed = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

// Wait waits until the graph has every delta handed over so far, and
// reports whether it has (false: an update failed).
func (l *GraphLag) Wait() bool {
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

// Prunable takes what the next commit writes about the graph: the outbox
// keys to delete, and the floor if it changed.
func (l *GraphLag) Prunable() (keys []string, floor uint64, dirty bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys, l.outboxDone = l.outboxDone, nil
	floor, dirty = l.floor, l.floorDirty
	l.floorDirty = false
	return keys, floor, dirty
}

// Failed reports whether an update has failed already.
func (l *GraphLag) Failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Hurry is where a waiter asks the graph worker not to wait for more
// deltas before it applies what it has.
func (l *GraphLag) Hurry() <-chan struct{} { return l.hurry }

// SetFloor records the floor the store records (the unlock's load).
func (l *GraphLag) SetFloor(floor uint64) {
	l.mu.Lock()
	l.floor, l.floorKnown = floor, true
	l.mu.Unlock()
}

// Resume takes the outbox keys the unlock found, to prune with the next
// commit, and returns the floor and whether the store records one.
func (l *GraphLag) Resume(keys []string) (floor uint64, known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outboxDone = keys
	return l.floor, l.floorKnown
}

// RaiseFloor raises the floor to w (written with the next commit), if it
// is below.
func (l *GraphLag) RaiseFloor(w uint64) {
	l.mu.Lock()
	if w > l.floor {
		l.floor, l.floorDirty = w, true
	}
	l.mu.Unlock()
}
