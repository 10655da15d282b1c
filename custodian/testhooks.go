package custodian

import "github.com/phc-project/phc/custodian/internal/engine"

// testHooks are where tests observe and steer a Service; every one is nil
// outside tests. They are set through Config (export_test.go), never by a
// package variable: two services in one process keep their own.
type testHooks struct {
	engine.Hooks
	// graphWait runs with the operation's name when useGraph has to wait.
	graphWait func(op string)

	// checkChunk is how many claim metas Check compares under one read
	// lock of the view (zero: defaultCheckChunk); checkPause, when set,
	// runs with "graph" before Check compares the graph (held), with
	// "claims" between chunks, and with "cut" when a cut waits for a group
	// in flight.
	checkChunk int
	checkPause func(stage string)
}
