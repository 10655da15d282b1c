package custodian

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	fastjson "github.com/segmentio/encoding/json"
)

// The view keeps every claim's identity and what its indexes sort and
// filter by (key, subject, tier, kind, revision, personas, status), but
// not its content: the head version (value, evidence, producer,
// restrictions) is resident only while it is in the claim cache, and older
// versions are read from the store when asked. Memory then follows the
// working set — what reads and writes touch — within a byte budget, not
// the vault's size or its history.
//
// A record published by a write carries its head (and any older version
// the store does not have yet); the cache never drops a version before the
// journal's group that wrote it is durable, so a version is always either
// resident or in the store.

// DefaultClaimCacheBytes is the claim cache's budget when Config leaves it
// zero: about 100,000 typical heads.
const DefaultClaimCacheBytes = 64 << 20

// claimCache holds resident heads within a byte budget, evicting with a
// second-chance (CLOCK) queue.
type claimCache struct {
	store  Store
	budget int64
	// durable mirrors the state's durable group, for eviction without its
	// lock.
	durable atomic.Uint64

	mu    sync.Mutex
	queue []*claimRecord // resident records, oldest first (a ring)
	start int            // the ring's first element
	n     int            // its length
	bytes int64          // what the resident heads weigh
}

func newClaimCache(store Store, budget int64) *claimCache {
	if budget <= 0 {
		budget = DefaultClaimCacheBytes
	}
	return &claimCache{store: store, budget: budget}
}

// claimWeight estimates what a resident head costs: the claim, its strings
// and the caches of its served form.
func claimWeight(c *Claim) int64 {
	n := 600 + len(c.ID) + len(c.Key) + 2*len(c.Value) + len(c.Note)
	for _, e := range c.Evidence {
		n += 64 + len(e.Ref)
	}
	for k, v := range c.Producer.Reported {
		n += 48 + len(k) + len(v)
	}
	n += 96 * len(c.Restrictions)
	return int64(n)
}

// head returns the current version, reading it from the store when it is
// not resident (and raising unreadable if it cannot).
func (r *claimRecord) head() *Claim {
	if c := r.hd.Load(); c != nil {
		if r.flags.Load()&flagReferenced == 0 {
			r.flags.Or(flagReferenced)
		}
		return c
	}
	return must(r.cache.load(r))
}

// Record flags.
const (
	flagReferenced uint32 = 1 << iota // read since the cache last passed it
	flagQueued                        // in the cache's queue
)

// load reads r's head from the store and makes it resident.
func (cc *claimCache) load(r *claimRecord) (*Claim, error) {
	cs, err := cc.read(r.meta.ID, r.meta.Head)
	if err != nil {
		return nil, err
	}
	c := cs[0]
	if !r.hd.CompareAndSwap(nil, c) {
		return r.hd.Load(), nil
	}
	cc.admit(r, c)
	return c, nil
}

// read decodes versions vs of claim id from the store, in one
// transaction. The view knows them committed: failing to read one back is
// a broken store (a damaged file), and nothing may be served as if the
// claim were empty. The error is KindInternal and names the claim and
// version, never a byte of what was stored.
func (cc *claimCache) read(id string, vs ...int) ([]*Claim, error) {
	out := make([]*Claim, len(vs))
	err := errors.New("no store")
	if cc != nil && cc.store != nil {
		err = cc.store.View(func(tx Tx) error {
			for i, v := range vs {
				raw, ok, err := tx.Get(bucketClaims, versionKey(id, v))
				if err != nil {
					// The store's errors name buckets and keys only.
					return fmt.Errorf("version %d: %w", v, err)
				}
				if !ok {
					return fmt.Errorf("version %d missing", v)
				}
				c := new(Claim)
				if fastjson.Unmarshal(raw, c) != nil {
					// The decoder's message may quote what it read.
					return fmt.Errorf("version %d does not decode as a claim", v)
				}
				internClaim(c, nil)
				c.ID = id
				out[i] = c
			}
			return nil
		})
	}
	if err != nil {
		return nil, &Error{Op: "read stored claim", Kind: KindInternal, Subject: id, Err: fmt.Errorf("stored claim unreadable: %w", err)}
	}
	return out, nil
}

// unreadable is the panic value of a stored claim the view cannot read
// back (see claimCache.read), raised by the accessors the rules call
// (head, version, versions) so that they need not return an error each.
// It never leaves the package: the core's request wrappers — readLocked
// and readSettled for reads, the journal's runJob for writes, the unlock
// — recover it (catchUnreadable) and return the error it carries, which is
// KindInternal. Any other panic goes on.
type unreadable struct{ err error }

// must returns c, or raises err as unreadable.
func must[T any](c T, err error) T {
	if err != nil {
		panic(unreadable{err})
	}
	return c
}

// guarded runs fn, returning an unreadable stored claim it meets as its
// error.
func guarded(fn func() error) (err error) {
	defer catchUnreadable(&err)
	return fn()
}

// catchUnreadable, deferred, turns an unreadable panic into *err.
func catchUnreadable(err *error) {
	if v := recover(); v != nil {
		u, ok := v.(unreadable)
		if !ok {
			panic(v)
		}
		*err = u.err
	}
}

// admit counts r's resident head c and evicts what the budget cannot hold.
func (cc *claimCache) admit(r *claimRecord, c *Claim) {
	if cc == nil {
		return
	}
	w := claimWeight(c)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.bytes += w
	if r.flags.Load()&flagQueued == 0 {
		r.flags.Or(flagQueued)
		cc.push(r)
	}
	cc.evict()
}

func (cc *claimCache) push(r *claimRecord) {
	if cc.n == len(cc.queue) {
		q := make([]*claimRecord, max(64, 2*len(cc.queue)))
		for i := range cc.n {
			q[i] = cc.queue[(cc.start+i)%len(cc.queue)]
		}
		cc.queue, cc.start = q, 0
	}
	cc.queue[(cc.start+cc.n)%len(cc.queue)] = r
	cc.n++
}

func (cc *claimCache) pop() *claimRecord {
	r := cc.queue[cc.start]
	cc.queue[cc.start] = nil
	cc.start = (cc.start + 1) % len(cc.queue)
	cc.n--
	return r
}

// evict drops resident heads, oldest first, until the budget holds them,
// giving a second chance to those read since the last pass and keeping
// those whose group is not yet durable (with cc.mu held).
func (cc *claimCache) evict() {
	durable := cc.durable.Load()
	for tries := cc.n * 2; cc.bytes > cc.budget && cc.n > 0 && tries > 0; tries-- {
		r := cc.pop()
		c := r.hd.Load()
		if c == nil {
			r.flags.And(^flagQueued)
			continue
		}
		if r.group > durable || r.flags.Load()&flagReferenced != 0 {
			r.flags.And(^flagReferenced)
			cc.push(r)
			continue
		}
		r.flags.And(^flagQueued)
		r.hd.Store(nil)
		r.older.Store(nil)
		r.served.Store(nil)
		r.field.Store(nil)
		cc.bytes -= claimWeight(c)
	}
	if cc.n > 0 && cc.n < len(cc.queue)/4 && len(cc.queue) > 1024 {
		q := make([]*claimRecord, len(cc.queue)/2)
		for i := range cc.n {
			q[i] = cc.queue[(cc.start+i)%len(cc.queue)]
		}
		cc.queue, cc.start = q, 0
	}
}

// version returns version v (1-based) of r: the head, a version the
// record still carries, or one read from the store.
func (r *claimRecord) version(v int) *Claim {
	if v == r.meta.Head {
		return r.head()
	}
	if c := r.carries(v); c != nil {
		return c
	}
	return must(r.cache.read(r.meta.ID, v))[0]
}

// carries returns version v if r still carries it (see older), else nil.
func (r *claimRecord) carries(v int) *Claim {
	if older := r.older.Load(); older != nil {
		for _, c := range *older {
			if c.Version == v {
				return c
			}
		}
	}
	return nil
}

// versions returns every version of r, oldest first, reading those it
// does not hold from the store in one transaction.
func (r *claimRecord) versions() []*Claim {
	out := make([]*Claim, r.meta.Head)
	var missing []int
	for v := 1; v < r.meta.Head; v++ {
		if out[v-1] = r.carries(v); out[v-1] == nil {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		for i, c := range must(r.cache.read(r.meta.ID, missing...)) {
			out[missing[i]-1] = c
		}
	}
	out[r.meta.Head-1] = r.head()
	return out
}

// newRecord makes the record of a claim whose meta is m (its index fields
// filled from head), whose head is head and whose versions before it the
// store may not have yet are older (in any order). setClaim publishes it;
// the caller stores the record's meta.
func (st *state) newRecord(m claimMeta, head *Claim, older []*Claim) *claimRecord {
	r := &claimRecord{meta: m, cache: st.cache}
	r.fill(head)
	r.hd.Store(head)
	if len(older) > 0 {
		r.older.Store(&older)
	}
	return r
}

// withMeta returns a copy of r with meta m, sharing its versions (with mu
// held for writing, in the journal).
func (r *claimRecord) withMeta(m claimMeta) *claimRecord {
	nr := &claimRecord{meta: m, cache: r.cache}
	if c := r.hd.Load(); c != nil { // a head not resident is in the store
		nr.hd.Store(c)
	}
	nr.older.Store(r.older.Load())
	return nr
}

// fill copies into r's meta what the indexes read of head.
func (r *claimRecord) fill(head *Claim) {
	r.meta.Key, r.meta.Subject, r.meta.Tier, r.meta.Kind = head.Key, head.Subject, head.Sensitivity, head.Kind
	r.meta.HeadRev = head.Revision
}

// carried returns what a record replacing r must carry of r's versions:
// those written by the group being applied, which the store does not have
// yet (with mu held for writing, in the journal).
func (st *state) carried(r *claimRecord) []*Claim {
	if r.group != st.applied+1 {
		return nil // r and what it carries are committed
	}
	var out []*Claim
	if older := r.older.Load(); older != nil {
		out = append(out, *older...)
	}
	return append(out, r.head())
}
