package custodian_test

import (
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestLoadGCMustLoad: a Config.LoadGC that skips the load (or runs it
// twice) fails the unlock, rather than commit an empty view over the
// store's; one that runs it once unlocks as usual.
func TestLoadGCMustLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(load func() error) error
		ok   bool
	}{
		{"skips", func(func() error) error { return nil }, false},
		{"twice", func(load func() error) error { _ = load(); return load() }, false},
		{"once", func(load func() error) error { return load() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newLockedTestService(t, func(c *custodian.Config) { c.LoadGC = tc.hold })
			_, err := ts.Unlock(t.Context(), []byte(testPassword), ts.secretKey)
			if (err == nil) != tc.ok {
				t.Fatalf("Unlock with a LoadGC that %s the load = %v; want ok %v", tc.name, err, tc.ok)
			}
		})
	}
}
