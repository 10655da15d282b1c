package custodian

import "testing"

func TestScopeCovers(t *testing.T) {
	for _, tc := range []struct {
		token []string
		pat   string
		want  bool
	}{
		{[]string{"*"}, "*", true},
		{[]string{"*"}, "health.*", true},
		{[]string{"health.*"}, "*", false},
		{[]string{"health.*"}, "health.*", true},
		{[]string{"health.*"}, "health.allergies", true},
		{[]string{"health.*"}, "health", false}, // the field health itself is not below health
		{[]string{"health.*"}, "healthy.x", false},
		{[]string{"health"}, "health", true},
		{[]string{"health"}, "health.*", true},
		{[]string{"health.allergies"}, "health.*", false},
		{[]string{"health.allergies"}, "health.allergies.food", true},
		{[]string{"learning.*", "identity.full_name"}, "identity.full_name", true},
		{[]string{"learning.*", "identity.full_name"}, "identity.*", false},
	} {
		if got := scopeCovers(tc.token, tc.pat); got != tc.want {
			t.Errorf("scopeCovers(%q, %q) = %v; want %v", tc.token, tc.pat, got, tc.want)
		}
	}
}
