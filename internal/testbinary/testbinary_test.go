package testbinary

import (
	"os/exec"
	"testing"
)

// This program is a test binary, and testing.Testing agrees.
func TestRunning(t *testing.T) {
	if !Running() {
		t.Error("Running() = false in a test binary")
	}
	if !testing.Testing() {
		t.Error("testing.Testing() = false: the check below means nothing")
	}
}

// The main package paths of the binaries go build links are not test
// binaries'.
func TestIsTestPath(t *testing.T) {
	for path, want := range map[string]bool{
		"github.com/phc-project/phc/internal/vault.test": true,
		"github.com/phc-project/phc/cmd/phc.test":        true,
		"github.com/phc-project/phc/cmd/phc":             false,
		"command-line-arguments":                         false,
		".test":                                          false,
		"":                                               false,
		"github.com/phc-project/phc/cmd/phc.tester": false,
	} {
		if got := isTestPath(path); got != want {
			t.Errorf("isTestPath(%q) = %v; want %v", path, got, want)
		}
	}
}

// In a program go build links, Running is false and both test-cost knobs
// panic.
func TestKnobsRefuseOutsideTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	out, err := exec.Command("go", "run", "./testdata/knobs").CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./testdata/knobs: %v\n%s", err, out)
	}
	want := "Running: false\n" +
		"UseTestKDF: vault: UseTestKDF called outside a test binary\n" +
		"UseTestHashCost: identity: UseTestHashCost called outside a test binary\n"
	if string(out) != want {
		t.Errorf("knobs printed\n%s\nwant\n%s", out, want)
	}
}
