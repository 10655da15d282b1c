package custodian_test

import (
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestLegacyLookalikes: a vault may hold names that collide from before
// they were refused. Those apps keep working; approving a pending one that
// looks like an approved app is refused, naming it.
func TestLegacyLookalikes(t *testing.T) {
	ts := newTestService(t)
	ts.mustConsumer("tutor")
	for _, c := range []struct{ name, status string }{{"Tutor", custodian.ConsumerApproved}, {"TUT0R", custodian.ConsumerPending}, {"self", custodian.ConsumerApproved}} {
		if err := ts.AddLegacyConsumer(ts.owner, c.name, secretOf(c.name), c.status); err != nil {
			t.Fatalf("AddLegacyConsumer(%s) = %v", c.name, err)
		}
	}
	tests := []struct {
		name string
		run  func() error
		want custodian.Kind // KindInternal: no error
	}{
		{"mint for the legacy lookalike", func() error { ts.mustToken("Tutor", "*", "read"); return nil }, custodian.KindInternal},
		{"mint for the legacy reserved name", func() error { ts.mustToken("self", "*", "read"); return nil }, custodian.KindInternal},
		{"mint for the first app", func() error { ts.mustToken("tutor", "*", "read"); return nil }, custodian.KindInternal},
		{"approve a pending lookalike", func() error {
			_, err := ts.ApproveConsumer(t.Context(), ts.owner, "TUT0R")
			return err
		}, custodian.KindConflict},
		{"remove the legacy reserved name", func() error {
			_, err := ts.DeleteConsumer(t.Context(), ts.owner, "self")
			return err
		}, custodian.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.want == custodian.KindInternal {
				if err != nil {
					t.Fatalf("%s = %v; want no error", tt.name, err)
				}
				return
			}
			wantKind(t, tt.name, err, tt.want)
		})
	}
}
