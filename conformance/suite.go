package conformance

import (
	"embed"
	"io/fs"
	"testing"
)

//go:embed testdata/*.json
var suiteFiles embed.FS

// Suite returns the cases shipped with this package (conformance/testdata).
func Suite() ([]Group, error) {
	sub, err := fs.Sub(suiteFiles, "testdata")
	if err != nil {
		return nil, err
	}
	return Load(sub)
}

// RunT runs the suite (cfg.Groups, or [Suite]) against target with each
// case as a subtest named by its id: a failure fails the subtest, a skip
// skips it with its reason. A run that cannot start fails t at once.
func RunT(t *testing.T, target Target, cfg Config) *Report {
	t.Helper()
	groups := cfg.Groups
	if groups == nil {
		var err error
		if groups, err = Suite(); err != nil {
			t.Fatalf("load the suite: %v", err)
		}
	}
	if cfg.Log == nil {
		cfg.Log = t.Logf
	}
	r, err := newRunner(t.Context(), target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.order(groups) {
		t.Run(c.ID, func(t *testing.T) {
			res := r.runCase(t.Context(), c)
			r.report.Results = append(r.report.Results, res)
			switch res.Outcome {
			case Fail:
				t.Errorf("%s: %s", c.Title, res.Detail)
			case Skip:
				t.Skip(res.Detail)
			case XFail:
				t.Skip("XFAIL " + res.Detail)
			}
		})
	}
	for _, n := range r.report.Notes {
		t.Errorf("run: %s", n)
	}
	return r.report
}
