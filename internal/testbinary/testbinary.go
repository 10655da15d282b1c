// Package testbinary tells whether the running program is a test binary,
// without linking package testing into the programs that ask.
//
// testing.Testing answers the same question, but importing package
// testing links it (and its flags) into the phc binary. The go command
// records the main package's path in the build information of every
// binary it links, and for a test binary that path is the tested
// package's path with ".test" appended ("…/internal/vault.test"). Like
// testing.Testing's answer, it is fixed when the binary is built: no
// argument, environment variable or file read at run time changes it.
package testbinary

import (
	"runtime/debug"
	"strings"
)

// suffix ends the main package path of a binary that go test builds.
const suffix = ".test"

// Running reports whether the program was built by go test. A binary
// without build information (built by another tool) is not a test binary.
func Running() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && isTestPath(bi.Path)
}

// isTestPath reports whether a main package path is a test binary's.
func isTestPath(path string) bool {
	return strings.HasSuffix(path, suffix) && len(path) > len(suffix)
}
