package custodian

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// This file exports internals to the external tests (package custodian_test).
// Those tests live outside the package because they use internal/store,
// which imports custodian: an in-package test importing it would be an
// import cycle.

// Store layout, for tests that inspect or tamper with the store directly.
const (
	BucketReceipts = engine.BucketReceipts
	BucketMeta     = engine.BucketMeta
	MetaRevision   = engine.MetaRevision
	MetaHead       = engine.MetaHead
	BucketClaims   = engine.BucketClaims
	BucketMetas    = engine.BucketClaimMeta
)

// VersionKey is the store key of version v of claim id.
func VersionKey(id string, v int) string { return engine.VersionKey(id, v) }

// ReceiptKey is the store key of the receipt with sequence number seq.
func ReceiptKey(seq uint64) string { return engine.ReceiptKey(seq) }

// ReceiptHash recomputes the chain hash of r.
func ReceiptHash(r *Receipt) string { return engine.ReceiptHash(r) }

// ForgedOwner is an owner principal that no session backs, as code outside
// the package could never build.
func ForgedOwner() Principal { return model.OwnerPrincipal([32]byte{}) }

// CommitUnencodable commits a job that changes the view (it takes a
// revision) and stages a value that cannot be encoded.
func (s *Service) CommitUnencodable() error {
	return s.write("test", Principal{}, func(st *state, b *batch) error {
		b.NextRevision()
		b.Put(engine.BucketMeta, "unencodable", make(chan int))
		return nil
	})
}

// BulkGraph loads, in writes of a few thousand claims each, people entities
// (each with a name claim people.<i>.name) and, for each, degree
// relationship claims rel.<i>.<k> to pseudo-random others — the state a
// long-used vault reaches through the API, without 100,000 round trips. It
// goes through the same journal, projection and outbox as every write, and
// returns the entity ids.
func (s *Service) BulkGraph(p Principal, people, degree int) ([]string, error) {
	ids := make([]string, people)
	const chunk = 2000
	for lo := 0; lo < people; lo += chunk {
		hi := min(lo+chunk, people)
		err := s.write("bulk", p, func(st *state, b *batch) error {
			for i := lo; i < hi; i++ {
				id, _ := identity.NewID("ent_")
				ids[i] = id
				e := &Entity{ID: id, Type: "person", CreatedAt: b.Now, Revision: b.NextRevision()}
				st.SetEntity(e)
				b.Put(engine.BucketEntities, id, e)
				bulkClaim(st, b, fmt.Sprintf("people.p%d.name", i), id, "fact", json.RawMessage(`"Person"`))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for lo := 0; lo < people; lo += chunk / degree {
		hi := min(lo+chunk/degree, people)
		err := s.write("bulk", p, func(st *state, b *batch) error {
			for i := lo; i < hi; i++ {
				for k := 1; k <= degree; k++ {
					j := (i*7919 + k*104729) % people
					v, _ := json.Marshal(Relationship{From: ids[i], To: ids[j], Relation: "knows"})
					bulkClaim(st, b, fmt.Sprintf("rel.p%d.r%d", i, k), SubjectSelf, KindRelationship, v)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func bulkClaim(st *state, b *batch, key, subject, kind string, value json.RawMessage) *claimRecord {
	cid, _ := identity.NewID("clm_")
	at := b.Now
	return st.newClaim(b, &Claim{
		ID: cid, Version: 1, Key: key, Value: value, Subject: subject, Kind: kind, Assertion: AssertionReported,
		Confirmation: Confirmation{Status: ConfirmationConfirmed, By: "owner", At: &at},
		Producer:     Producer{Authenticated: model.OwnerAuth}, Evidence: []Evidence{}, RecordedAt: at,
		Sensitivity: SensitivityStandard, Restrictions: []Restriction{}, WrittenBy: WrittenByUser,
	}, []string{})
}

// BulkSummaries derives n current summaries from parent, in writes of a
// few thousand: the first hundred from parent itself, each later one from
// an earlier summary (a tree of fan-out 100).
func (s *Service) BulkSummaries(p Principal, parent string, n int) error {
	refs := make([]string, n)
	const chunk = 2000
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		err := s.write("bulk", p, func(st *state, b *batch) error {
			for i := lo; i < hi; i++ {
				from := parent
				if i >= 100 {
					from = refs[i/100-1]
				}
				id, _ := identity.NewID("sum_")
				sm := &Summary{ID: id, Version: 1, Value: json.RawMessage(`"s"`), DerivedFrom: []string{from},
					Restrictions: []Restriction{}, Sensitivity: SensitivityStandard, Status: SummaryCurrent,
					Producer: &model.OwnerAuth, CreatedAt: b.Now, Revision: b.NextRevision()}
				refs[i] = sm.Ref()
				st.SetSummary(sm)
				b.Put(engine.BucketSummaries, id, sm)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RollReceipts rolls the receipts older than the retention into a
// checkpoint now, as the hourly maintenance does.
func (s *Service) RollReceipts() (uint64, error) { return s.eng.RollReceipts() }

// BucketCheckpoints and BucketSets name the checkpoints' and disclosed
// sets' buckets.
const (
	BucketCheckpoints = engine.BucketCheckpoints
	BucketSets        = engine.BucketSets
)

// SetExportCutHook makes f run once an export in parts or a backup has
// taken its cut of the view, with the journal free.
func (s *Service) SetExportCutHook(f func()) { s.mig.SetAfterCut(f) }

// ReadBundle opens a bundle as the import will (owner only), for tests.
func (s *Service) ReadBundle(p Principal, raw []byte) (BundleManifest, BundleRecords, error) {
	return s.mig.ReadBundle(p, raw)
}

// AddLegacyConsumer registers consumer name with status as a vault written
// before lookalike names were refused could hold it: no name check.
func (s *Service) AddLegacyConsumer(p Principal, name, secret, status string) error {
	hash, err := s.hashSecret([]byte(secret))
	if err != nil {
		return err
	}
	return s.write("consumer.legacy", p, func(st *state, b *batch) error {
		c := &Consumer{ID: "con_legacy" + name, Name: name, Status: status, SecretHash: hash, CreatedAt: b.Now}
		st.Consumers[name] = c
		b.Put(engine.BucketConsumers, c.ID, c)
		return nil
	})
}

// CommitFailingAfterChange commits a job that breaks "validate before you
// mutate": it publishes an active claim under key (taking a revision and
// staging its write), then fails with KindInvalid.
func (s *Service) CommitFailingAfterChange(p Principal, key string) error {
	return s.write("test", p, func(st *state, b *batch) error {
		bulkClaim(st, b, key, SubjectSelf, "fact", json.RawMessage(`"half-applied"`))
		return model.Fail("test", KindInvalid, "refused after changing the view")
	})
}

// The grammars of keys, key patterns and purposes as the core checks them,
// for the test that holds them to the schema's.
var (
	ValidKey     = model.ValidKey
	ValidPattern = validPattern
	ValidPurpose = validPurpose
)

// WithSnapshotTuning makes the journal of the Service c configures start
// a claim metas snapshot when more than max(dirtyMin, claims/share) claims
// were written since the last, in chunks of about chunkBytes.
func WithSnapshotTuning(dirtyMin, share, chunkBytes int) func(c *Config) {
	return func(c *Config) {
		c.test.Snap = snapTuning{DirtyMin: dirtyMin, DirtyShare: share, ChunkBytes: chunkBytes}
	}
}

// WithCheckTuning makes Check of the Service c configures compare chunk
// claim metas under one read lock of the view, and run pause with "graph"
// before it compares the graph, with "claims" between two chunks and with
// "cut" when a cut waits for a group in flight (nil: none).
func WithCheckTuning(chunk int, pause func(stage string)) func(c *Config) {
	return func(c *Config) { c.test.CheckChunk, c.test.CheckPause = chunk, pause }
}

// WithHeldHook makes the graph worker of the Service c configures run fn
// with the number of deltas it has collected while a check holds the
// graph, each time it grows.
func WithHeldHook(fn func(collected int)) func(c *Config) {
	return func(c *Config) { c.test.Held = fn }
}

// WithGraphWaitHook makes the Service c configures run fn with the
// operation's name when a check, graph rebuild or graph export waits for
// another one to finish with the graph.
func WithGraphWaitHook(fn func(op string)) func(c *Config) {
	return func(c *Config) { c.test.graphWait = fn }
}

// SetEventHook makes the Service c configures run fn whenever something a
// test may wait for happens (see testHooks.event): a job queued, the vault
// locked, a snapshot ended, a read waiting for a commit, an idle look.
func SetEventHook(c *Config, fn func()) { c.test.Event = fn }

// QueuedJobs is how many jobs wait for the journal to take them (behind a
// paused commit, say).
func (s *Service) QueuedJobs() int { return s.eng.Queued() }

// IdleLooks is how many times the idle watcher has looked at the unlocked
// vault.
func (s *Service) IdleLooks() uint64 { return s.idleLooks.Load() }

// ReadsWaiting is how many reads of the current view wait for a commit
// (0 while locked).
func (s *Service) ReadsWaiting() int {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		return 0
	}
	return s.st.Dur.Waiting()
}

// SnapshotRunning reports whether a claim metas snapshot of the current
// view is being written.
func (s *Service) SnapshotRunning() bool {
	s.life.RLock()
	defer s.life.RUnlock()
	s.st.Mu.RLock()
	defer s.st.Mu.RUnlock()
	return s.st.Snap.Started
}

// WithMaxApplyEdges sets how many edges the graph worker of the Service
// c configures joins into one graph commit.
func WithMaxApplyEdges(n int) func(c *Config) {
	return func(c *Config) { c.test.MaxApplyEdges = n }
}

// MaxGroup is how many jobs the journal commits as one group at most, and
// how many deltas wait for the graph worker before the journal waits.
const MaxGroup = engine.MaxGroup

// SetSnapshotHook sets a function run between a snapshot's cut and its
// switch (nil: none).
func (s *Service) SetSnapshotHook(fn func()) {
	if fn == nil {
		s.eng.SnapAfterCut.Store(nil)
		return
	}
	s.eng.SnapAfterCut.Store(&fn)
}

// SetIgnoreSnapshot makes the next unlocks read every claim meta, as for
// a store without a snapshot.
func (s *Service) SetIgnoreSnapshot(on bool) { s.ignoreSnapshot.Store(on) }

// WriteSnapshot writes a claim metas snapshot of the current view now.
func (s *Service) WriteSnapshot() error { return s.WriteSnapshotWith(nil) }

// WriteSnapshotWith writes a claim metas snapshot of the current view now,
// running afterCut (unless nil) between its cut and its switch. It takes
// its turn as a snapshot the journal starts would: once the one the
// journal started of the view, if any, has ended, and marked started, so
// that the journal starts none while it runs (one it started after an
// unlock or an erasure would otherwise write its chunks after this one, or
// run afterCut). No other snapshot runs while afterCut is set.
func (s *Service) WriteSnapshotWith(afterCut func()) error {
	s.life.RLock()
	st := s.st
	s.life.RUnlock()
	if st == nil {
		return fmt.Errorf("locked")
	}
	for {
		st.Mu.Lock()
		if !st.Snap.Started {
			st.Snap.Start()
			st.Mu.Unlock()
			break
		}
		ended := st.Snap.Ended
		st.Mu.Unlock()
		<-ended
	}
	s.eng.SnapMu.Lock() // the journal's snapshot stores its switch with it held
	defer s.eng.SnapMu.Unlock()
	if afterCut != nil {
		hook := s.eng.SnapAfterCut.Load()
		s.eng.SnapAfterCut.Store(&afterCut)
		defer s.eng.SnapAfterCut.Store(hook)
	}
	err := s.eng.SnapshotOf(st.view)
	if err != nil {
		st.Mu.Lock()
		st.Snap.End()
		st.Mu.Unlock()
	}
	return err
}

// SnapshotSettled waits until no claim metas snapshot holds snapMu: a
// snapshot the journal made current (its generation already seen by
// SnapshotStats) has then also stored its switch — the stale chunks and
// log entries deleted — which the view can show before the store has it.
func (s *Service) SnapshotSettled() {
	s.eng.SnapMu.Lock()
	//lint:ignore SA2001 an empty critical section: a wait for the holder
	s.eng.SnapMu.Unlock()
}

// ErasuresSnapshotted reports whether the current claim metas snapshot
// was cut after every erasure, and none is being written: the erased
// claims' metas are in no chunk.
func (s *Service) ErasuresSnapshotted() bool {
	s.life.RLock()
	defer s.life.RUnlock()
	s.st.Mu.RLock()
	defer s.st.Mu.RUnlock()
	return !s.st.Snap.Started && s.st.Snap.Erasures == s.st.Snap.Covered
}

// ErasureSnapshotOnItsWay reports whether a snapshot is being written, or
// the current one was cut after every erasure.
func (s *Service) ErasureSnapshotOnItsWay() bool {
	s.life.RLock()
	defer s.life.RUnlock()
	s.st.Mu.RLock()
	defer s.st.Mu.RUnlock()
	return s.st.Snap.Started || s.st.Snap.Erasures == s.st.Snap.Covered
}

// SnapshotStats reports the current snapshot's generation and counts, and
// how many claims were written since it.
func (s *Service) SnapshotStats() (gen uint64, chunks, claims, dirty int) {
	s.life.RLock()
	defer s.life.RUnlock()
	s.st.Mu.RLock()
	defer s.st.Mu.RUnlock()
	i := s.st.Snap.Info
	return i.Gen, i.Chunks, i.Claims, s.st.Snap.Pending()
}

// ViewDigest describes the loaded view of the claims: every record's meta
// by id, and the order of every index.
func (s *Service) ViewDigest() string {
	s.life.RLock()
	defer s.life.RUnlock()
	st := s.st
	st.Mu.RLock()
	defer st.Mu.RUnlock()
	var b strings.Builder
	ids := slices.Sorted(maps.Keys(st.Claims))
	for _, id := range ids {
		raw, _ := json.Marshal(st.Claims[id].Meta)
		fmt.Fprintf(&b, "%s\n", raw)
	}
	order := func(name string, x *claimIndex) {
		fmt.Fprintf(&b, "%s:", name)
		x.Ascend(func(r *claimRecord) bool {
			fmt.Fprintf(&b, " %s", r.Meta.ID)
			return true
		})
		b.WriteString("\n")
	}
	order("active", st.Active)
	for _, k := range slices.Sorted(maps.Keys(st.ByPersona)) {
		order("persona "+k, st.ByPersona[k])
	}
	for _, k := range slices.Sorted(maps.Keys(st.ByTier)) {
		order("tier "+k, st.ByTier[k])
	}
	for _, k := range slices.Sorted(maps.Keys(st.FieldOf)) {
		fmt.Fprintf(&b, "field %s: %s\n", k, st.FieldOf[k].Meta.ID)
	}
	fmt.Fprintf(&b, "categories: %v\n", st.Categories)
	for _, sub := range slices.Sorted(maps.Keys(st.BySubject)) {
		fmt.Fprintf(&b, "subject %s: %v\n", sub, slices.Sorted(maps.Keys(st.BySubject[sub])))
	}
	return b.String()
}

// WaitUnlockRoll waits for the receipt rolls that unlocks started to end.
func (s *Service) WaitUnlockRoll() { s.unlockRolls.Wait() }
