// Package storetest is the contract suite of [custodian.Store]: one set of
// tests that every implementation must pass, so that the core can rely on the
// contract alone and not on one implementation's habits.
//
// # Use
//
// Call [Run] from a test of the implementing package with a function that
// returns a new, empty store:
//
//	func TestMemory(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) custodian.Store { return store.NewMemory() })
//	}
//
// An implementation that persists also calls [RunDurable], whose reopen
// function closes a store and opens the same data again.
//
// Each subtest covers one sentence of the contract in custodian/store.go and
// is named for it. The suite closes every store it is given when the subtest
// ends, possibly a second time after a test closed it already; the error of
// that second Close is ignored.
//
// # Caveats
//
//   - Beyond the literal contract, the suite requires that a View can run
//     while an Update is in progress (it checks that the View does not see
//     the Update's writes): an implementation that blocks readers behind a
//     writer deadlocks in the subtest ViewIsolation.
//   - Durability against a crash (every acknowledged Update survives kill -9)
//     cannot be shown in-process; RunDurable checks only close and reopen.
//   - The concurrency subtest finds data races only under go test -race.
package storetest
