package custodian

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// Engine runs the view's writes: the journal, which applies queued jobs
// in order and commits them to the store a group at a time; the graph
// worker, which follows the store; and the claim metas snapshot writer.
// The rules give it what only they know: a job's projection (each job's
// finish), what to do when a commit or a graph update fails (broken: lock the
// vault), and whether a view is still the open one (whileCurrent).
type Engine struct {
	store Store
	graph graph.Graph
	log   *slog.Logger
	clock Clock
	hooks engineHooks

	// broken locks the vault after a failed commit or graph
	// update of st, if st is still open; whileCurrent runs fn with the
	// lock state held shared if st is the open view, else answers
	// ErrSnapshotStale.
	broken       func(st *State)
	whileCurrent func(st *State, fn func() error) error

	jl     *engine.Journal[*job] // the single writer (see newJournal)
	graphQ chan graphJob         // committed deltas for the graph worker
	// graphHold, while not nil, keeps the graph worker from applying
	// deltas (it collects them); closed when the last of holds (each one's
	// cancel, by id) is let go or broken (see holdGraph). locking counts
	// the locks waiting for the lock state (see Service.lockLife).
	holdMu    sync.Mutex
	holds     map[uint64]graphHold
	holdSeq   uint64
	locking   map[*State]int // nil: a lock of whatever state is open
	graphHold chan struct{}

	snapMu sync.Mutex // one claim metas snapshot at a time
	// snapAfterCut, when set (tests), runs between a snapshot's cut and
	// its switch, without locks held.
	snapAfterCut atomic.Pointer[func()]

	stop chan struct{}
	wg   sync.WaitGroup
}

// job is one write (or receipted read) waiting for the journal.
type job struct {
	st    *State
	apply func(b *batch) error
	// finish, if set, computes the projection of what apply changed
	// (the rules' finishJob).
	finish func(b *batch) error
	done   chan error
	// alone makes the job a group of its own: every write before it is
	// committed (and its graph delta handed over) before it runs, and
	// none after it shares its group.
	alone bool
}

// write runs fn for p in the journal (see commit), once the vault is open
// and p's session current.
func (s *Service) write(op string, p Principal, fn func(st *state, b *batch) error) error {
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	return s.commit(st, fn)
}

// commit queues fn for the journal and waits until it is durable. fn runs
// alone against st with st.mu held for writing. It should validate before
// it mutates st: an error from fn discards what it staged in b, but cannot
// undo what it changed in st. So an error from fn after it changed the view
// — took a revision, staged a write or a receipt, or published a record —
// breaks the view: the write fails with KindInternal (its group with it),
// nothing more is served from st, and the vault locks so that the next
// unlock reloads from the store. An error before any of that is returned as
// it is. Callers hold s.life (shared or exclusive) so that st stays current.
func (s *Service) commit(st *state, fn func(st *state, b *batch) error) error {
	return s.queue(&job{st: st.State, apply: func(b *batch) error { return fn(st, b) }, finish: func(b *batch) error { return s.finishJob(st, b) }})
}

// commitAlone is commit for a job that runs as a group of its own (see
// job.alone).
func (s *Service) commitAlone(st *state, fn func(st *state, b *batch) error) error {
	return s.queue(&job{st: st.State, apply: func(b *batch) error { return fn(st, b) }, finish: func(b *batch) error { return s.finishJob(st, b) }, alone: true})
}

// queue hands j to the journal and waits for its answer.
func (s *Engine) queue(j *job) error {
	j.done = make(chan error, 1)
	s.jl.Queue(j)
	return <-j.done
}

// newJournal makes the Service's journal (engine.Journal): the single
// writer, which applies queued jobs in order, then commits them to the
// store together, sharing one fsync (commitGroup), and applies their
// graph changes to the graph as one delta.
func (s *Engine) newJournal() *engine.Journal[*job] {
	return engine.NewJournal(maxGroup, func(j *job) bool { return j.alone }, s.commitGroup, s.hooks.event)
}

// group is what commitGroup gathers of one group of jobs.
type group struct {
	st     *State
	errs   []error
	writes []write
	delta  deltaMerger
	sets   []string // keys of the sets this group stores
	// applied is the group's number once it has writes; snapshot says to
	// start a claim metas snapshot once it is durable.
	applied  uint64
	snapshot bool
	gd       graph.Delta
}

// commitGroup applies and commits jobs as one group: one store commit, then
// one graph update.
func (s *Engine) commitGroup(jobs []*job) {
	g := &group{st: jobs[0].st, errs: make([]error, len(jobs))}
	st := g.st
	st.Mu.Lock()
	for i, j := range jobs {
		g.errs[i] = s.applyJob(g, j)
	}
	s.stageGroup(g)
	st.Mu.Unlock()

	broken := st.Broken
	if len(g.writes) > 0 && !broken {
		s.storeGroup(g)
	}
	if broken {
		s.log.Error("a write broke the view; locking the vault")
		st.MarkFailed()
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Internalf("commit", "the view is broken")
			}
		}
		go s.broken(st)
	}
	for i, j := range jobs {
		j.done <- g.errs[i]
	}
}

// applyJob runs j against the view (st.mu held for writing) and adds what
// it staged to g: its receipts, chained, its writes and its graph change.
// It returns j's error.
func (s *Engine) applyJob(g *group, j *job) error {
	st := g.st
	if j.st != st || st.Broken {
		return model.Internalf("journal", "state changed or broken")
	}
	b := &batch{Now: s.clock.Now(), St: st}
	rev := st.Revision
	st.Job = engine.NewJobCtx()
	err, unreadable := s.runJob(st, j, b)
	changed := st.Revision != rev || len(b.Writes) > 0 || len(b.Receipts) > 0 || st.Job.Changed()
	st.Job = nil
	switch {
	case unreadable:
		// A stored claim the job read could not be read back: the
		// store is damaged, and the job stopped part way, changing
		// who knows what. Lock, so that nothing more is served from
		// this view.
		st.BreakView()
		return err
	case err == nil && b.Err != nil:
		// The job changed the view but a staged write could not be
		// encoded: the view no longer matches what can be stored.
		st.BreakView()
		return model.Wrap("journal", KindInternal, b.Err)
	case err != nil && changed:
		// The job failed after it changed the view: what it changed
		// is neither stored nor undone (see commit).
		st.BreakView()
		return model.Wrap("journal", KindInternal, fmt.Errorf("a job failed after changing the view: %w", err))
	case err != nil:
		return err
	}
	for _, r := range b.Receipts {
		r.Sanitize()
		r.Seq = st.Head.Seq + 1
		r.At = b.Now
		r.Prev = st.Head.Hash
		if r.Records == nil {
			r.Records = []string{}
		}
		if w := st.Sets.Condense(&r); w != nil {
			g.writes = append(g.writes, *w)
			g.sets = append(g.sets, w.Key)
		}
		raw := engine.EncodeReceipt(&r)
		st.Head = chainHead{Seq: r.Seq, Hash: r.Hash}
		g.writes = append(g.writes, write{Bucket: engine.BucketReceipts, Key: engine.ReceiptKey(r.Seq), Value: raw, Append: true})
	}
	g.writes = append(g.writes, b.Writes...)
	st.NoteMetaWrites(b.Writes, &g.writes)
	// The group's graph changes go in one delta, applied after its
	// commit; the jobs after this one see its lineage through
	// st.lag (see dependents).
	engine.MergeJob(&g.delta, st, &b.Graph)
	return nil
}

// stageGroup adds to g's writes what the group as a whole stores (st.mu
// held for writing): the erasures' cleanup, the outbox's pruning and the
// group's delta, the revision and the chain's head.
func (s *Engine) stageGroup(g *group) {
	st := g.st
	if len(st.Snap.Erasing) > 0 {
		g.writes = s.eraseWrittenSince(st, g.writes)
	}
	var floor uint64
	var floorDirty bool
	if len(g.writes) > 0 || g.delta.Changes() {
		// Deltas the graph has are pruned from the outbox with this
		// commit, before this group's own is stored.
		var done []string
		done, floor, floorDirty = st.Lag.Prunable()
		for _, k := range done {
			g.writes = append(g.writes, write{Bucket: bucketOutbox, Key: k})
		}
	}
	if g.delta.Changes() && !st.Broken {
		g.gd = g.delta.Delta(st.Revision)
		st.Lag.SealPending(g.gd.Watermark)
		raw, err := json.Marshal(&g.gd)
		if err != nil {
			st.BreakView()
		}
		g.writes = append(g.writes, write{Bucket: bucketOutbox, Key: engine.ReceiptKey(st.Revision), Value: raw, Append: true})
	}
	if len(g.writes) == 0 {
		return
	}
	if floorDirty {
		raw, _ := json.Marshal(floor)
		g.writes = append(g.writes, write{Bucket: engine.BucketMeta, Key: metaGraphFloor, Value: raw})
	}
	if st.ProjectionAt != projectionVersion {
		raw, _ := json.Marshal(projectionVersion)
		g.writes = append(g.writes, write{Bucket: engine.BucketMeta, Key: metaGraphProjection, Value: raw})
		st.ProjectionAt = projectionVersion
	}
	st.Applied++
	g.applied = st.Applied
	g.snapshot = st.SnapshotDue(s.hooks.snap)
	rev, _ := json.Marshal(st.Revision)
	head, _ := json.Marshal(st.Head)
	g.writes = append(g.writes,
		write{Bucket: engine.BucketMeta, Key: engine.MetaRevision, Value: rev},
		write{Bucket: engine.BucketMeta, Key: engine.MetaLogRevision, Value: rev},
		write{Bucket: engine.BucketMeta, Key: engine.MetaHead, Value: head})
}

// storeGroup commits g's writes in one store transaction, then hands its
// delta to the graph worker and marks it durable; a commit that fails
// breaks the view and fails the group.
func (s *Engine) storeGroup(g *group) {
	st := g.st
	err := s.store.Update(func(tx Tx) error {
		for _, w := range g.writes {
			if err := engine.Apply(tx, w); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// The view now holds changes the store does not: nothing may
		// be served from it again. Fail the group, then lock so that the
		// next unlock reloads from the store.
		st.Mu.Lock()
		st.BreakView()
		st.Mu.Unlock()
		s.log.Error("commit failed; locking the vault", "err", err)
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Wrap("commit", KindInternal, err)
			}
		}
		go s.broken(st)
		return
	}
	for _, d := range g.sets {
		st.Sets.Stored(d)
	}
	if g.delta.Changes() {
		st.Lag.Handed(g.gd.Watermark)
		s.graphQ <- graphJob{st: st, d: g.gd}
	}
	st.MarkDurable(g.applied)
	if g.snapshot {
		s.wg.Add(1)
		go s.writeSnapshot(st)
	}
}

// runJob runs j against st, then computes its projection (finishJob). A
// stored claim that cannot be read back (see unreadable) ends the job with
// that error and unreadable set.
func (s *Engine) runJob(st *State, j *job, b *batch) (err error, unreadable bool) {
	var uerr error
	func() {
		defer engine.CatchUnreadable(&uerr)
		err = j.apply(b)
		if err == nil {
			if j.finish == nil {
				return
			}
			if ferr := j.finish(b); ferr != nil {
				b.Err = errors.Join(b.Err, ferr)
			}
		}
	}()
	if uerr != nil {
		return uerr, true
	}
	return err, false
}

// lockBroken locks the vault after a failed commit, if st is still current.
func (s *Service) lockBroken(st *State) {
	s.lockLife(st) // a stale st breaks no check of the state open now
	defer s.life.Unlock()
	if s.st != nil && s.st.State == st {
		s.lockLocked()
	}
}

// whileCurrentState runs fn with life held shared if st is the open
// view's, and answers engine.ErrSnapshotStale if it is not.
func (s *Service) whileCurrentState(st *State, fn func() error) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil || s.st.State != st {
		return engine.ErrSnapshotStale
	}
	return fn()
}
