package custodian

import "testing"

// TestPatternWithinIsCoverage checks patternWithin against its meaning,
// exhaustively over small patterns and keys: p is within have exactly when
// every key p covers, one of have covers too.
func TestPatternWithinIsCoverage(t *testing.T) {
	// Patterns name keys of up to three segments; the keys go one deeper,
	// so that every pattern covers some key, and have a sibling no pattern
	// names at each level ("z": there are always more keys).
	keys := []string{"z"}
	patterns := []string{"*"}
	for _, a := range []string{"a", "b"} {
		keys = append(keys, a, a+".z")
		patterns = append(patterns, a, a+".*")
		for _, b := range []string{"a", "b"} {
			keys = append(keys, a+"."+b, a+"."+b+".z")
			patterns = append(patterns, a+"."+b, a+"."+b+".*")
			for _, c := range []string{"a", "b"} {
				keys = append(keys, a+"."+b+"."+c, a+"."+b+"."+c+".a")
				patterns = append(patterns, a+"."+b+"."+c, a+"."+b+"."+c+".*")
			}
		}
	}
	for _, p := range patterns {
		for _, q := range patterns {
			for _, r := range []string{"", "a.b", "b.*"} {
				have := []string{q}
				if r != "" {
					have = append(have, r)
				}
				want := true
				for _, k := range keys {
					if coversKey(p, k) && !matchAny(have, k) {
						want = false
						break
					}
				}
				if got := patternWithin(p, have); got != want {
					t.Errorf("patternWithin(%q, %q) = %v; want %v", p, have, got, want)
				}
			}
		}
	}
}
