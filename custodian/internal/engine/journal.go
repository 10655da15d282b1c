package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

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

// Buckets of the canonical store. Keys are opaque ids, never names or values.
const (
	BucketMeta      = "meta"
	BucketClaims    = "claims"     // id@version → Claim (immutable, or a tombstone after delete)
	BucketClaimMeta = "claim_meta" // id → ClaimMeta
	BucketProposals = "proposals"  // prp_… → Proposal
	BucketPersonas  = "personas"   // per_… → Persona
	BucketGrants    = "grants"     // grt_… → Grant
	BucketConsumers = "consumers"  // con_… → Consumer
	BucketTokens    = "tokens"     // tok_… → ServiceToken
	BucketReceipts  = "receipts"   // %016x seq → Receipt

	MetaRevision = "revision"
	MetaHead     = "receipt_head"
)

// Batch collects what one job stages: store writes and receipts.
type Batch struct {
	Now      time.Time
	St       *State
	Writes   []Write
	Receipts []model.Receipt
	Graph    graph.Delta // the projection's change, computed by finishJob
	Err      error
}

// Put stages v, JSON-encoded, under bucket/key.
func (b *Batch) Put(bucket, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Err = errors.Join(b.Err, fmt.Errorf("encode %s/%s: %w", bucket, key, err))
		return
	}
	b.Writes = append(b.Writes, Write{Bucket: bucket, Key: key, Value: raw})
}

// Del stages the removal of bucket/key.
func (b *Batch) Del(bucket, key string) {
	b.Writes = append(b.Writes, Write{Bucket: bucket, Key: key})
}

// Receipt stages a receipt; the journal assigns its seq, prev and hash.
func (b *Batch) Receipt(r model.Receipt) {
	b.Receipts = append(b.Receipts, r)
}

// NextRevision assigns the next revision to a write.
func (b *Batch) NextRevision() uint64 {
	b.St.Revision++
	return b.St.Revision
}

type ChainHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

func ReceiptKey(seq uint64) string { return fmt.Sprintf("%016x", seq) }

// EncodeReceipt sets r.Hash and returns r's JSON, encoding it once: the
// hash covers the JSON with an empty hash field, which is the last field, so
// the stored form is that JSON with the hash filled in.
func EncodeReceipt(r *model.Receipt) []byte {
	r.Hash = ""
	raw, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode receipt: %v", err))
	}
	sum := sha256.Sum256(raw)
	r.Hash = "sha256:" + hex.EncodeToString(sum[:])
	const tail = `"hash":""}`
	if !bytes.HasSuffix(raw, []byte(tail)) {
		panic("custodian: receipt JSON does not end with its hash field")
	}
	out := make([]byte, 0, len(raw)+len(r.Hash))
	out = append(out, raw[:len(raw)-len(tail)]...)
	out = append(out, `"hash":"`...)
	out = append(out, r.Hash...)
	return append(out, `"}`...)
}

// ReceiptHash is SHA-256 over the receipt's JSON with an empty hash field.
func ReceiptHash(r *model.Receipt) string {
	c := *r
	c.Hash = ""
	raw, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode receipt: %v", err))
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Engine runs the view's writes: the journal, which applies queued jobs
// in order and commits them to the store a group at a time; the graph
// worker, which follows the store; and the claim metas snapshot writer.
// The rules give it what only they know: what to do when a commit or a
// graph update fails (Broken: lock the vault), and whether a view is still
// the open one (WithView). Each job's projection into the graph is
// the engine's own (finishJob).
// Make one with New, start it with Start, stop it by closing Stop and
// waiting for Wg.
type Engine struct {
	Store Store
	Graph graph.Graph
	Log   *slog.Logger
	Clock Clock
	Hooks Hooks

	// Broken locks the vault after a failed commit or graph update of
	// st, if st is still open; WithView runs fn with the lock state held
	// shared, on the open view (nil while locked). Keys, when the vault
	// derives keys, MACs the receipt checkpoints.
	Broken   func(st *State)
	WithView func(fn func(st *State) error) error
	Keys     KeyDeriver
	rollMu   sync.Mutex // one receipt roll at a time

	jl     *Journal[*Job] // the single writer (see newJournal)
	graphQ chan GraphJob  // committed deltas for the graph worker
	// graphHold, while not nil, keeps the graph worker from applying
	// deltas (it collects them); closed when the last of holds (each one's
	// cancel, by id) is let go or broken (see HoldGraph). locking counts
	// the locks waiting for the lock state (see Locking).
	holdMu    sync.Mutex
	holds     map[uint64]GraphHold
	holdSeq   uint64
	locking   map[*State]int // nil: a lock of whatever state is open
	graphHold chan struct{}

	SnapMu sync.Mutex // one claim metas snapshot at a time
	// SnapAfterCut, when set (tests), runs between a snapshot's cut and
	// its switch, without locks held.
	SnapAfterCut atomic.Pointer[func()]

	Stop chan struct{}
	Wg   sync.WaitGroup
}

// MaxGroup bounds the jobs of one group, and the deltas the graph worker
// joins into one.
const MaxGroup = 512

// Job is one write (or receipted read) waiting for the journal.
type Job struct {
	St    *State
	Apply func(b *Batch) error
	done  chan error
	// Alone makes the job a group of its own: every write before it is
	// committed (and its graph delta handed over) before it runs, and
	// none after it shares its group.
	Alone bool
}

// Queue hands j to the journal and waits for its answer.
func (s *Engine) Queue(j *Job) error {
	j.done = make(chan error, 1)
	s.jl.Queue(j)
	return <-j.done
}

// Config is what an Engine runs on, and what the rules give it.
type Config struct {
	Store Store
	Graph graph.Graph
	Log   *slog.Logger // nil: discard
	Clock Clock        // nil: the system's
	Hooks Hooks        // the tests' (zero outside tests)
	Keys  KeyDeriver   // nil: checkpoints carry no MAC
	// Broken and WithView are the rules' (see Engine).
	Broken   func(st *State)
	WithView func(fn func(st *State) error) error
}

// New returns an Engine of cfg; Start starts it.
func New(cfg Config) *Engine {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	hooks := cfg.Hooks
	hooks.Snap = hooks.Snap.OrDefaults()
	if hooks.MaxApplyEdges == 0 {
		hooks.MaxApplyEdges = DefaultMaxApplyEdges
	}
	if hooks.CheckChunk == 0 {
		hooks.CheckChunk = DefaultCheckChunk
	}
	e := &Engine{
		Store: cfg.Store, Graph: cfg.Graph, Log: cfg.Log, Clock: cfg.Clock, Hooks: hooks,
		Broken: cfg.Broken, WithView: cfg.WithView, Keys: cfg.Keys,
		graphQ:  make(chan GraphJob, MaxGroup),
		holds:   map[uint64]GraphHold{},
		locking: map[*State]int{},
		Stop:    make(chan struct{}),
	}
	e.jl = e.newJournal()
	return e
}

// Start starts the journal's goroutine, the graph worker and the receipt
// roller, counted in Wg; closing Stop ends them.
func (s *Engine) Start() {
	s.Wg.Add(3)
	go func() {
		defer s.Wg.Done()
		s.jl.Run(s.Stop)
	}()
	go s.graphWorker()
	go s.maintain()
}

// whileCurrent runs fn with the lock state held shared if st is the open
// view, and answers ErrSnapshotStale if it is not.
func (s *Engine) whileCurrent(st *State, fn func() error) error {
	return s.WithView(func(open *State) error {
		if open == nil || open != st {
			return ErrSnapshotStale
		}
		return fn()
	})
}

// Queued is how many jobs wait for the journal.
func (s *Engine) Queued() int { return s.jl.Queued() }

// Locking runs lock, which takes the core's lock state exclusively to
// lock or stop st (nil: whatever view is open). First it breaks every
// hold of the graph taken in st (see HoldGraph), and any asked for until
// lock returns: a check comparing the graph gives up, rather than keep
// the lock (and every request behind it, such as a traversal waiting for
// the graph with the lock state shared) waiting for as long as the
// comparison takes.
func (s *Engine) Locking(st *State, lock func()) {
	s.holdMu.Lock()
	s.locking[st]++
	s.breakHoldsLocked(st)
	s.holdMu.Unlock()
	lock()
	s.holdMu.Lock()
	if s.locking[st]--; s.locking[st] == 0 {
		delete(s.locking, st)
	}
	s.holdMu.Unlock()
}

// newJournal makes the Engine's journal: the single
// writer, which applies queued jobs in order, then commits them to the
// store together, sharing one fsync (commitGroup), and applies their
// graph changes to the graph as one delta.
func (s *Engine) newJournal() *Journal[*Job] {
	return NewJournal(MaxGroup, func(j *Job) bool { return j.Alone }, s.commitGroup, s.Hooks.Event)
}

// group is what commitGroup gathers of one group of jobs.
type group struct {
	st     *State
	errs   []error
	writes []Write
	delta  DeltaMerger
	sets   []string // keys of the sets this group stores
	// applied is the group's number once it has writes; snapshot says to
	// start a claim metas snapshot once it is durable.
	applied  uint64
	snapshot bool
	gd       graph.Delta
}

// commitGroup applies and commits jobs as one group: one store commit, then
// one graph update.
func (s *Engine) commitGroup(jobs []*Job) {
	g := &group{st: jobs[0].St, errs: make([]error, len(jobs))}
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
		s.Log.Error("a write broke the view; locking the vault")
		st.MarkFailed()
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Internalf("commit", "the view is broken")
			}
		}
		go s.Broken(st)
	}
	for i, j := range jobs {
		j.done <- g.errs[i]
	}
}

// applyJob runs j against the view (st.mu held for writing) and adds what
// it staged to g: its receipts, chained, its writes and its graph change.
// It returns j's error.
func (s *Engine) applyJob(g *group, j *Job) error {
	st := g.st
	if j.St != st || st.Broken {
		return model.Internalf("journal", "state changed or broken")
	}
	b := &Batch{Now: s.Clock.Now(), St: st}
	rev := st.Revision
	st.Job = NewJobCtx()
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
		return model.Wrap("journal", model.KindInternal, b.Err)
	case err != nil && changed:
		// The job failed after it changed the view: what it changed
		// is neither stored nor undone (see commit).
		st.BreakView()
		return model.Wrap("journal", model.KindInternal, fmt.Errorf("a job failed after changing the view: %w", err))
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
		raw := EncodeReceipt(&r)
		st.Head = ChainHead{Seq: r.Seq, Hash: r.Hash}
		g.writes = append(g.writes, Write{Bucket: BucketReceipts, Key: ReceiptKey(r.Seq), Value: raw, Append: true})
	}
	g.writes = append(g.writes, b.Writes...)
	st.NoteMetaWrites(b.Writes, &g.writes)
	// The group's graph changes go in one delta, applied after its
	// commit; the jobs after this one see its lineage through
	// st.lag (see dependents).
	MergeJob(&g.delta, st, &b.Graph)
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
			g.writes = append(g.writes, Write{Bucket: BucketOutbox, Key: k})
		}
	}
	if g.delta.Changes() && !st.Broken {
		g.gd = g.delta.Delta(st.Revision)
		st.Lag.SealPending(g.gd.Watermark)
		raw, err := json.Marshal(&g.gd)
		if err != nil {
			st.BreakView()
		}
		g.writes = append(g.writes, Write{Bucket: BucketOutbox, Key: ReceiptKey(st.Revision), Value: raw, Append: true})
	}
	if len(g.writes) == 0 {
		return
	}
	if floorDirty {
		raw, _ := json.Marshal(floor)
		g.writes = append(g.writes, Write{Bucket: BucketMeta, Key: MetaGraphFloor, Value: raw})
	}
	if st.ProjectionAt != ProjectionVersion {
		raw, _ := json.Marshal(ProjectionVersion)
		g.writes = append(g.writes, Write{Bucket: BucketMeta, Key: MetaGraphProjection, Value: raw})
		st.ProjectionAt = ProjectionVersion
	}
	st.Applied++
	g.applied = st.Applied
	g.snapshot = st.SnapshotDue(s.Hooks.Snap)
	rev, _ := json.Marshal(st.Revision)
	head, _ := json.Marshal(st.Head)
	g.writes = append(g.writes,
		Write{Bucket: BucketMeta, Key: MetaRevision, Value: rev},
		Write{Bucket: BucketMeta, Key: MetaLogRevision, Value: rev},
		Write{Bucket: BucketMeta, Key: MetaHead, Value: head})
}

// storeGroup commits g's writes in one store transaction, then hands its
// delta to the graph worker and marks it durable; a commit that fails
// breaks the view and fails the group.
func (s *Engine) storeGroup(g *group) {
	st := g.st
	err := s.Store.Update(func(tx Tx) error {
		for _, w := range g.writes {
			if err := Apply(tx, w); err != nil {
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
		s.Log.Error("commit failed; locking the vault", "err", err)
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Wrap("commit", model.KindInternal, err)
			}
		}
		go s.Broken(st)
		return
	}
	for _, d := range g.sets {
		st.Sets.Stored(d)
	}
	if g.delta.Changes() {
		st.Lag.Handed(g.gd.Watermark)
		s.graphQ <- GraphJob{st: st, d: g.gd}
	}
	st.MarkDurable(g.applied)
	if g.snapshot {
		s.Wg.Add(1)
		go s.writeSnapshot(st)
	}
}

// runJob runs j against st, then computes its projection (finishJob). A
// stored claim that cannot be read back (see unreadable) ends the job with
// that error and unreadable set.
func (s *Engine) runJob(st *State, j *Job, b *Batch) (err error, unreadable bool) {
	var uerr error
	func() {
		defer CatchUnreadable(&uerr)
		err = j.Apply(b)
		if err == nil {
			if ferr := finishJob(s.Graph, st, b); ferr != nil {
				b.Err = errors.Join(b.Err, ferr)
			}
		}
	}()
	if uerr != nil {
		return uerr, true
	}
	return err, false
}
