package custodian

import "github.com/phc-project/phc/internal/pcp"

// WellKnownKey is a key whose meaning phc knows (see pcp.WellKnownKey).
type WellKnownKey = pcp.WellKnownKey

// WellKnownKeys is the one table of well-known keys and their default
// tiers (pcp.WellKnownKeys). A key not at or below any of them defaults to
// standard. The owner overrides the tier of any field.
var WellKnownKeys = pcp.WellKnownKeys

// tierRoots are the keys whose subtrees default to a tier above standard:
// the well-known keys of such a tier, and their synonyms.
var tierRoots = func() []struct{ root, tier string } {
	var out []struct{ root, tier string }
	for _, k := range WellKnownKeys {
		if tierRank[k.Tier] <= tierRank[SensitivityStandard] {
			continue
		}
		for _, root := range append([]string{k.Key}, k.Synonyms...) {
			out = append(out, struct{ root, tier string }{root, k.Tier})
		}
	}
	return out
}()

// Hint is a warning on a field write (see pcp.Hint).
type Hint = pcp.Hint

// FieldHints returns the hints for a write to field id (pcp.FieldHints). It
// depends on id alone, never on what the vault holds, so it discloses
// nothing.
func FieldHints(id string) []Hint { return pcp.FieldHints(id) }
