package custodian

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	fastjson "github.com/segmentio/encoding/json"

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

const (
	bucketMetaSnap = "claim_meta_snap" // generation/chunk → metas, binary
	bucketMetaLog  = "claim_meta_log"  // %016x sequence → claim id, '\n', its meta written since the snapshot (or dirtyGone)
	// metaSnapshotLog records the current snapshot of a build with the log
	// (this one); metaLogRevision is the store revision as of its last
	// group: a store whose revision is past it was written by a build
	// that does not keep the log.
	metaSnapshotLog = "claim_meta_snapshot_log"
	metaLogRevision = "claim_meta_log_revision"
	// metaSnapshotErased is set by an erasure and removed by the first
	// snapshot cut after it: the current snapshot may hold an erased
	// claim's key, subject, tier and kind. An unlock that finds it (a crash
	// came before that snapshot) writes one at once.
	metaSnapshotErased = "claim_meta_snapshot_erased"

	// Builds before the log kept a copy of each meta written since the
	// snapshot under its claim id, their snapshot's record and their
	// revision marker under these names. This one reads them (a store
	// it upgrades): the unlock's commit moves the record to its own name
	// and drops the marker, the first snapshot removes the copies. A
	// build before the log that opens a store this one wrote finds no
	// record of its own, and reads every meta.
	bucketMetaDirty  = "claim_meta_dirty" // claim id → its meta written since the snapshot (a copy)
	metaSnapshot     = "claim_meta_snapshot"
	metaSnapRevision = "claim_meta_dirty_revision"
)

// snapTuning sets when the journal starts a new snapshot: when more than
// max(dirtyMin, claims/dirtyShare) claims were written since the last; and
// chunkBytes, a chunk's target size. Tests lower them (testHooks.snap).
type snapTuning struct {
	dirtyMin, dirtyShare, chunkBytes int
}

// orDefaults returns t with its zero fields set to the defaults.
func (t snapTuning) orDefaults() snapTuning {
	if t.dirtyMin == 0 {
		t.dirtyMin = 4096
	}
	if t.dirtyShare == 0 {
		t.dirtyShare = 16
	}
	if t.chunkBytes == 0 {
		t.chunkBytes = 1 << 20
	}
	return t
}

// snapshotInfo is what bucketMeta records of the current snapshot.
type snapshotInfo struct {
	Gen    uint64 `json:"gen"`
	Chunks int    `json:"chunks"`
	Claims int    `json:"claims"`
}

func snapKey(gen uint64, chunk int) string { return engine.SnapKey(gen, chunk) }

// snapState is the state's part: the current snapshot and the metas
// written since it. The journal keeps it, with st.mu held.
type snapState struct {
	info    snapshotInfo // the current snapshot (Gen 0: none the load could read)
	lastGen uint64       // the highest generation the store records
	// The log's entries are logFirst up to logNext (excluded).
	logFirst, logNext uint64
	// legacy are the claim ids a build before the log listed in
	// bucketMetaDirty: the next snapshot removes them.
	legacy []string
	// erasing are the claims the group being written erased (see
	// eraseWrittenSince).
	erasing map[string]bool
	started bool // a snapshot is being written for this state
	// ended, while started, is closed when that snapshot ends: made
	// current (its goroutine holds snapMu until that is stored) or given
	// up. A test's snapshot waits on it for its turn.
	ended chan struct{}
	// erasures counts the claims erased; covered, those erased before
	// the current snapshot's cut. A snapshot from before an erasure
	// holds the claim's key, subject, tier and kind: the next is due at
	// once.
	erasures, covered uint64
	// failedAt is how many metas were written since the snapshot when
	// one last failed: the next waits for as many more.
	failedAt int
}

// pending is how many metas were written since the snapshot: the log's
// entries (a claim written twice counts twice: the unlock reads both) and
// an older build's list.
func (sn *snapState) pending() int {
	return int(sn.logNext-sn.logFirst) + len(sn.legacy)
}

// noteMetaWrites appends to the log, staged in *writes, a copy of each meta
// ws write (journal, st.mu held): the unlock then reads the metas written
// since the snapshot in one pass over the log, not one lookup each in
// bucketClaimMeta (on a cold page cache, a random read of the store file
// each).
func (st *State) noteMetaWrites(ws []write, writes *[]write) {
	for _, w := range ws {
		if w.bucket != bucketClaimMeta {
			continue
		}
		v := w.value
		if v == nil {
			v = []byte(dirtyGone)
		}
		*writes = append(*writes, write{bucket: bucketMetaLog, key: receiptKey(st.snap.logNext), value: logEntry(w.key, v), append: true})
		st.snap.logNext++
	}
}

// logEntry is the value of a log entry: the claim id, a newline, and the
// meta (its JSON, or dirtyGone). splitLogEntry takes it apart; ok is false
// for a value that is not one.
func logEntry(id string, meta []byte) []byte {
	e := make([]byte, 0, len(id)+1+len(meta))
	return append(append(append(e, id...), '\n'), meta...)
}

func splitLogEntry(v []byte) (id, meta []byte, ok bool) {
	id, meta, ok = bytes.Cut(v, []byte{'\n'})
	return id, meta, ok && len(id) > 0 && len(meta) > 0
}

// eraseWrittenSince adds to a group's writes the removal of every meta
// written since the snapshot of the claims the group erased (journal, st.mu
// held): each holds the claim's key. The log's entries the group stages go
// but the last of each claim (its tombstone's); those already stored are
// found in one pass over the log for the whole group, however many claims
// it erased (a replace import erases every claim in one job); an older
// build's copies go by id. Should the log be unreadable, they are left to
// the snapshot the erasures make due, with a warning. The group also sets
// metaSnapshotErased, so that a crash before that snapshot does not lose it.
func (s *Service) eraseWrittenSince(st *state, writes []write) []write {
	erased := st.snap.erasing
	st.snap.erasing = nil
	writes = append(writes, write{bucket: bucketMeta, key: metaSnapshotErased, value: []byte("true")})
	// erasedIn is the claim whose logged meta v is, if the group erased it.
	erasedIn := func(v []byte) (string, bool) {
		id, _, _ := splitLogEntry(v)
		if !erased[string(id)] { // no copy of id made for the lookup
			return "", false
		}
		return string(id), true
	}
	last := map[string]int{}
	for i, w := range writes {
		if w.bucket == bucketMetaLog && w.value != nil {
			if id, ok := erasedIn(w.value); ok {
				last[id] = i
			}
		}
	}
	kept := writes[:0]
	for i, w := range writes {
		if w.bucket == bucketMetaLog && w.value != nil {
			if id, ok := erasedIn(w.value); ok && last[id] != i {
				continue
			}
		}
		kept = append(kept, w)
	}
	writes = kept
	if len(st.snap.legacy) > 0 {
		for id := range erased {
			writes = append(writes, write{bucket: bucketMetaDirty, key: id})
		}
	}
	if err := s.store.View(func(tx Tx) error {
		return tx.ForEach(bucketMetaLog, func(k string, v []byte) error {
			if _, ok := erasedIn(v); ok {
				writes = append(writes, write{bucket: bucketMetaLog, key: k})
			}
			return nil
		})
	}); err != nil {
		s.log.Warn("erased claims' metas stay in the log of metas written since the snapshot until the next snapshot", "err", err)
	}
	return writes
}

// Values of a log entry or of bucketMetaDirty other than a meta's JSON: the
// meta was removed; or (bucketMetaDirty of a build that kept no copy) look
// it up.
const (
	dirtyGone   = "-"
	dirtyLookUp = "1"
)

// snapshotDue reports whether a new snapshot should be written by tune,
// and marks it started if so (journal, st.mu held).
func (st *State) snapshotDue(tune snapTuning) bool {
	if st.snap.started || st.broken {
		return false
	}
	threshold := max(tune.dirtyMin, len(st.claims)/tune.dirtyShare)
	pending := st.snap.pending()
	switch {
	case st.snap.failedAt > 0 && pending <= st.snap.failedAt+threshold:
		return false
	case st.snap.info.Gen != 0 && st.snap.erasures == st.snap.covered && pending <= threshold:
		return false
	}
	st.snap.start()
	return true
}

// start marks a snapshot started, and end marks it ended (st.mu held).
func (sn *snapState) start() {
	sn.started = true
	sn.ended = make(chan struct{})
}

func (sn *snapState) end() {
	sn.started = false
	if sn.ended != nil {
		close(sn.ended)
		sn.ended = nil
	}
}

// writeSnapshot writes a new snapshot of st's claim metas: the chunks in
// store transactions of their own, outside the journal, then a journal job
// that makes it current and empties the dirty list of the claims it holds
// as they stand. Writes go on meanwhile; a claim they change stays dirty.
// It gives up, leaving the current snapshot as it was, when st stops being
// the Service's state or the Service closes.
func (s *Service) writeSnapshot(st *state) {
	defer s.wg.Done()
	defer s.test.fire() // after snapMu is let go
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if err := s.snapshotOf(st); err != nil {
		if !errors.Is(err, errSnapshotStale) {
			s.log.Warn("claim metas snapshot not written; the next unlock reads every meta", "err", err)
		}
		st.mu.Lock()
		st.snap.end()
		if !errors.Is(err, errSnapshotStale) {
			st.snap.failedAt = max(1, st.snap.pending())
		}
		st.mu.Unlock()
	}
}

var errSnapshotStale = engine.ErrSnapshotStale

func (s *Service) snapshotOf(st *state) error {
	current := func() bool {
		s.life.RLock()
		defer s.life.RUnlock()
		return s.st == st
	}
	if !current() {
		return errSnapshotStale
	}
	// The cut: every record as the view holds it now, active ones in
	// index order; and the log's end: the snapshot holds what every entry
	// before it says.
	st.mu.RLock()
	prev, lastGen, erasures := st.snap.info, st.snap.lastGen, st.snap.erasures
	records := make([]*claimRecord, 0, len(st.claims))
	st.active.Ascend(func(r *claimRecord) bool {
		records = append(records, r)
		return true
	})
	for _, r := range st.claims {
		if r.meta.Status != StatusActive {
			records = append(records, r)
		}
	}
	cut := st.snap.logNext
	st.mu.RUnlock()
	if f := s.snapAfterCut.Load(); f != nil {
		(*f)()
	}

	gen := max(prev.Gen, lastGen) + 1 // never over the chunks of one the store records
	written, err := engine.WriteChunks(s.store, bucketMetaSnap, gen, len(records), func(i int) *claimMeta { return &records[i].meta },
		s.test.snap.chunkBytes, current, s.stop)
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
		return each(bucketMetaSnap, func(k string, _ []byte) error {
			if !written[k] {
				stale = append(stale, k)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st != st {
		return errSnapshotStale
	}
	return s.commit(st, func(st *state, b *batch) error {
		if st.snap.info != prev {
			return model.Internalf("snapshot", "another snapshot became current")
		}
		for seq := st.snap.logFirst; seq < cut; seq++ {
			b.del(bucketMetaLog, receiptKey(seq))
		}
		st.snap.logFirst = max(st.snap.logFirst, cut)
		for _, id := range st.snap.legacy {
			b.del(bucketMetaDirty, id)
		}
		st.snap.legacy = nil
		for _, k := range stale {
			b.del(bucketMetaSnap, k)
		}
		st.snap.info = snapshotInfo{Gen: gen, Chunks: len(written), Claims: len(records)}
		st.snap.lastGen = gen
		st.snap.failedAt = 0
		st.snap.covered = erasures
		if st.snap.erasures == erasures {
			b.del(bucketMeta, metaSnapshotErased)
		}
		b.put(bucketMeta, metaSnapshotLog, st.snap.info)
		st.snap.end()
		return nil
	})
}

// snapSlab is how many records decodeSnapChunk allocates at once.
const snapSlab = 256

// decodeSnapChunk decodes a chunk into records, but for the metas whose
// ids skip has, and counts the metas it decoded. The records are allocated
// snapSlab at a time, and their strings copied into shared blocks (see
// engine.ChunkDecoder). At 1,000,000 claims a record and two or three
// strings per claim, each its own allocation, were about 2.6 million heap
// objects that every collection marked one by one: 0.7 s of CPU for the
// collection after the unlock, 0.9-1.2 s for each collection under owner
// writes, a quarter of the daemon's CPU. A slab or a block stays in memory
// while one of its records or strings does: never more than the load
// allocated, as records are replaced, not changed.
func decodeSnapChunk(chunk []byte, cache *claimCache, memo map[string]string, skip map[string]*claimRecord) (out []*claimRecord, n int, err error) {
	d, err := engine.NewChunkDecoder(chunk, memo)
	if err != nil {
		return nil, 0, err
	}
	var slab []claimRecord
	for d.More() {
		mark := d.Mark()
		var m claimMeta
		if err := d.Next(&m); err != nil {
			return nil, 0, err
		}
		n++
		if _, ok := skip[m.ID]; ok {
			d.Rewind(mark) // its strings were the last copied
			continue
		}
		if len(slab) == 0 {
			slab = make([]claimRecord, snapSlab)
		}
		r := &slab[0]
		slab = slab[1:]
		r.meta, r.cache = m, cache
		out = append(out, r)
	}
	return out, n, nil
}

// loadSnapshot reads the claim records from the snapshot and the metas
// written since. ok is false when the store has no snapshot this version
// reads (the caller then loads every meta); an error is a store that
// failed. active holds the active records in index order. Either way it
// notes in st.snap what the next snapshot replaces.
func (st *State) loadSnapshot(tx Tx) (records, active []*claimRecord, ok bool, err error) {
	var storeRev, logRev, oldRev uint64
	for _, m := range []struct {
		key string
		v   *uint64
	}{{metaRevision, &storeRev}, {metaLogRevision, &logRev}, {metaSnapRevision, &oldRev}} {
		if *m.v, err = loadMarker(tx, m.key); err != nil {
			return nil, nil, false, err
		}
	}
	if _, found, err := tx.Get(bucketMeta, metaSnapshotErased); err != nil {
		return nil, nil, false, err
	} else if found {
		st.snap.erasures = 1 // none covered: the unlock's commit starts a snapshot
	}
	written, logKeys, badEntry, err := st.readWrittenSince(tx)
	if err != nil {
		return nil, nil, false, err
	}
	info, ok, err := st.chooseSnapshot(tx, storeRev, logRev, oldRev, logKeys, badEntry)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	if info.Chunks < 0 || info.Chunks > 1<<24 || info.Claims < 0 {
		st.loadNotes = append(st.loadNotes, fmt.Sprintf("claim metas snapshot unreadable: %d chunks, %d claims", info.Chunks, info.Claims))
		return nil, nil, false, nil
	}
	dirty, err := st.decodeWrittenSince(tx, written)
	if err != nil {
		return nil, nil, false, err
	}
	records, bad := st.decodeSnapshot(tx, info, dirty)
	if bad != nil {
		st.loadNotes = append(st.loadNotes, "claim metas snapshot unreadable: "+bad.Error())
		return nil, nil, false, nil
	}
	st.snap.info = info
	kept, active := mergeWrittenSince(records, dirty)
	return kept, active, true, nil
}

// sinceSnapshot is a meta written since the snapshot, as the log or an
// older build's list holds it.
type sinceSnapshot struct {
	id  string
	raw []byte // nil: look it up (an older build's list)
}

// readWrittenSince reads the metas written since the snapshot: an older
// build's list, then the log, in write order; logKeys are the log's keys,
// badEntry the first of them this build cannot read (the log is then not
// trusted).
func (st *State) readWrittenSince(tx Tx) (written []sinceSnapshot, logKeys []string, badEntry string, err error) {
	if err := tx.ForEach(bucketMetaDirty, func(id string, raw []byte) error {
		st.snap.legacy = append(st.snap.legacy, id)
		if string(raw) == dirtyLookUp {
			raw = nil
		}
		written = append(written, sinceSnapshot{id: id, raw: raw}) // the value belongs to fn (see Tx)
		return nil
	}); err != nil {
		return nil, nil, "", err
	}
	if err := tx.ForEach(bucketMetaLog, func(k string, v []byte) error {
		seq, err := strconv.ParseUint(k, 16, 64)
		id, raw, ok := splitLogEntry(v)
		if err != nil || len(k) != 16 || !ok {
			if badEntry == "" {
				badEntry = k
			}
			logKeys = append(logKeys, k) // dropped with the rest (see below)
			return nil
		}
		if len(logKeys) == 0 {
			st.snap.logFirst = seq
		}
		st.snap.logNext = seq + 1
		logKeys = append(logKeys, k)
		written = append(written, sinceSnapshot{id: string(id), raw: raw})
		return nil
	}); err != nil {
		return nil, nil, "", err
	}
	if len(logKeys) == 0 {
		st.snap.logFirst = st.snap.logNext
	}

	return written, logKeys, badEntry, nil
}

// chooseSnapshot decides which snapshot record goes with the metas
// written since, given the store's revision markers, and notes in
// st.upgrades what the unlock's commit changes of the records; ok is
// false when none does (the metas themselves are read).
func (st *State) chooseSnapshot(tx Tx, storeRev, logRev, oldRev uint64, logKeys []string, badEntry string) (info snapshotInfo, ok bool, err error) {
	// Which snapshot record goes with these: this build's while it wrote
	// last (or an older build's, there being none of this build's yet),
	// an older build's while it wrote last and left no log.
	readRecord := func(key string) (snapshotInfo, []byte, error) {
		var info snapshotInfo
		raw, found, err := tx.Get(bucketMeta, key)
		if err != nil || !found {
			return info, nil, err
		}
		if err := json.Unmarshal(raw, &info); err != nil { // unreadable is not a failed store here
			st.loadNotes = append(st.loadNotes, "claim metas snapshot unreadable: "+err.Error())
			return snapshotInfo{}, nil, nil
		}
		st.snap.lastGen = max(st.snap.lastGen, info.Gen)
		return info, raw, nil
	}
	ours, oursRaw, err := readRecord(metaSnapshotLog)
	if err != nil {
		return snapshotInfo{}, false, err
	}
	older, olderRaw, err := readRecord(metaSnapshot)
	if err != nil {
		return snapshotInfo{}, false, err
	}
	var chosen []byte // the record info is read from
	var fromOlder bool
	switch {
	case badEntry == "" && logRev == storeRev && oursRaw != nil:
		info, chosen = ours, oursRaw
	case badEntry == "" && (logRev == storeRev || oldRev == storeRev && len(logKeys) == 0):
		info, chosen, fromOlder = older, olderRaw, olderRaw != nil
	default:
		// A build without the log wrote to the store after this one (or
		// one that kept no list at all), or the log holds an entry this
		// build cannot read: neither snapshot is sure to hold, with the
		// log, every write. Both records and the log go with the unlock's
		// commit, so that none is taken for current once this build
		// writes; the metas themselves are read.
		if badEntry != "" {
			st.loadNotes = append(st.loadNotes, fmt.Sprintf("claim metas snapshot passed over: the log of metas written since holds an unreadable entry (%q)", badEntry))
		} else {
			st.loadNotes = append(st.loadNotes, fmt.Sprintf("claim metas snapshot passed over: the store is at revision %d, the log of metas written since at %d (an older phc wrote to it)", storeRev, logRev))
		}
		st.upgrades = append(st.upgrades,
			write{bucket: bucketMeta, key: metaSnapshotLog},
			write{bucket: bucketMeta, key: metaSnapshot},
			write{bucket: bucketMeta, key: metaSnapRevision})
		for _, k := range logKeys {
			st.upgrades = append(st.upgrades, write{bucket: bucketMetaLog, key: k})
		}
		st.snap.logFirst = st.snap.logNext
		return snapshotInfo{}, false, nil
	}
	// The older build's record, when there is one, becomes this build's
	// (the older list is read either way) with the unlock's commit, and
	// its marker goes: were they left until this build's first snapshot,
	// an older build opening the store meanwhile would, after one write
	// of its own, take them for current and miss this build's writes. A
	// record of this build's passed over here goes the same way.
	switch {
	case fromOlder:
		st.upgrades = append(st.upgrades, write{bucket: bucketMeta, key: metaSnapshotLog, value: olderRaw})
	case oursRaw != nil && chosen == nil:
		st.upgrades = append(st.upgrades, write{bucket: bucketMeta, key: metaSnapshotLog})
	}
	if olderRaw != nil {
		st.upgrades = append(st.upgrades,
			write{bucket: bucketMeta, key: metaSnapshot},
			write{bucket: bucketMeta, key: metaSnapRevision})
	}
	if chosen == nil || st.ignoreSnapshot {
		return snapshotInfo{}, false, nil
	}
	return info, true, nil
}

// decodeWrittenSince decodes the metas written since the snapshot, which
// replace the snapshot's: of a claim written more than once since, only
// the last. A claim whose meta is gone maps to nil.
func (st *State) decodeWrittenSince(tx Tx, written []sinceSnapshot) (map[string]*claimRecord, error) {
	// The metas written since replace the snapshot's, whose copies are
	// not even decoded into records; of a claim written more than once
	// since, only the last is decoded.
	last := make(map[string]int, len(written))
	for i, w := range written {
		last[w.id] = i
	}
	dirty := make(map[string]*claimRecord, len(last))
	for i, w := range written {
		if last[w.id] != i {
			continue
		}
		raw, found := w.raw, string(w.raw) != dirtyGone
		if raw == nil {
			var err error
			if raw, found, err = tx.Get(bucketClaimMeta, w.id); err != nil {
				return nil, err
			}
		}
		dirty[w.id] = nil // a meta no longer there: the claim goes
		if found {
			m := new(claimMeta)
			if err := fastjson.Unmarshal(raw, m); err != nil {
				return nil, fmt.Errorf("claim meta %s: %w", w.id, err)
			}
			m.ID = w.id
			engine.InternMeta(m)
			dirty[w.id] = &claimRecord{meta: *m, cache: st.cache}
		}
	}
	return dirty, nil
}

// decodeSnapshot reads the snapshot's chunks and decodes them into
// records, but for the claims of dirty; an error says why the snapshot
// cannot be used (the metas are still there to read).
func (st *State) decodeSnapshot(tx Tx, info snapshotInfo, dirty map[string]*claimRecord) ([]*claimRecord, error) {
	// Chunks are opened here, one after another (a MiB each: decryption
	// is the cheap part), and decoded on every core.
	workers := max(1, runtime.GOMAXPROCS(0))
	parts := make([][]*claimRecord, info.Chunks)
	counts := make([]int, info.Chunks)
	errs := make([]error, info.Chunks)
	todo := make(chan int, workers)
	raws := make([][]byte, info.Chunks)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			memo := map[string]string{}
			for i := range todo {
				parts[i], counts[i], errs[i] = decodeSnapChunk(raws[i], st.cache, memo, dirty)
				raws[i] = nil
			}
		})
	}
	var getErr error
	for i := range info.Chunks {
		v, found, err := tx.Get(bucketMetaSnap, snapKey(info.Gen, i))
		if err != nil || !found {
			getErr = err
			if err == nil {
				getErr = fmt.Errorf("chunk %d missing", i)
			}
			break
		}
		raws[i] = v
		todo <- i
	}
	close(todo)
	wg.Wait()
	bad := getErr // the metas are still there to read
	n := 0
	for i := range parts {
		if bad == nil && errs[i] != nil {
			bad = fmt.Errorf("chunk %d: %w", i, errs[i])
		}
		n += counts[i]
	}
	if bad == nil && n != info.Claims {
		bad = fmt.Errorf("%d claims, not %d", n, info.Claims)
	}
	if bad != nil {
		return nil, bad
	}
	records := make([]*claimRecord, 0, n+len(dirty))
	for _, p := range parts {
		records = append(records, p...)
	}
	return records, nil
}

// mergeWrittenSince returns the snapshot's records with those written
// since it in place of theirs, and the active ones in index order.
func mergeWrittenSince(records []*claimRecord, dirty map[string]*claimRecord) (kept, active []*claimRecord) {
	if len(dirty) == 0 {
		for _, r := range records {
			if r.meta.Status != StatusActive {
				break // active ones come first
			}
			active = append(active, r)
		}
		return records, active
	}
	kept = records
	var old []*claimRecord // the snapshot's active records still current, in order
	for _, r := range records {
		if r.meta.Status != StatusActive {
			break // active ones come first
		}
		old = append(old, r)
	}
	var fresh []*claimRecord // the dirty active records, in index order
	for _, r := range dirty {
		if r == nil {
			continue
		}
		kept = append(kept, r)
		if r.meta.Status == StatusActive {
			fresh = append(fresh, r)
		}
	}
	slices.SortFunc(fresh, recordCmp)
	active = make([]*claimRecord, 0, len(old)+len(fresh))
	i, j := 0, 0
	for i < len(old) || j < len(fresh) {
		if j == len(fresh) || i < len(old) && recordLess(old[i], fresh[j]) {
			active = append(active, old[i])
			i++
		} else {
			active = append(active, fresh[j])
			j++
		}
	}
	return kept, active
}

// loadMarker reads a revision number of bucketMeta (0 when absent).
func loadMarker(tx Tx, key string) (uint64, error) {
	var v uint64
	_, err := loadMetaJSON(tx, key, &v)
	return v, err
}
