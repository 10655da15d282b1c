package custodian

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// Buckets of the canonical store. Keys are opaque ids, never names or values.
const (
	bucketMeta      = "meta"
	bucketClaims    = "claims"     // id@version → Claim (immutable, or a tombstone after delete)
	bucketClaimMeta = "claim_meta" // id → claimMeta
	bucketProposals = "proposals"  // prp_… → Proposal
	bucketPersonas  = "personas"   // per_… → Persona
	bucketGrants    = "grants"     // grt_… → Grant
	bucketConsumers = "consumers"  // con_… → Consumer
	bucketTokens    = "tokens"     // tok_… → ServiceToken
	bucketReceipts  = "receipts"   // %016x seq → Receipt

	metaRevision = "revision"
	metaHead     = "receipt_head"
)

// job is one write (or receipted read) waiting for the journal.
type job struct {
	st    *state
	apply func(st *state, b *batch) error
	done  chan error
	// alone makes the job a group of its own: every write before it is
	// committed (and its graph delta handed over) before it runs, and
	// none after it shares its group.
	alone bool
}

// batch collects what one job stages: store writes and receipts.
type batch struct {
	now      time.Time
	st       *State
	writes   []write
	receipts []Receipt
	graph    graph.Delta // the projection's change, computed by finishJob
	err      error
}

type write struct {
	bucket, key string
	value       []byte // nil: delete
	ifAbsent    bool   // put only if the key is absent (content-addressed values)
	append      bool   // the key sorts after every key of the bucket (see Appender)
}

// put stages v, JSON-encoded, under bucket/key.
func (b *batch) put(bucket, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		b.err = errors.Join(b.err, fmt.Errorf("encode %s/%s: %w", bucket, key, err))
		return
	}
	b.writes = append(b.writes, write{bucket: bucket, key: key, value: raw})
}

// del stages the removal of bucket/key.
func (b *batch) del(bucket, key string) {
	b.writes = append(b.writes, write{bucket: bucket, key: key})
}

// receipt stages a receipt; the journal assigns its seq, prev and hash.
func (b *batch) receipt(r Receipt) {
	b.receipts = append(b.receipts, r)
}

// nextRevision assigns the next revision to a write.
func (b *batch) nextRevision() uint64 {
	b.st.revision++
	return b.st.revision
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
	return s.queue(&job{st: st, apply: fn})
}

// commitAlone is commit for a job that runs as a group of its own (see
// job.alone).
func (s *Service) commitAlone(st *state, fn func(st *state, b *batch) error) error {
	return s.queue(&job{st: st, apply: fn, alone: true})
}

// queue hands j to the journal and waits for its answer.
func (s *Service) queue(j *job) error {
	j.done = make(chan error, 1)
	s.jl.Queue(j)
	return <-j.done
}

// newJournal makes the Service's journal (engine.Journal): the single
// writer, which applies queued jobs in order, then commits them to the
// store together, sharing one fsync (commitGroup), and applies their
// graph changes to the graph as one delta.
func (s *Service) newJournal() *engine.Journal[*job] {
	return engine.NewJournal(maxGroup, func(j *job) bool { return j.alone }, s.commitGroup, s.test.event)
}

// group is what commitGroup gathers of one group of jobs.
type group struct {
	st     *state
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
func (s *Service) commitGroup(jobs []*job) {
	g := &group{st: jobs[0].st, errs: make([]error, len(jobs))}
	st := g.st
	st.mu.Lock()
	for i, j := range jobs {
		g.errs[i] = s.applyJob(g, j)
	}
	s.stageGroup(g)
	st.mu.Unlock()

	broken := st.broken
	if len(g.writes) > 0 && !broken {
		s.storeGroup(g)
	}
	if broken {
		s.log.Error("a write broke the view; locking the vault")
		st.markFailed()
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Internalf("commit", "the view is broken")
			}
		}
		go s.lockBroken(st)
	}
	for i, j := range jobs {
		j.done <- g.errs[i]
	}
}

// applyJob runs j against the view (st.mu held for writing) and adds what
// it staged to g: its receipts, chained, its writes and its graph change.
// It returns j's error.
func (s *Service) applyJob(g *group, j *job) error {
	st := g.st
	if j.st != st || st.broken {
		return model.Internalf("journal", "state changed or broken")
	}
	b := &batch{now: s.clock.Now(), st: st.State}
	rev := st.revision
	st.job = newJobCtx()
	err, unreadable := s.runJob(st, j, b)
	changed := st.revision != rev || len(b.writes) > 0 || len(b.receipts) > 0 || st.job.changed()
	st.job = nil
	switch {
	case unreadable:
		// A stored claim the job read could not be read back: the
		// store is damaged, and the job stopped part way, changing
		// who knows what. Lock, so that nothing more is served from
		// this view.
		st.breakView()
		return err
	case err == nil && b.err != nil:
		// The job changed the view but a staged write could not be
		// encoded: the view no longer matches what can be stored.
		st.breakView()
		return model.Wrap("journal", KindInternal, b.err)
	case err != nil && changed:
		// The job failed after it changed the view: what it changed
		// is neither stored nor undone (see commit).
		st.breakView()
		return model.Wrap("journal", KindInternal, fmt.Errorf("a job failed after changing the view: %w", err))
	case err != nil:
		return err
	}
	for _, r := range b.receipts {
		r.Sanitize()
		r.Seq = st.head.Seq + 1
		r.At = b.now
		r.Prev = st.head.Hash
		if r.Records == nil {
			r.Records = []string{}
		}
		if w := st.sets.condense(&r); w != nil {
			g.writes = append(g.writes, *w)
			g.sets = append(g.sets, w.key)
		}
		raw := encodeReceipt(&r)
		st.head = chainHead{Seq: r.Seq, Hash: r.Hash}
		g.writes = append(g.writes, write{bucket: bucketReceipts, key: receiptKey(r.Seq), value: raw, append: true})
	}
	g.writes = append(g.writes, b.writes...)
	st.noteMetaWrites(b.writes, &g.writes)
	// The group's graph changes go in one delta, applied after its
	// commit; the jobs after this one see its lineage through
	// st.lag (see dependents).
	mergeJob(&g.delta, st.State, &b.graph)
	return nil
}

// stageGroup adds to g's writes what the group as a whole stores (st.mu
// held for writing): the erasures' cleanup, the outbox's pruning and the
// group's delta, the revision and the chain's head.
func (s *Service) stageGroup(g *group) {
	st := g.st
	if len(st.snap.erasing) > 0 {
		g.writes = s.eraseWrittenSince(st, g.writes)
	}
	var floor uint64
	var floorDirty bool
	if len(g.writes) > 0 || g.delta.Changes() {
		// Deltas the graph has are pruned from the outbox with this
		// commit, before this group's own is stored.
		var done []string
		done, floor, floorDirty = st.lag.Prunable()
		for _, k := range done {
			g.writes = append(g.writes, write{bucket: bucketOutbox, key: k})
		}
	}
	if g.delta.Changes() && !st.broken {
		g.gd = g.delta.Delta(st.revision)
		st.lag.SealPending(g.gd.Watermark)
		raw, err := json.Marshal(&g.gd)
		if err != nil {
			st.breakView()
		}
		g.writes = append(g.writes, write{bucket: bucketOutbox, key: receiptKey(st.revision), value: raw, append: true})
	}
	if len(g.writes) == 0 {
		return
	}
	if floorDirty {
		raw, _ := json.Marshal(floor)
		g.writes = append(g.writes, write{bucket: bucketMeta, key: metaGraphFloor, value: raw})
	}
	if st.projectionAt != projectionVersion {
		raw, _ := json.Marshal(projectionVersion)
		g.writes = append(g.writes, write{bucket: bucketMeta, key: metaGraphProjection, value: raw})
		st.projectionAt = projectionVersion
	}
	st.applied++
	g.applied = st.applied
	g.snapshot = st.snapshotDue(s.test.snap)
	rev, _ := json.Marshal(st.revision)
	head, _ := json.Marshal(st.head)
	g.writes = append(g.writes,
		write{bucket: bucketMeta, key: metaRevision, value: rev},
		write{bucket: bucketMeta, key: metaLogRevision, value: rev},
		write{bucket: bucketMeta, key: metaHead, value: head})
}

// storeGroup commits g's writes in one store transaction, then hands its
// delta to the graph worker and marks it durable; a commit that fails
// breaks the view and fails the group.
func (s *Service) storeGroup(g *group) {
	st := g.st
	err := s.store.Update(func(tx Tx) error {
		for _, w := range g.writes {
			if err := engine.Apply(tx, engine.Write{Bucket: w.bucket, Key: w.key, Value: w.value, IfAbsent: w.ifAbsent, Append: w.append}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// The view now holds changes the store does not: nothing may
		// be served from it again. Fail the group, then lock so that the
		// next unlock reloads from the store.
		st.mu.Lock()
		st.breakView()
		st.mu.Unlock()
		s.log.Error("commit failed; locking the vault", "err", err)
		for i := range g.errs {
			if g.errs[i] == nil {
				g.errs[i] = model.Wrap("commit", KindInternal, err)
			}
		}
		go s.lockBroken(st)
		return
	}
	for _, d := range g.sets {
		st.sets.stored(d)
	}
	if g.delta.Changes() {
		st.lag.Handed(g.gd.Watermark)
		s.graphQ <- graphJob{st: st, d: g.gd}
	}
	st.markDurable(g.applied)
	if g.snapshot {
		s.wg.Add(1)
		go s.writeSnapshot(st)
	}
}

// runJob runs j against st, then computes its projection (finishJob). A
// stored claim that cannot be read back (see unreadable) ends the job with
// that error and unreadable set.
func (s *Service) runJob(st *state, j *job, b *batch) (err error, unreadable bool) {
	var uerr error
	func() {
		defer catchUnreadable(&uerr)
		err = j.apply(st, b)
		if err == nil {
			if ferr := s.finishJob(st, b); ferr != nil {
				b.err = errors.Join(b.err, ferr)
			}
		}
	}()
	if uerr != nil {
		return uerr, true
	}
	return err, false
}

// lockBroken locks the vault after a failed commit, if st is still current.
func (s *Service) lockBroken(st *state) {
	s.lockLife(st) // a stale st breaks no check of the state open now
	defer s.life.Unlock()
	if s.st == st {
		s.lockLocked()
	}
}

type chainHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

func receiptKey(seq uint64) string { return fmt.Sprintf("%016x", seq) }

// encodeReceipt sets r.Hash and returns r's JSON, encoding it once: the
// hash covers the JSON with an empty hash field, which is the last field, so
// the stored form is that JSON with the hash filled in.
func encodeReceipt(r *Receipt) []byte {
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

// receiptHash is SHA-256 over the receipt's JSON with an empty hash field.
func receiptHash(r *Receipt) string {
	c := *r
	c.Hash = ""
	raw, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode receipt: %v", err))
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
