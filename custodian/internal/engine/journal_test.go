package engine

import (
	"slices"
	"testing"
)

// TestJournalGroups: the journal commits what is queued as one group, up
// to its maximum, in order; an alone job is a group of its own; Queued
// counts what waits behind a commit in progress.
func TestJournalGroups(t *testing.T) {
	type job struct {
		n     int
		alone bool
	}
	groups := make(chan []int)
	gate := make(chan struct{})
	// Each commit shows its group, then holds the journal until let go:
	// what the test queues meanwhile waits for the next group.
	commit := func(g []*job) {
		var ns []int
		for _, j := range g {
			ns = append(ns, j.n)
		}
		groups <- ns
		<-gate
	}
	jl := NewJournal(3, func(j *job) bool { return j.alone }, commit, nil)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { jl.Run(stop); close(done) }()
	want := func(ns ...int) {
		t.Helper()
		if got := <-groups; !slices.Equal(got, ns) {
			t.Fatalf("group %v; want %v", got, ns)
		}
	}

	jl.Queue(&job{n: 0})
	want(0)
	for i := 1; i <= 3; i++ {
		jl.Queue(&job{n: i})
	}
	if q := jl.Queued(); q != 3 {
		t.Fatalf("Queued behind a commit = %d; want 3", q)
	}
	gate <- struct{}{}
	want(1, 2, 3) // all that was queued, up to the maximum
	jl.Queue(&job{n: 4})
	jl.Queue(&job{n: 5, alone: true})
	jl.Queue(&job{n: 6})
	gate <- struct{}{}
	want(4)
	gate <- struct{}{}
	want(5) // alone
	gate <- struct{}{}
	want(6)
	if q := jl.Queued(); q != 0 {
		t.Errorf("Queued after every job was taken = %d", q)
	}
	close(stop)
	gate <- struct{}{}
	<-done
}
