package engine

import "sync/atomic"

// Journal is the single writer's queue: jobs are queued by any goroutine
// and taken in order by one (Run), which hands them to commit a group at a
// time — as many as are queued, up to max — so that a group shares one
// store commit and its fsync. A job for which alone is true is a group of
// its own: every job before it is committed before it runs, and none after
// it shares its group.
type Journal[J any] struct {
	jobs   chan J
	queued atomic.Int64 // queued, not yet taken
	max    int
	alone  func(J) bool
	commit func(group []J)
	// onQueue, if set (tests), runs after each job is counted queued.
	onQueue func()
}

// NewJournal returns a journal of groups of at most max jobs that commit
// commits; onQueue (nil: none) runs when a job is queued (tests).
func NewJournal[J any](max int, alone func(J) bool, commit func(group []J), onQueue func()) *Journal[J] {
	return &Journal[J]{jobs: make(chan J, max), max: max, alone: alone, commit: commit, onQueue: onQueue}
}

// Queue hands j to the journal; it blocks while max jobs are queued.
func (jl *Journal[J]) Queue(j J) {
	jl.queued.Add(1)
	if jl.onQueue != nil {
		jl.onQueue()
	}
	jl.jobs <- j
}

// Queued is how many jobs are queued and not yet taken (behind a commit
// in progress, say).
func (jl *Journal[J]) Queued() int { return int(jl.queued.Load()) }

// Run takes the queued jobs and commits them in groups until stop is
// closed. One goroutine runs it; commit runs on it.
func (jl *Journal[J]) Run(stop <-chan struct{}) {
	var carry []J
	var next J
	hasNext := false // an alone job met while draining: the next group
	for {
		switch {
		case hasNext:
			carry, hasNext = append(carry, next), false
		case len(carry) == 0:
			select {
			case <-stop:
				return
			case j := <-jl.jobs:
				jl.queued.Add(-1)
				carry = append(carry, j)
			}
		}
	drain:
		for len(carry) < jl.max && !jl.alone(carry[0]) {
			select {
			case j := <-jl.jobs:
				jl.queued.Add(-1)
				if jl.alone(j) {
					next, hasNext = j, true
					break drain
				}
				carry = append(carry, j)
			default:
				break drain
			}
		}
		jl.commit(carry)
		clear(carry)
		carry = carry[:0]
	}
}

// Write is one store operation of a group.
type Write struct {
	Bucket, Key string
	Value       []byte // nil: delete
	IfAbsent    bool   // put only if the key is absent (content-addressed values)
	Append      bool   // the key sorts after every key of the bucket (see Appender)
}

// Apply performs w in tx, through its Appender for an append if it has
// one.
func Apply(tx Tx, w Write) error {
	switch {
	case w.Value == nil:
		return tx.Delete(w.Bucket, w.Key)
	case w.Append:
		if a, ok := tx.(Appender); ok {
			return a.Append(w.Bucket, w.Key, w.Value)
		}
	case w.IfAbsent:
		if _, ok, err := tx.Get(w.Bucket, w.Key); err != nil || ok {
			return err
		}
	}
	return tx.Put(w.Bucket, w.Key, w.Value)
}
