package custodian

import (
	"errors"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// The claim metas snapshot. The unlock needs every claim's meta (see
// claimMeta): read one stored value at a time — a bbolt lookup, a
// decryption and a JSON decoding per claim — that is seconds at a million
// claims. So the metas are also kept as a snapshot: every claim's meta in a
// compact binary form, active claims first in index order, in chunks of
// about a MiB that the store encrypts each as one value. The unlock reads
// the snapshot, then the metas written since it was taken, which the
// journal appends to a log (bucketMetaLog) as it writes them, in write
// order: at a million claims a copy under the claim's own id (as builds
// before kept them, in bucketMetaDirty) was a page of the store rewritten
// per write, scattered over the file; the log's new entries share the
// last page. When the log grows past a share of the vault
// (snapTuning), a new snapshot is written in the background and the
// log emptied of the entries it covers.
//
// The snapshot is only ever a faster way to read bucketClaimMeta: a store
// without one (or with one this version cannot read, or whose log it cannot
// trust) loads from the metas themselves, and the next snapshot replaces it.

// eraseWrittenSince adds to a group's writes the removal of every meta
// written since the snapshot of the claims the group erased (journal, st.mu
// held): each holds the claim's key. The log's entries the group stages go
// but the last of each claim (its tombstone's); those already stored are
// found in one pass over the log for the whole group, however many claims
// it erased (a replace import erases every claim in one job); an older
// build's copies go by id. Should the log be unreadable, they are left to
// the snapshot the erasures make due, with a warning. The group also sets
// metaSnapshotErased, so that a crash before that snapshot does not lose it.
func (s *Engine) eraseWrittenSince(st *State, writes []write) []write {
	erased := st.Snap.Erasing
	st.Snap.Erasing = nil
	writes = append(writes, write{Bucket: engine.BucketMeta, Key: engine.MetaSnapshotErased, Value: []byte("true")})
	// erasedIn is the claim whose logged meta v is, if the group erased it.
	erasedIn := func(v []byte) (string, bool) {
		id, _, _ := engine.SplitLogEntry(v)
		if !erased[string(id)] { // no copy of id made for the lookup
			return "", false
		}
		return string(id), true
	}
	last := map[string]int{}
	for i, w := range writes {
		if w.Bucket == engine.BucketMetaLog && w.Value != nil {
			if id, ok := erasedIn(w.Value); ok {
				last[id] = i
			}
		}
	}
	kept := writes[:0]
	for i, w := range writes {
		if w.Bucket == engine.BucketMetaLog && w.Value != nil {
			if id, ok := erasedIn(w.Value); ok && last[id] != i {
				continue
			}
		}
		kept = append(kept, w)
	}
	writes = kept
	if len(st.Snap.Legacy) > 0 {
		for id := range erased {
			writes = append(writes, write{Bucket: engine.BucketMetaDirty, Key: id})
		}
	}
	if err := s.store.View(func(tx Tx) error {
		return tx.ForEach(engine.BucketMetaLog, func(k string, v []byte) error {
			if _, ok := erasedIn(v); ok {
				writes = append(writes, write{Bucket: engine.BucketMetaLog, Key: k})
			}
			return nil
		})
	}); err != nil {
		s.log.Warn("erased claims' metas stay in the log of metas written since the snapshot until the next snapshot", "err", err)
	}
	return writes
}

// writeSnapshot writes a new snapshot of st's claim metas: the chunks in
// store transactions of their own, outside the journal, then a journal job
// that makes it current and empties the dirty list of the claims it holds
// as they stand. Writes go on meanwhile; a claim they change stays dirty.
// It gives up, leaving the current snapshot as it was, when st stops being
// the Service's state or the Service closes.
func (s *Engine) writeSnapshot(st *State) {
	defer s.wg.Done()
	defer s.hooks.fire() // after snapMu is let go
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if err := s.snapshotOf(st); err != nil {
		if !errors.Is(err, engine.ErrSnapshotStale) {
			s.log.Warn("claim metas snapshot not written; the next unlock reads every meta", "err", err)
		}
		st.Mu.Lock()
		st.Snap.End()
		if !errors.Is(err, engine.ErrSnapshotStale) {
			st.Snap.FailedAt = max(1, st.Snap.Pending())
		}
		st.Mu.Unlock()
	}
}

func (s *Engine) snapshotOf(st *State) error {
	current := func() bool { return s.whileCurrent(st, func() error { return nil }) == nil }
	if !current() {
		return engine.ErrSnapshotStale
	}
	// The cut: every record as the view holds it now, active ones in
	// index order; and the log's end: the snapshot holds what every entry
	// before it says.
	st.Mu.RLock()
	prev, lastGen, erasures := st.Snap.Info, st.Snap.LastGen, st.Snap.Erasures
	records := make([]*claimRecord, 0, len(st.Claims))
	st.Active.Ascend(func(r *claimRecord) bool {
		records = append(records, r)
		return true
	})
	for _, r := range st.Claims {
		if r.Meta.Status != StatusActive {
			records = append(records, r)
		}
	}
	cut := st.Snap.LogNext
	st.Mu.RUnlock()
	if f := s.snapAfterCut.Load(); f != nil {
		(*f)()
	}

	gen := max(prev.Gen, lastGen) + 1 // never over the chunks of one the store records
	written, err := engine.WriteChunks(s.store, engine.BucketMetaSnap, gen, len(records), func(i int) *claimMeta { return &records[i].Meta },
		s.hooks.snap.ChunkBytes, current, s.stop)
	if err != nil {
		return err
	}
	// What else the bucket holds (the previous snapshot, or chunks of one
	// an earlier attempt left) goes with the switch.
	var stale []string
	if err := s.store.View(func(tx Tx) error {
		each := tx.ForEach
		if lr, ok := tx.(LazyRanger); ok { // keys only: no chunk opened
			each = func(bucket string, fn func(string, []byte) error) error {
				return lr.ForEachLazy(bucket, func(k string, _ func() ([]byte, error)) error { return fn(k, nil) })
			}
		}
		return each(engine.BucketMetaSnap, func(k string, _ []byte) error {
			if !written[k] {
				stale = append(stale, k)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	return s.whileCurrent(st, func() error {
		return s.queue(&job{st: st, apply: func(b *batch) error {
			if st.Snap.Info != prev {
				return model.Internalf("snapshot", "another snapshot became current")
			}
			for seq := st.Snap.LogFirst; seq < cut; seq++ {
				b.Del(engine.BucketMetaLog, engine.ReceiptKey(seq))
			}
			st.Snap.LogFirst = max(st.Snap.LogFirst, cut)
			for _, id := range st.Snap.Legacy {
				b.Del(engine.BucketMetaDirty, id)
			}
			st.Snap.Legacy = nil
			for _, k := range stale {
				b.Del(engine.BucketMetaSnap, k)
			}
			st.Snap.Info = snapshotInfo{Gen: gen, Chunks: len(written), Claims: len(records)}
			st.Snap.LastGen = gen
			st.Snap.FailedAt = 0
			st.Snap.Covered = erasures
			if st.Snap.Erasures == erasures {
				b.Del(engine.BucketMeta, engine.MetaSnapshotErased)
			}
			b.Put(engine.BucketMeta, engine.MetaSnapshotLog, st.Snap.Info)
			st.Snap.End()
			return nil
		}})
	})
}
