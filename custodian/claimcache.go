package custodian

import (
	"errors"
	"fmt"
	"slices"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/engine"
)

// The claim cache is the engine's (see engine.Cache): the core gives it
// how to read a claim's versions from the store and what a head weighs.

// DefaultClaimCacheBytes is the claim cache's budget when Config leaves it
// zero: about 100,000 typical heads.
const DefaultClaimCacheBytes = 64 << 20

// claimCache holds resident heads within a byte budget.
type claimCache = engine.Cache[Claim, *claimRecord]

func newClaimCache(store Store, budget int64) *claimCache {
	if budget <= 0 {
		budget = DefaultClaimCacheBytes
	}
	read := func(id string, vs ...int) ([]*Claim, error) { return readClaim(store, id, vs...) }
	return engine.NewCache[Claim, *claimRecord](budget, read, claimWeight, func(c *Claim) int { return c.Version })
}

// The claim record as the cache's entry (see engine.Entry).
func (r *claimRecord) Res() *engine.Resident[Claim] { return &r.Resident }
func (r *claimRecord) Ident() (string, int)         { return r.meta.ID, r.meta.Head }
func (r *claimRecord) Evicted() {
	r.served.Store(nil)
	r.field.Store(nil)
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
	if c := r.Touch(); c != nil {
		return c
	}
	return must(r.cache.Head(r))
}

// readClaim decodes versions vs of claim id from store, in one
// transaction. The view knows them committed: failing to read one back is
// a broken store (a damaged file), and nothing may be served as if the
// claim were empty. The error is KindInternal and names the claim and
// version, never a byte of what was stored.
func readClaim(store Store, id string, vs ...int) ([]*Claim, error) {
	out := make([]*Claim, len(vs))
	err := errors.New("no store")
	if store != nil {
		err = store.View(func(tx Tx) error {
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

// version returns version v (1-based) of r: the head, a version the
// record still carries, or one read from the store.
func (r *claimRecord) version(v int) *Claim { return must(r.cache.Version(r, v)) }

// versions returns every version of r, oldest first, reading those it
// does not hold from the store in one transaction.
func (r *claimRecord) versions() []*Claim { return must(r.cache.Versions(r)) }

// newRecord makes the record of a claim whose meta is m (its index fields
// filled from head), whose head is head and whose versions before it the
// store may not have yet are older (in any order). setClaim publishes it;
// the caller stores the record's meta.
func (st *State) newRecord(m claimMeta, head *Claim, older []*Claim) *claimRecord {
	r := &claimRecord{meta: m, cache: st.cache}
	r.fill(head)
	r.Hold(head, older)
	return r
}

// withMeta returns a copy of r with meta m, sharing its versions (with mu
// held for writing, in the journal).
func (r *claimRecord) withMeta(m claimMeta) *claimRecord {
	nr := &claimRecord{meta: m, cache: r.cache}
	nr.Share(&r.Resident)
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
func (st *State) carried(r *claimRecord) []*Claim {
	if r.Group != st.applied+1 {
		return nil // r and what it carries are committed
	}
	return append(slices.Clone(r.Older()), r.head())
}
