package engine

import (
	"errors"
	"sync"
	"sync/atomic"
)

// The claim cache. The view keeps every claim's identity and what its
// indexes sort and filter by (its Meta), but not its content: the head
// version is resident only while it is in the cache, and older versions
// are read from the store when asked. Memory then follows the working set
// — what reads and writes touch — within a byte budget, not the vault's
// size or its history.
//
// A record published by a write carries its head (and any older version
// the store does not have yet); the cache never drops a version before the
// journal's group that wrote it is durable, so a version is always either
// resident or in the store.

// Entry is a record the cache holds: the core's claim record, which embeds
// a Resident.
type Entry[C any] interface {
	// Res returns the record's Resident.
	Res() *Resident[C]
	// Ident returns the record's claim id and head version.
	Ident() (id string, head int)
	// Evicted drops whatever the record derived from its head (a served
	// form): the cache has dropped the head.
	Evicted()
}

// Resident is what of a record's versions is in memory. A record is
// replaced, never changed, once published; its Resident changes only by
// the cache's loads and evictions, atomically.
type Resident[C any] struct {
	// Group is the journal group that published the record (0: loaded at
	// the unlock); its versions may leave memory once it is durable. Set
	// before the record is published.
	Group uint64
	flags atomic.Uint32
	// hd is the head version while it is resident (nil: read it from the
	// store); older, the versions before it that the store may not have
	// yet.
	hd    atomic.Pointer[C]
	older atomic.Pointer[[]*C]
}

// Record flags.
const (
	flagReferenced uint32 = 1 << iota // read since the cache last passed it
	flagQueued                        // in the cache's queue
)

// Touch returns the resident head, marking it read, or nil when it is not
// resident.
func (x *Resident[C]) Touch() *C {
	c := x.hd.Load()
	if c != nil && x.flags.Load()&flagReferenced == 0 {
		x.flags.Or(flagReferenced)
	}
	return c
}

// Loaded returns the resident head, or nil, without marking it read.
func (x *Resident[C]) Loaded() *C { return x.hd.Load() }

// Hold makes head resident, with older the versions before it that the
// store may not have yet (in any order), for a record not yet published.
func (x *Resident[C]) Hold(head *C, older []*C) {
	x.hd.Store(head)
	if len(older) > 0 {
		x.older.Store(&older)
	}
}

// Share makes x, a record not yet published, hold what from holds.
func (x *Resident[C]) Share(from *Resident[C]) {
	if c := from.hd.Load(); c != nil { // a head not resident is in the store
		x.hd.Store(c)
	}
	x.older.Store(from.older.Load())
}

// Older returns the versions before the head that x carries (nil: none).
func (x *Resident[C]) Older() []*C {
	if o := x.older.Load(); o != nil {
		return *o
	}
	return nil
}

// Cache holds resident heads within a byte budget, evicting with a
// second-chance (CLOCK) queue. Its methods may run concurrently; its
// queue has a lock of its own (mu), taken after the view's and never
// while the store is read.
type Cache[C any, R Entry[C]] struct {
	read    func(id string, vs ...int) ([]*C, error)
	weight  func(*C) int64
	version func(*C) int
	budget  int64
	// durable mirrors the view's durable group, for eviction without its
	// lock.
	durable atomic.Uint64

	mu    sync.Mutex
	queue []R // resident records, oldest first (a ring)
	start int // the ring's first element
	n     int // its length
	bytes int64
}

// NewCache returns a cache of budget bytes (more than 0). read decodes
// versions of a claim from the store; an error is a store that does not
// read back, which the cache returns as it is. weight estimates what a
// resident head costs; version is a version's number (1-based).
func NewCache[C any, R Entry[C]](budget int64, read func(id string, vs ...int) ([]*C, error), weight func(*C) int64, version func(*C) int) *Cache[C, R] {
	return &Cache[C, R]{read: read, weight: weight, version: version, budget: budget}
}

// SetDurable records that every group up to g is committed: their
// records' versions may leave memory.
func (cc *Cache[C, R]) SetDurable(g uint64) {
	if cc != nil {
		cc.durable.Store(g)
	}
}

// Head returns r's current version, reading it from the store when it is
// not resident.
func (cc *Cache[C, R]) Head(r R) (*C, error) {
	x := r.Res()
	if c := x.Touch(); c != nil {
		return c, nil
	}
	id, head := r.Ident()
	cs, err := cc.readVersions(id, head)
	if err != nil {
		return nil, err
	}
	c := cs[0]
	if !x.hd.CompareAndSwap(nil, c) {
		return x.hd.Load(), nil
	}
	cc.Admit(r, c)
	return c, nil
}

// Version returns version v (1-based) of r: the head, a version the
// record still carries, or one read from the store.
func (cc *Cache[C, R]) Version(r R, v int) (*C, error) {
	id, head := r.Ident()
	if v == head {
		return cc.Head(r)
	}
	if c := cc.carries(r.Res(), v); c != nil {
		return c, nil
	}
	cs, err := cc.readVersions(id, v)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// readVersions reads versions vs of claim id from the store.
func (cc *Cache[C, R]) readVersions(id string, vs ...int) ([]*C, error) {
	if cc == nil || cc.read == nil {
		return nil, errors.New("no store")
	}
	return cc.read(id, vs...)
}

// carries returns version v if x still carries it, else nil.
func (cc *Cache[C, R]) carries(x *Resident[C], v int) *C {
	if cc == nil {
		return nil
	}
	for _, c := range x.Older() {
		if cc.version(c) == v {
			return c
		}
	}
	return nil
}

// Versions returns every version of r, oldest first, reading those it
// does not hold from the store in one transaction.
func (cc *Cache[C, R]) Versions(r R) ([]*C, error) {
	id, head := r.Ident()
	out := make([]*C, head)
	var missing []int
	for v := 1; v < head; v++ {
		if out[v-1] = cc.carries(r.Res(), v); out[v-1] == nil {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		cs, err := cc.readVersions(id, missing...)
		if err != nil {
			return nil, err
		}
		for i, c := range cs {
			out[missing[i]-1] = c
		}
	}
	c, err := cc.Head(r)
	if err != nil {
		return nil, err
	}
	out[head-1] = c
	return out, nil
}

// Scan returns every version of r, oldest first, as Versions does, but
// leaves the cache as it was: a head that is not resident is read from
// the store with the rest and not kept. It is for bulk reads (an export,
// a backup), which would otherwise push out the heads that reads use and
// hold the budget's worth of memory after them.
func (cc *Cache[C, R]) Scan(r R) ([]*C, error) {
	x := r.Res()
	if x.Loaded() != nil {
		return cc.Versions(r)
	}
	id, head := r.Ident()
	out := make([]*C, head)
	var missing []int
	for v := 1; v <= head; v++ {
		if v < head {
			out[v-1] = cc.carries(x, v)
		}
		if out[v-1] == nil {
			missing = append(missing, v)
		}
	}
	cs, err := cc.readVersions(id, missing...)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		out[missing[i]-1] = c
	}
	return out, nil
}

// Admit counts r's resident head c and evicts what the budget cannot
// hold.
func (cc *Cache[C, R]) Admit(r R, c *C) {
	if cc == nil {
		return
	}
	w := cc.weight(c)
	x := r.Res()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.bytes += w
	if x.flags.Load()&flagQueued == 0 {
		x.flags.Or(flagQueued)
		cc.push(r)
	}
	cc.evict()
}

func (cc *Cache[C, R]) push(r R) {
	if cc.n == len(cc.queue) {
		q := make([]R, max(64, 2*len(cc.queue)))
		for i := range cc.n {
			q[i] = cc.queue[(cc.start+i)%len(cc.queue)]
		}
		cc.queue, cc.start = q, 0
	}
	cc.queue[(cc.start+cc.n)%len(cc.queue)] = r
	cc.n++
}

func (cc *Cache[C, R]) pop() R {
	var zero R
	r := cc.queue[cc.start]
	cc.queue[cc.start] = zero
	cc.start = (cc.start + 1) % len(cc.queue)
	cc.n--
	return r
}

// evict drops resident heads, oldest first, until the budget holds them,
// giving a second chance to those read since the last pass and keeping
// those whose group is not yet durable (with cc.mu held).
func (cc *Cache[C, R]) evict() {
	durable := cc.durable.Load()
	for tries := cc.n * 2; cc.bytes > cc.budget && cc.n > 0 && tries > 0; tries-- {
		r := cc.pop()
		x := r.Res()
		c := x.hd.Load()
		if c == nil {
			x.flags.And(^flagQueued)
			continue
		}
		if x.Group > durable || x.flags.Load()&flagReferenced != 0 {
			x.flags.And(^flagReferenced)
			cc.push(r)
			continue
		}
		x.flags.And(^flagQueued)
		x.hd.Store(nil)
		x.older.Store(nil)
		r.Evicted()
		cc.bytes -= cc.weight(c)
	}
	if cc.n > 0 && cc.n < len(cc.queue)/4 && len(cc.queue) > 1024 {
		q := make([]R, len(cc.queue)/2)
		for i := range cc.n {
			q[i] = cc.queue[(cc.start+i)%len(cc.queue)]
		}
		cc.queue, cc.start = q, 0
	}
}
