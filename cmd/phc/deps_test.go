package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The phc binary does not link package testing: its test knobs check for a
// test binary with package testbinary, and the conformance suite's go test
// driver lives in conformance/conformancetest.
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if p == "testing" {
			t.Error("the phc binary links package testing; go list -deps shows who imports it: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/phc")
		}
	}
}
