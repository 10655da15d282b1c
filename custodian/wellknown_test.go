package custodian_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

func TestFieldHints(t *testing.T) {
	for _, c := range []struct {
		id   string
		want []custodian.Hint
	}{
		{"identity.fullname", []custodian.Hint{{Suggest: "identity.full_name", Reason: "synonym"}}},
		{"identity.birthday", []custodian.Hint{{Suggest: "identity.dob", Reason: "synonym"}}},
		{"identity.date_of_birth", []custodian.Hint{{Suggest: "identity.dob", Reason: "synonym"}}},
		{"identity.full-name", []custodian.Hint{{Suggest: "identity.full_name", Reason: "near_miss"}}},
		{"identity.fulname", []custodian.Hint{{Suggest: "identity.full_name", Reason: "near_miss"}}},
		{"adresses.current", []custodian.Hint{{Suggest: "addresses.current", Reason: "near_miss"}}},
		{"preferences.timezon", []custodian.Hint{{Suggest: "preferences.timezone", Reason: "near_miss"}}},
		// A well-known key, one below it, and keys that resemble none.
		{"identity.full_name", nil},
		{"identity.full_name.first", nil},
		{"addresses.current.city", nil},
		{"identity.job", nil}, // dob is too short to guess at
		{"identity.fn", nil},  // too far
		{"identity", nil},     // no category
		{"learning.spanish", nil},
		{"identity.full_name_of_partner", nil},
	} {
		if got := custodian.FieldHints(c.id); !cmp.Equal(got, c.want) {
			t.Errorf("FieldHints(%q) = %v; want %v", c.id, got, c.want)
		}
	}
}

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
