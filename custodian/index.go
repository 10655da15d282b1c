package custodian

import (
	"slices"

	"github.com/phc-project/phc/custodian/internal/engine"
)

// candidates returns, sorted by key then id and without repeats, the
// active records a consumer read could disclose: those inside the token's
// scope that one of grants selects (grants for purpose only, unless
// purpose is empty), or whose tier the owner's auto_grant covers (when
// withAuto). It is a superset of what the read may return, found through
// the indexes: its cost follows what the grants select, not the vault.
// Callers hold mu and check every candidate.
func (st *state) candidates(p Principal, grants []*Grant, purpose string, withAuto bool) []*claimRecord {
	if p.Token() == nil {
		return nil
	}
	scope := scopePatterns(p.Token().Scope)
	var out []*claimRecord
	add := func(r *claimRecord) bool {
		out = append(out, r)
		return true
	}
	// scan adds t's records under pattern pat and the token's scope.
	scan := func(t *claimIndex, pat string) {
		for _, sp := range scope {
			if q, ok := engine.IntersectPatterns(pat, sp); ok {
				engine.ScanPattern(t, q, add)
			}
		}
	}
	if withAuto {
		for _, tier := range []string{SensitivityPublic, SensitivityStandard} {
			if st.Settings.AutoGranted(tier) {
				scan(st.ByTier[tier], "*")
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
				if r := st.Claims[id]; r != nil && r.Meta.Status == StatusActive {
					out = append(out, r)
				}
			}
		case len(sel.Personas) > 0:
			for _, per := range sel.Personas {
				for _, k := range keys {
					scan(st.ByPersona[per], k)
				}
			}
		case len(sel.Keys) > 0:
			for _, k := range keys {
				scan(st.Active, k)
			}
		}
	}
	slices.SortFunc(out, engine.RecordCmp)
	return slices.Compact(out)
}
