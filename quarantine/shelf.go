package quarantine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

// Buckets of a vault's store that hold its held records.
const (
	BucketHeld   = "quarantine"        // qrn_… → the record's description (a Held without body)
	BucketBodies = "quarantine_bodies" // qrn_… → the record as imported, read when it is adopted
)

// Writer is a vault's write in progress: what it puts in and deletes from
// its store (its journal's batch).
type Writer interface {
	Put(bucket, key string, v any)
	Del(bucket, key string)
}

// Reader reads a vault's store.
type Reader interface {
	Get(bucket, key string) (value []byte, ok bool, err error)
}

// Put holds record h (with the vault's write lock held): x indexes it,
// w stores its description and, apart, its body. It returns the
// description, which is what a page of held records shows of it.
func Put(x *Index, w Writer, h *Held) *Held {
	desc := *h
	desc.Body, desc.Value, desc.Here = nil, nil, nil
	x.Hold(&desc)
	w.Put(BucketHeld, h.ID, &desc)
	w.Put(BucketBodies, h.ID, h.Body)
	return &desc
}

// Hold holds records held, each under a new id (qrn_…), from import from
// (a bundle's, an archive's or an import's id) and source, at time now
// and at the revision next gives (with the vault's write lock held). It
// returns the revision. Every id is made first: nothing fails once x
// changes.
func Hold(x *Index, w Writer, held []*Held, from, source string, now time.Time, next func() uint64) (uint64, error) {
	for _, h := range held {
		var err error
		if h.ID, err = identity.NewID("qrn_"); err != nil {
			return 0, err
		}
	}
	rev := next()
	// In the index's order (by id within the revision), each record goes
	// at its end: held in any other order, a million records of one
	// archive would each move those before them.
	for _, h := range slices.SortedFunc(slices.Values(held), func(a, b *Held) int { return strings.Compare(a.ID, b.ID) }) {
		h.BundleID, h.Source, h.ImportedAt, h.Revision = from, source, now, rev
		Put(x, w, h)
	}
	return rev, nil
}

// Drop releases held record id, adopted or rejected (with the vault's
// write lock held): from x and from the store.
func Drop(x *Index, w Writer, id string) {
	x.Release(id)
	w.Del(BucketHeld, id)
	w.Del(BucketBodies, id)
}

// ErrNotHeld refuses to reject or adopt a record that is not held.
var ErrNotHeld = errors.New("quarantine: no such held record")

// Reject releases held records ids, or every one with all, in one write
// (with the vault's write lock held), and returns the ids released, sorted
// for all. Nothing is released if one of ids is not held ([ErrNotHeld]).
func Reject(x *Index, w Writer, ids []string, all bool) ([]string, error) {
	if all {
		ids = x.IDs()
	}
	for _, id := range ids {
		if _, ok := x.Get(id); !ok {
			return nil, ErrNotHeld
		}
	}
	for _, id := range ids {
		Drop(x, w, id)
	}
	return ids, nil
}

// Copy is a held record as read from the store: its description, its
// body (when asked for) and the revision the description is at.
type Copy struct {
	Revision uint64
	Held     *Held
	Body     json.RawMessage
}

// Read reads held records ids from the store r, with bodies their bodies
// too. A record released meanwhile is left out; one whose description is
// newer than the index the caller read is read as it is, and the write
// that uses it tells by its revision.
func Read(r Reader, ids []string, bodies bool) (map[string]Copy, error) {
	copies := make(map[string]Copy, len(ids))
	for _, id := range ids {
		raw, ok, err := r.Get(BucketHeld, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // released meanwhile
		}
		c := Copy{Held: new(Held)}
		if err := json.Unmarshal(raw, c.Held); err != nil {
			return nil, fmt.Errorf("held record %s: %w", id, err)
		}
		// A record held before the bodies had a bucket has its body in its
		// description.
		c.Revision, c.Body, c.Held.Body = c.Held.Revision, c.Held.Body, nil
		if bodies && c.Body == nil {
			if c.Body, ok, err = r.Get(BucketBodies, id); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
		}
		copies[id] = c
	}
	return copies, nil
}

// Vault is what an adopt needs of the vault that holds the records.
type Vault interface {
	// Index runs fn on the vault's index (owner only), and returns once
	// what fn saw is durable, so that the store holds it.
	Index(fn func(x *Index) error) error
	// View runs fn on the vault's store.
	View(fn func(r Reader) error) error
}

// Adopt adopts held records in the vault v: ids, or with all every record
// not blocked ([Index.Adoptable]: personas and entities before the claims
// that may need them, summaries after the claims they derive from), at
// most chunk records a write. For each chunk it reads the records from the
// store once the index says they are durable, and hands them to adopt,
// which runs one write of the vault's: there it checks that each record
// is still held at the revision read (a record left out of copies was
// released meanwhile) and adopts them into claims, by the vault's rules.
// The records ids names go in one chunk: adopted together or not at all.
func Adopt(v Vault, ids []string, all bool, chunk int, adopt func(ids []string, copies map[string]Copy) error) error {
	err := v.Index(func(x *Index) error {
		if all {
			ids = x.Adoptable()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !all || chunk < 1 {
		chunk = max(1, len(ids))
	}
	for len(ids) > 0 {
		part := ids[:min(chunk, len(ids))]
		ids = ids[len(part):]
		var copies map[string]Copy
		if err := v.View(func(r Reader) (err error) {
			copies, err = Read(r, part, true)
			return err
		}); err != nil {
			return err
		}
		if err := adopt(part, copies); err != nil {
			return err
		}
	}
	return nil
}
