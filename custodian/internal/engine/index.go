package engine

import (
	"strings"

	"github.com/tidwall/btree"

	"github.com/phc-project/phc/custodian/internal/model"
)

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

// ClaimIndex orders claim records by key, then id (recordLess): the
// active claims in all, per persona and per tier, kept current by SetClaim
// (O(log n) per change), so that a read walks only the keys it can select.
// Callers hold st.mu: the index needs no lock of its own.
type ClaimIndex = Index[*ClaimRecord]

func newClaimIndex() *ClaimIndex { return NewIndex(recordLess) }

// RecordCmp orders records by key, then id; recordLess is its less-than.
func RecordCmp(a, b *ClaimRecord) int {
	if c := strings.Compare(a.Meta.Key, b.Meta.Key); c != 0 {
		return c
	}
	return strings.Compare(a.Meta.ID, b.Meta.ID)
}

func recordLess(a, b *ClaimRecord) bool { return RecordCmp(a, b) < 0 }

// pivot is a record that sorts before every record with key k.
func pivot(k string) *ClaimRecord {
	return &ClaimRecord{Meta: ClaimMeta{Key: k}}
}

// ascendRange calls fn, in order, for the records of t from lo (included)
// to hi (excluded) until fn returns false.
func ascendRange(t *ClaimIndex, lo, hi *ClaimRecord, fn func(*ClaimRecord) bool) {
	t.AscendFrom(lo, func(r *ClaimRecord) bool { return recordLess(r, hi) && fn(r) })
}

// ScanPattern calls fn, in order, for the records of t whose key matches
// pattern (see matchKey), until fn returns false.
func ScanPattern(t *ClaimIndex, pattern string, fn func(*ClaimRecord) bool) {
	if t == nil {
		return
	}
	switch prefix, ok := strings.CutSuffix(pattern, "*"); {
	case pattern == "*":
		t.Ascend(fn)
	case ok:
		// prefix ends with a dot; '/' is the byte after '.'.
		ascendRange(t, pivot(prefix), pivot(prefix[:len(prefix)-1]+"/"), fn)
	default:
		ascendRange(t, pivot(pattern), pivot(pattern+"\x00"), fn)
	}
}

// IntersectPatterns returns a pattern matching exactly the keys both a and
// b match, if one of them covers the other, and false when none can match
// both. (Two patterns always nest or are disjoint.)
func IntersectPatterns(a, b string) (string, bool) {
	switch {
	case a == "*":
		return b, true
	case b == "*":
		return a, true
	}
	pa, aPrefix := strings.CutSuffix(a, ".*")
	pb, bPrefix := strings.CutSuffix(b, ".*")
	switch {
	case !aPrefix:
		return a, MatchKey(b, a)
	case !bPrefix:
		return b, MatchKey(a, b)
	case pa == pb || strings.HasPrefix(pa, pb+"."):
		return a, true
	case strings.HasPrefix(pb, pa+"."):
		return b, true
	}
	return "", false
}

// indexClaim adds r to the indexes if it is active; unindexClaim removes
// it. Callers hold mu for writing.
func (st *State) indexClaim(r *ClaimRecord) {
	if r.Meta.Status != model.StatusActive {
		return
	}
	if _, dup := st.Active.ReplaceOrInsert(r); !dup {
		st.Categories[category(r.Meta.Key)]++
	}
	key := r.Meta.Key
	if best := betterField(st.FieldOf[key], r); best != nil {
		st.FieldOf[key] = best
	}
	for _, p := range r.Meta.Personas {
		indexUnder(st.ByPersona, p).ReplaceOrInsert(r)
	}
	indexUnder(st.ByTier, r.Meta.Tier).ReplaceOrInsert(r)
	st.indexSubject(r)
}

// indexUnder returns the index m holds under k, making it if needed.
func indexUnder(m map[string]*ClaimIndex, k string) *ClaimIndex {
	t := m[k]
	if t == nil {
		t = newClaimIndex()
		m[k] = t
	}
	return t
}

func (st *State) unindexClaim(r *ClaimRecord) {
	if r.Meta.Status != model.StatusActive {
		return
	}
	if _, ok := st.Active.Delete(r); ok {
		cat := category(r.Meta.Key)
		if st.Categories[cat]--; st.Categories[cat] <= 0 {
			delete(st.Categories, cat)
		}
	}
	if key := r.Meta.Key; st.FieldOf[key] == r {
		// The field falls to the best of the key's other claims, if any.
		var best *ClaimRecord
		ScanPattern(st.Active, key, func(x *ClaimRecord) bool {
			best = betterField(best, x)
			return true
		})
		if best == nil {
			delete(st.FieldOf, key)
		} else {
			st.FieldOf[key] = best
		}
	}
	for _, p := range r.Meta.Personas {
		if t := st.ByPersona[p]; t != nil {
			t.Delete(r)
			if t.Len() == 0 {
				delete(st.ByPersona, p)
			}
		}
	}
	if t := st.ByTier[r.Meta.Tier]; t != nil {
		t.Delete(r)
	}
	delete(st.BySubject[r.Meta.Subject], r.Meta.ID)
}

// category is the first segment of key.
func category(key string) string {
	cat, _, _ := strings.Cut(key, ".")
	return cat
}

// MatchKey reports whether key matches pattern: "*" matches every key, a
// pattern ending in ".*" matches every key below that prefix (at any
// depth), any other pattern matches only the identical key.
func MatchKey(pattern, key string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, ".*"):
		prefix := pattern[:len(pattern)-1] // keeps the dot
		return len(key) > len(prefix) && strings.HasPrefix(key, prefix)
	}
	return pattern == key
}

// betterField returns whichever of best and r is the field of their key:
// about the owner, written last. best may be nil; so may the result.
func betterField(best, r *ClaimRecord) *ClaimRecord {
	if r.Meta.Subject == model.SubjectSelf && (best == nil || r.Meta.HeadRev > best.Meta.HeadRev) {
		return r
	}
	return best
}
