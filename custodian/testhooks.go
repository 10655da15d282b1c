package custodian

// testHooks are where tests observe and steer a Service; every one is nil
// outside tests. They are set through Config (export_test.go), never by a
// package variable: two services in one process keep their own.
type testHooks struct {
	engineHooks
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

// engineHooks are the test hooks the Engine takes (see testHooks).
type engineHooks struct {
	// event runs when something a test may wait for has happened: a job
	// queued for the journal, the vault locked, a claim metas snapshot
	// ended, a read began waiting for its group to be durable, the idle
	// watcher looked. It runs with no lock of the Service held that a
	// test's condition could need, and must not block.
	event func()
	// held runs in the graph worker with the number of deltas it has
	// collected while the graph is held (see holdGraph).
	held func(collected int)
	// snap is when the journal starts a claim metas snapshot and how
	// large its chunks are; maxApplyEdges bounds a graph commit. Zero:
	// the defaults (see snapTuning, defaultMaxApplyEdges).
	snap          snapTuning
	maxApplyEdges int
}

// fire runs the event hook, if any.
func (h *engineHooks) fire() {
	if h.event != nil {
		h.event()
	}
}
