package engine

// Hooks are the test hooks the Engine takes; the core sets them from its
// Config (tests only), and leaves them nil outside tests.
type Hooks struct {
	// Event runs when something a test may wait for has happened: a job
	// queued for the journal, the vault locked, a claim metas snapshot
	// ended, a read began waiting for its group to be durable, the idle
	// watcher looked. It runs with no lock of the Service held that a
	// test's condition could need, and must not block.
	Event func()
	// Held runs in the graph worker with the number of deltas it has
	// collected while the graph is held (see HoldGraph).
	Held func(collected int)
	// Snap is when the journal starts a claim metas snapshot and how
	// large its chunks are; MaxApplyEdges bounds a graph commit. Zero:
	// the defaults (see SnapTuning, DefaultMaxApplyEdges).
	Snap          SnapTuning
	MaxApplyEdges int
	// CheckChunk is how many claim metas a check compares under one read
	// lock of the view (zero: DefaultCheckChunk); CheckPause, when set,
	// runs with "graph" before a check compares the graph (held), with
	// "claims" between chunks, and with "cut" when a cut waits for a group
	// in flight.
	CheckChunk int
	CheckPause func(stage string)
}

// Pause runs the check's pause hook, if any, with stage.
func (h *Hooks) Pause(stage string) {
	if h.CheckPause != nil {
		h.CheckPause(stage)
	}
}

// Fire runs the event hook, if any.
func (h *Hooks) Fire() {
	if h.Event != nil {
		h.Event()
	}
}
