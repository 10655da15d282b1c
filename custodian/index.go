package custodian

import (
	"slices"
	"strings"

	"github.com/phc-project/phc/custodian/internal/engine"
)

// claimIndex orders claim records by key, then id (recordLess): the
// active claims in all, per persona and per tier, kept current by setClaim
// (O(log n) per change), so that a read walks only the keys it can select.
// Callers hold st.mu: the index needs no lock of its own.
type claimIndex = engine.Index[*claimRecord]

func newClaimIndex() *claimIndex { return engine.NewIndex(recordLess) }

// recordCmp orders records by key, then id; recordLess is its less-than.
func recordCmp(a, b *claimRecord) int {
	if c := strings.Compare(a.meta.Key, b.meta.Key); c != 0 {
		return c
	}
	return strings.Compare(a.meta.ID, b.meta.ID)
}

func recordLess(a, b *claimRecord) bool { return recordCmp(a, b) < 0 }

// pivot is a record that sorts before every record with key k.
func pivot(k string) *claimRecord {
	return &claimRecord{meta: claimMeta{Key: k}}
}

// ascendRange calls fn, in order, for the records of t from lo (included)
// to hi (excluded) until fn returns false.
func ascendRange(t *claimIndex, lo, hi *claimRecord, fn func(*claimRecord) bool) {
	t.AscendFrom(lo, func(r *claimRecord) bool { return recordLess(r, hi) && fn(r) })
}

// scanPattern calls fn, in order, for the records of t whose key matches
// pattern (see matchKey), until fn returns false.
func scanPattern(t *claimIndex, pattern string, fn func(*claimRecord) bool) {
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

// intersectPatterns returns a pattern matching exactly the keys both a and
// b match, if one of them covers the other, and false when none can match
// both. (Two patterns always nest or are disjoint.)
func intersectPatterns(a, b string) (string, bool) {
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
		return a, matchKey(b, a)
	case !bPrefix:
		return b, matchKey(a, b)
	case pa == pb || strings.HasPrefix(pa, pb+"."):
		return a, true
	case strings.HasPrefix(pb, pa+"."):
		return b, true
	}
	return "", false
}

// indexClaim adds r to the indexes if it is active; unindexClaim removes
// it. Callers hold mu for writing.
func (st *State) indexClaim(r *claimRecord) {
	if r.meta.Status != StatusActive {
		return
	}
	if _, dup := st.active.ReplaceOrInsert(r); !dup {
		st.categories[category(r.meta.Key)]++
	}
	key := r.meta.Key
	if best := betterField(st.fieldOf[key], r); best != nil {
		st.fieldOf[key] = best
	}
	for _, p := range r.meta.Personas {
		indexUnder(st.byPersona, p).ReplaceOrInsert(r)
	}
	indexUnder(st.byTier, r.meta.Tier).ReplaceOrInsert(r)
	st.indexSubject(r)
}

// indexUnder returns the index m holds under k, making it if needed.
func indexUnder(m map[string]*claimIndex, k string) *claimIndex {
	t := m[k]
	if t == nil {
		t = newClaimIndex()
		m[k] = t
	}
	return t
}

func (st *State) unindexClaim(r *claimRecord) {
	if r.meta.Status != StatusActive {
		return
	}
	if _, ok := st.active.Delete(r); ok {
		cat := category(r.meta.Key)
		if st.categories[cat]--; st.categories[cat] <= 0 {
			delete(st.categories, cat)
		}
	}
	if key := r.meta.Key; st.fieldOf[key] == r {
		// The field falls to the best of the key's other claims, if any.
		var best *claimRecord
		scanPattern(st.active, key, func(x *claimRecord) bool {
			best = betterField(best, x)
			return true
		})
		if best == nil {
			delete(st.fieldOf, key)
		} else {
			st.fieldOf[key] = best
		}
	}
	for _, p := range r.meta.Personas {
		if t := st.byPersona[p]; t != nil {
			t.Delete(r)
			if t.Len() == 0 {
				delete(st.byPersona, p)
			}
		}
	}
	if t := st.byTier[r.meta.Tier]; t != nil {
		t.Delete(r)
	}
	delete(st.bySubject[r.meta.Subject], r.meta.ID)
}

// candidates returns, sorted by key then id and without repeats, the
// active records a consumer read could disclose: those inside the token's
// scope that one of grants selects (grants for purpose only, unless
// purpose is empty), or whose tier the owner's auto_grant covers (when
// withAuto). It is a superset of what the read may return, found through
// the indexes: its cost follows what the grants select, not the vault.
// Callers hold mu and check every candidate.
func (st *state) candidates(p Principal, grants []*Grant, purpose string, withAuto bool) []*claimRecord {
	if p.token == nil {
		return nil
	}
	scope := scopePatterns(p.token.Scope)
	var out []*claimRecord
	add := func(r *claimRecord) bool {
		out = append(out, r)
		return true
	}
	// scan adds t's records under pattern pat and the token's scope.
	scan := func(t *claimIndex, pat string) {
		for _, sp := range scope {
			if q, ok := intersectPatterns(pat, sp); ok {
				scanPattern(t, q, add)
			}
		}
	}
	if withAuto {
		for _, tier := range []string{SensitivityPublic, SensitivityStandard} {
			if st.settings.AutoGranted(tier) {
				scan(st.byTier[tier], "*")
			}
		}
	}
	for _, g := range grants {
		if g.Purpose != purpose {
			continue
		}
		sel := g.Selectors
		keys := scopePatterns(sel.Keys)
		if len(keys) == 0 {
			keys = []string{"*"}
		}
		switch {
		case len(sel.Claims) > 0:
			for _, id := range sel.Claims {
				if r := st.claims[id]; r != nil && r.meta.Status == StatusActive {
					out = append(out, r)
				}
			}
		case len(sel.Personas) > 0:
			for _, per := range sel.Personas {
				for _, k := range keys {
					scan(st.byPersona[per], k)
				}
			}
		case len(sel.Keys) > 0:
			for _, k := range keys {
				scan(st.active, k)
			}
		}
	}
	slices.SortFunc(out, recordCmp)
	return slices.Compact(out)
}

// category is the first segment of key.
func category(key string) string {
	cat, _, _ := strings.Cut(key, ".")
	return cat
}
