package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/phc-project/phc/custodian/internal/model"
)

// DefaultClaimCacheBytes is the claim cache's budget when custodian.Config leaves it
// zero: about 100,000 typical heads.
const DefaultClaimCacheBytes = 64 << 20

// claimCache holds resident heads within a byte budget.
type claimCache = Cache[model.Claim, *ClaimRecord]

func NewClaimCache(store Store, budget int64) *claimCache {
	if budget <= 0 {
		budget = DefaultClaimCacheBytes
	}
	read := func(id string, vs ...int) ([]*model.Claim, error) { return readClaim(store, id, vs...) }
	return NewCache[model.Claim, *ClaimRecord](budget, read, claimWeight, func(c *model.Claim) int { return c.Version })
}

// The claim record as the cache's entry (see Entry).
func (r *ClaimRecord) Res() *Resident[model.Claim] { return &r.Resident }

func (r *ClaimRecord) Ident() (string, int) { return r.Meta.ID, r.Meta.Head }

func (r *ClaimRecord) Evicted() {
	r.Served.Store(nil)
	r.Field.Store(nil)
}

// claimWeight estimates what a resident head costs: the claim, its strings
// and the caches of its served form.
func claimWeight(c *model.Claim) int64 {
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

// Head returns the current version, reading it from the store when it is
// not resident (and raising unreadable if it cannot).
func (r *ClaimRecord) Head() *model.Claim {
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
func readClaim(store Store, id string, vs ...int) ([]*model.Claim, error) {
	out := make([]*model.Claim, len(vs))
	err := errors.New("no store")
	if store != nil {
		// The decoder would give each claim's reported map room for 64
		// entries (kilobytes a claim, unseen by the cache's weights):
		// decodeValue decodes it into scratch and keeps a map of its size.
		scratch := map[string]string{}
		err = store.View(func(tx Tx) error {
			for i, v := range vs {
				raw, ok, err := tx.Get(BucketClaims, VersionKey(id, v))
				if err != nil {
					// The store's errors name buckets and keys only.
					return fmt.Errorf("version %d: %w", v, err)
				}
				if !ok {
					return fmt.Errorf("version %d missing", v)
				}
				c := new(model.Claim)
				if decodeValue(raw, c, scratch) != nil {
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
		return nil, &model.Error{Op: "read stored claim", Kind: model.KindInternal, Subject: id, Err: fmt.Errorf("stored claim unreadable: %w", err)}
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

// Guarded runs fn, returning an unreadable stored claim it meets as its
// error.
func Guarded(fn func() error) (err error) {
	defer CatchUnreadable(&err)
	return fn()
}

// CatchUnreadable, deferred, turns an unreadable panic into *err.
func CatchUnreadable(err *error) {
	if v := recover(); v != nil {
		u, ok := v.(unreadable)
		if !ok {
			panic(v)
		}
		*err = u.err
	}
}

// Version returns version v (1-based) of r: the head, a version the
// record still carries, or one read from the store.
func (r *ClaimRecord) Version(v int) *model.Claim { return must(r.cache.Version(r, v)) }

// Versions returns every version of r, oldest first, reading those it
// does not hold from the store in one transaction.
func (r *ClaimRecord) Versions() []*model.Claim { return must(r.cache.Versions(r)) }

// Scan returns every version of r as Versions does, without making its
// head resident: for reading every claim (see Cache.Scan). Its reader may
// not hold the view (an export past its cut), so a version it cannot read
// is an error, not a panic.
func (r *ClaimRecord) Scan() ([]*model.Claim, error) { return r.cache.Scan(r) }

// NewRecord makes the record of a claim whose meta is m (its index fields
// filled from head), whose head is head and whose versions before it the
// store may not have yet are older (in any order). SetClaim publishes it;
// the caller stores the record's meta.
func (st *State) NewRecord(m ClaimMeta, head *model.Claim, older []*model.Claim) *ClaimRecord {
	r := &ClaimRecord{Meta: m, cache: st.Cache}
	r.fill(head)
	// As a load does, so that a vault grown by writes holds no more than
	// one reloaded; not the personas, whose list the record replaced may
	// share, and which the metas snapshot reads without the lock.
	internScalars(&r.Meta)
	r.Hold(head, older)
	return r
}

// withMeta returns a copy of r with meta m, sharing its versions (with mu
// held for writing, in the journal).
func (r *ClaimRecord) withMeta(m ClaimMeta) *ClaimRecord {
	nr := &ClaimRecord{Meta: m, cache: r.cache}
	nr.Share(&r.Resident)
	return nr
}

// fill copies into r's meta what the indexes read of head.
func (r *ClaimRecord) fill(head *model.Claim) {
	r.Meta.Key, r.Meta.Subject, r.Meta.Tier, r.Meta.Kind = head.Key, head.Subject, head.Sensitivity, head.Kind
	r.Meta.HeadRev = head.Revision
}

// Carried returns what a record replacing r must carry of r's versions:
// those written by the group being applied, which the store does not have
// yet (with mu held for writing, in the journal).
func (st *State) Carried(r *ClaimRecord) []*model.Claim {
	if r.Group != st.Applied+1 {
		return nil // r and what it carries are committed
	}
	return append(slices.Clone(r.Older()), r.Head())
}
