// Package conformancetest runs the conformance suite inside go test: each
// case is a subtest. It is the only part of the suite that imports package
// testing, so that the phc binary, which runs the suite from phc
// conformance, does not link it.
package conformancetest

import (
	"testing"

	"github.com/phc-project/phc/conformance"
)

// RunT runs the suite (cfg.Groups, or [conformance.Suite]) against target
// with each case as a subtest named by its id: a failure fails the
// subtest, a skip skips it with its reason. A run that cannot start fails
// t at once.
func RunT(t *testing.T, target conformance.Target, cfg conformance.Config) *conformance.Report {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = t.Logf
	}
	s, err := conformance.Start(t.Context(), target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cases() {
		t.Run(c.ID, func(t *testing.T) {
			res := s.RunCase(t.Context(), c)
			switch res.Outcome {
			case conformance.Fail:
				t.Errorf("%s: %s", c.Title, res.Detail)
			case conformance.Skip:
				t.Skip(res.Detail)
			case conformance.XFail:
				t.Skip("XFAIL " + res.Detail)
			}
		})
	}
	for _, n := range s.Report().Notes {
		t.Errorf("run: %s", n)
	}
	return s.Report()
}
