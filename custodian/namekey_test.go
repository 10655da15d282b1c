package custodian

import "testing"

func TestNameKey(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"tutor", "Tutor", true},
		{"tutor", "TUTOR", true},
		{"tutor", "tut0r", true},
		{"mail", "maiI", true},
		{"mail", "ma1l", true},
		{"assist", "a55ist", true},
		{"modern", "rnodern", true},
		{"my-app", "my_app", true},
		{"my-app", "my.app", true},
		{"wave", "vvave", true},
		{"tutor", "tutors", false},
		{"app-6", "app-8", false},
		{"reader-1", "reader-2", false},
		{"diary", "dairy", false},
	}
	for _, tt := range tests {
		if got := nameKey(tt.a) == nameKey(tt.b); got != tt.same {
			t.Errorf("nameKey(%q) == nameKey(%q) is %v (%q, %q); want %v", tt.a, tt.b, got, nameKey(tt.a), nameKey(tt.b), tt.same)
		}
	}
	for _, n := range []string{"self", "Se1f", "OWNER", "0wner", "user", "custodian", "phc", "PHC", "auto_grant", "auto-grant", "anonymous"} {
		if !reservedName(n) {
			t.Errorf("reservedName(%q) = false; want true", n)
		}
	}
	for _, n := range []string{"tutor", "selfie", "owners", "phc-app"} {
		if reservedName(n) {
			t.Errorf("reservedName(%q) = true; want false", n)
		}
	}
}
