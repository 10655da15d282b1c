package engine

// Hooks are the test hooks the Engine takes; the core sets them from its
// Config (tests only), and leaves them nil outside tests.
type Hooks struct {
	// event runs when something a test may wait for has happened: a job
	// queued for the journal, the vault locked, a claim metas snapshot
	// ended, a read began waiting for its group to be durable, the idle
	// watcher looked. It runs with no lock of the Service held that a
	// test's condition could need, and must not block.
	Event func()
	// held runs in the graph worker with the number of deltas it has
	// collected while the graph is held (see holdGraph).
	Held func(collected int)
	// snap is when the journal starts a claim metas snapshot and how
	// large its chunks are; maxApplyEdges bounds a graph commit. Zero:
	// the defaults (see snapTuning, defaultMaxApplyEdges).
	Snap          SnapTuning
	MaxApplyEdges int
}

// Fire runs the event hook, if any.
func (h *Hooks) Fire() {
	if h.Event != nil {
		h.Event()
	}
}
