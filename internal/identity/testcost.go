package identity

import (
	"sync/atomic"

	"github.com/phc-project/phc/internal/testbinary"
)

// Test cost for HashSecret: the least Argon2id that VerifySecret accepts.
const (
	testHashMemoryKiB = 8
	testHashTime      = 1
)

// testCostOn is set by [UseTestHashCost]; nothing else sets it.
var testCostOn atomic.Bool

// UseTestHashCost makes every later [HashSecret] in this process hash with
// a cheap test cost (m=8,t=1,p=1), which the PHC string records, so
// [VerifySecret] checks it as usual.
//
// It is for tests only: it panics unless the program is a test binary
// (package testbinary, which unlike testing.Testing does not link package
// testing into the phc binary), and no command, flag, environment
// variable, setting or request reaches it. A test that checks the real
// cost must run in a test binary that does not call it.
func UseTestHashCost() {
	if !testbinary.Running() {
		panic("identity: UseTestHashCost called outside a test binary")
	}
	testCostOn.Store(true)
}

// hashCost is the cost HashSecret uses.
func hashCost() (memoryKiB, time uint32) {
	if testCostOn.Load() {
		return testHashMemoryKiB, testHashTime
	}
	return hashMemoryKiB, hashTime
}
