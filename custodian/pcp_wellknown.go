package custodian

import "github.com/phc-project/phc/custodian/internal/model"

// tierRoots are the keys whose subtrees default to a tier above standard:
// the well-known keys of such a tier, and their synonyms.
var tierRoots = func() []struct{ root, tier string } {
	var out []struct{ root, tier string }
	for _, k := range WellKnownKeys {
		if model.TierRank[k.Tier] <= model.TierRank[SensitivityStandard] {
			continue
		}
		for _, root := range append([]string{k.Key}, k.Synonyms...) {
			out = append(out, struct{ root, tier string }{root, k.Tier})
		}
	}
	return out
}()
