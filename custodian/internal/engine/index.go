package engine

import "github.com/tidwall/btree"

// Index is an ordered set of records, by the less-than it was made with:
// tidwall/btree's B-tree, whose Load appends records that come in order
// without searching for their place (the unlock builds the indexes from
// sorted records that way). It has no lock of its own: its owner guards
// it (the core's view lock).
type Index[R any] struct {
	t *btree.BTreeG[R]
}

// indexDegree is the B-trees' degree: wide nodes, few levels.
const indexDegree = 32

// NewIndex returns an empty index ordered by less.
func NewIndex[R any](less func(a, b R) bool) *Index[R] {
	return &Index[R]{btree.NewBTreeGOptions(less, btree.Options{Degree: indexDegree, NoLocks: true})}
}

// ReplaceOrInsert adds r, replacing the record it equals; it returns that
// record and whether there was one.
func (x *Index[R]) ReplaceOrInsert(r R) (R, bool) { return x.t.Set(r) }

// Load is ReplaceOrInsert for r that sorts after every record already in
// the index (it still works, more slowly, when it does not).
func (x *Index[R]) Load(r R) { x.t.Load(r) }

// Delete removes the record r equals.
func (x *Index[R]) Delete(r R) (R, bool) { return x.t.Delete(r) }

// Len is the number of records.
func (x *Index[R]) Len() int { return x.t.Len() }

// Ascend calls fn for every record in order until fn returns false.
func (x *Index[R]) Ascend(fn func(R) bool) { x.t.Scan(fn) }

// AscendFrom calls fn, in order, for the records from lo (included) until
// fn returns false. (A range's end is the caller's test, in fn: a test
// through the index's own less-than would make the compiler keep the
// bound on the heap.)
func (x *Index[R]) AscendFrom(lo R, fn func(R) bool) { x.t.Ascend(lo, fn) }
