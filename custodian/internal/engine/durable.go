package engine

import "sync"

// Durability tracks which of the journal's groups are committed. The
// journal applies a group to the view before its commit, so a read of the
// view may see a write that is not durable yet; a read that answers
// without a receipt of its own waits (Await) for the group it saw, so that
// it never discloses a write that a failed commit then loses.
//
// Its mutex is a leaf: nothing else is locked while it is held, and it may
// be taken with the view's lock held (read or write).
type Durability struct {
	mu      sync.Mutex
	cond    sync.Cond
	durable uint64 // every group up to it is committed
	failed  bool   // a commit failed: no later group ever will be
	waiting int    // reads in Await
	// wait, if set (tests), runs when a read begins to wait, with mu held.
	wait func()
}

// NewDurability returns a tracker at group 0; onWait (nil: none) runs
// when a read begins to wait, with the tracker's lock held (tests).
func NewDurability(onWait func()) *Durability {
	d := &Durability{wait: onWait}
	d.cond.L = &d.mu
	return d
}

// MarkDurable records that every group up to g is committed.
func (d *Durability) MarkDurable(g uint64) {
	d.mu.Lock()
	if g > d.durable {
		d.durable = g
	}
	d.mu.Unlock()
	d.cond.Broadcast()
}

// MarkFailed records that a commit failed: the groups after the durable
// one never will be, and every read waiting, or to wait, fails.
func (d *Durability) MarkFailed() {
	d.mu.Lock()
	d.failed = true
	d.mu.Unlock()
	d.cond.Broadcast()
}

// Await waits until group g is committed. It returns false if a commit
// failed, even if g is durable: the view read may hold a failed job's
// half-made change.
func (d *Durability) Await(g uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.durable < g && !d.failed {
		d.waiting++
		if d.wait != nil {
			d.wait()
		}
		for d.durable < g && !d.failed {
			d.cond.Wait()
		}
		d.waiting--
	}
	return !d.failed
}

// State returns the durable group and whether a commit failed.
func (d *Durability) State() (durable uint64, failed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.durable, d.failed
}

// Waiting is how many reads wait in Await.
func (d *Durability) Waiting() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting
}
