package custodian_test

import (
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestWellKnownKeys: every key and synonym is a valid key of a known tier,
// named once.
func TestWellKnownKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range custodian.WellKnownKeys {
		for _, key := range append([]string{k.Key}, k.Synonyms...) {
			if !custodian.ValidKey(key) || seen[key] {
				t.Errorf("well-known key %q: invalid or named twice", key)
			}
			seen[key] = true
		}
		switch k.Tier {
		case custodian.SensitivityPublic, custodian.SensitivityStandard, custodian.SensitivitySensitive, custodian.SensitivityCritical:
		default:
			t.Errorf("well-known key %q: tier %q", k.Key, k.Tier)
		}
	}
}
