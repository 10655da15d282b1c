package vault

import (
	"sync/atomic"

	"github.com/phc-project/phc/internal/testbinary"
)

// testKDF holds the cheap Argon2id cost that tests may use instead of
// fixedKDF. It is far below any safe cost: a vault made with it is only as
// strong as its Secret Key.
var testKDF = kdfParams{Alg: kdfAlg, Time: 1, MemoryKiB: 64, Threads: 1}

// testKDFOn is set by [UseTestKDF]; nothing else sets it.
var testKDFOn atomic.Bool

// UseTestKDF makes every later [Create] in this process derive keys with a
// cheap test cost and record that cost in the header, and makes [Open] and
// [OpenArchive] accept it. Without it, a header or archive naming the test
// cost is corrupt, so a tampered header cannot weaken a real vault.
//
// It is for tests only: it panics unless the program is a test binary
// (package testbinary, which unlike testing.Testing does not link package
// testing into the phc binary), and no command, flag, environment
// variable, setting or request reaches it. A test that checks the real
// cost must run in a test binary that does not call it.
func UseTestKDF() {
	if !testbinary.Running() {
		panic("vault: UseTestKDF called outside a test binary")
	}
	testKDFOn.Store(true)
}

// createKDF is the cost Create uses.
func createKDF() kdfParams {
	if testKDFOn.Load() {
		return testKDF
	}
	return fixedKDF
}

// acceptKDF reports whether a header or archive may name p.
func acceptKDF(p kdfParams) bool {
	return p == fixedKDF || (testKDFOn.Load() && p == testKDF)
}
