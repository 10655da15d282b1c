package engine

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

	"github.com/phc-project/phc/custodian/internal/model"
)

// The claim metas snapshot. The unlock needs every claim's meta (see
// ClaimMeta): read one stored value at a time — a bbolt lookup, a
// decryption and a JSON decoding per claim — that is seconds at a million
// claims. So the metas are also kept as a snapshot: every claim's meta in a
// compact binary form, active claims first in index order, in chunks of
// about a MiB that the store encrypts each as one value. The unlock reads
// the snapshot, then the metas written since it was taken, which the
// journal appends to a log (BucketMetaLog) as it writes them, in write
// order: at a million claims a copy under the claim's own id (as builds
// before kept them, in bucketMetaDirty) was a page of the store rewritten
// per write, scattered over the file; the log's new entries share the
// last page. When the log grows past a share of the vault
// (SnapTuning), a new snapshot is written in the background and the
// log emptied of the entries it covers.
//
// The snapshot is only ever a faster way to read BucketClaimMeta: a store
// without one (or with one this version cannot read, or whose log it cannot
// trust) loads from the metas themselves, and the next snapshot replaces it.

const (
	BucketMetaSnap = "claim_meta_snap" // generation/chunk → metas, binary
	BucketMetaLog  = "claim_meta_log"  // %016x sequence → claim id, '\n', its meta written since the snapshot (or dirtyGone)
	// MetaSnapshotLog records the current snapshot of a build with the log
	// (this one); metaLogRevision is the store revision as of its last
	// group: a store whose revision is past it was written by a build
	// that does not keep the log.
	MetaSnapshotLog = "claim_meta_snapshot_log"
	MetaLogRevision = "claim_meta_log_revision"
	// MetaSnapshotErased is set by an erasure and removed by the first
	// snapshot cut after it: the current snapshot may hold an erased
	// claim's key, subject, tier and kind. An unlock that finds it (a crash
	// came before that snapshot) writes one at once.
	MetaSnapshotErased = "claim_meta_snapshot_erased"

	// Builds before the log kept a copy of each meta written since the
	// snapshot under its claim id, their snapshot's record and their
	// revision marker under these names. This one reads them (a store
	// it upgrades): the unlock's commit moves the record to its own name
	// and drops the marker, the first snapshot removes the copies. A
	// build before the log that opens a store this one wrote finds no
	// record of its own, and reads every meta.
	BucketMetaDirty  = "claim_meta_dirty" // claim id → its meta written since the snapshot (a copy)
	metaSnapshot     = "claim_meta_snapshot"
	metaSnapRevision = "claim_meta_dirty_revision"
)

// SnapTuning sets when the journal starts a new snapshot: when more than
// max(dirtyMin, claims/dirtyShare) claims were written since the last; and
// chunkBytes, a chunk's target size. Tests lower them (Hooks.Snap).
type SnapTuning struct {
	DirtyMin, DirtyShare, ChunkBytes int
}

// OrDefaults returns t with its zero fields set to the defaults.
func (t SnapTuning) OrDefaults() SnapTuning {
	if t.DirtyMin == 0 {
		t.DirtyMin = 4096
	}
	if t.DirtyShare == 0 {
		t.DirtyShare = 16
	}
	if t.ChunkBytes == 0 {
		t.ChunkBytes = 1 << 20
	}
	return t
}

// SnapshotInfo is what bucketMeta records of the current snapshot.
type SnapshotInfo struct {
	Gen    uint64 `json:"gen"`
	Chunks int    `json:"chunks"`
	Claims int    `json:"claims"`
}

func snapKey(gen uint64, chunk int) string { return SnapKey(gen, chunk) }

// snapState is the state's part: the current snapshot and the metas
// written since it. The journal keeps it, with st.mu held.
type snapState struct {
	Info    SnapshotInfo // the current snapshot (Gen 0: none the load could read)
	LastGen uint64       // the highest generation the store records
	// The log's entries are logFirst up to logNext (excluded).
	LogFirst, LogNext uint64
	// Legacy are the claim ids a build before the log listed in
	// bucketMetaDirty: the next snapshot removes them.
	Legacy []string
	// Erasing are the claims the group being written erased (see
	// eraseWrittenSince).
	Erasing map[string]bool
	Started bool // a snapshot is being written for this state
	// Ended, while started, is closed when that snapshot ends: made
	// current (its goroutine holds snapMu until that is stored) or given
	// up. A test's snapshot waits on it for its turn.
	Ended chan struct{}
	// Erasures counts the claims erased; covered, those erased before
	// the current snapshot's cut. A snapshot from before an erasure
	// holds the claim's key, subject, tier and kind: the next is due at
	// once.
	Erasures, Covered uint64
	// FailedAt is how many metas were written since the snapshot when
	// one last failed: the next waits for as many more.
	FailedAt int
}

// Pending is how many metas were written since the snapshot: the log's
// entries (a claim written twice counts twice: the unlock reads both) and
// an older build's list.
func (sn *snapState) Pending() int {
	return int(sn.LogNext-sn.LogFirst) + len(sn.Legacy)
}

// NoteMetaWrites appends to the log, staged in *writes, a copy of each meta
// ws write (journal, st.mu held): the unlock then reads the metas written
// since the snapshot in one pass over the log, not one lookup each in
// bucketClaimMeta (on a cold page cache, a random read of the store file
// each).
func (st *State) NoteMetaWrites(ws []Write, writes *[]Write) {
	for _, w := range ws {
		if w.Bucket != BucketClaimMeta {
			continue
		}
		v := w.Value
		if v == nil {
			v = []byte(dirtyGone)
		}
		*writes = append(*writes, Write{Bucket: BucketMetaLog, Key: ReceiptKey(st.Snap.LogNext), Value: logEntry(w.Key, v), Append: true})
		st.Snap.LogNext++
	}
}

// logEntry is the value of a log entry: the claim id, a newline, and the
// meta (its JSON, or dirtyGone). splitLogEntry takes it apart; ok is false
// for a value that is not one.
func logEntry(id string, meta []byte) []byte {
	e := make([]byte, 0, len(id)+1+len(meta))
	return append(append(append(e, id...), '\n'), meta...)
}

func SplitLogEntry(v []byte) (id, meta []byte, ok bool) {
	id, meta, ok = bytes.Cut(v, []byte{'\n'})
	return id, meta, ok && len(id) > 0 && len(meta) > 0
}

// Values of a log entry or of bucketMetaDirty other than a meta's JSON: the
// meta was removed; or (bucketMetaDirty of a build that kept no copy) look
// it up.
const (
	dirtyGone   = "-"
	dirtyLookUp = "1"
)

// SnapshotDue reports whether a new snapshot should be written by tune,
// and marks it started if so (journal, st.mu held).
func (st *State) SnapshotDue(tune SnapTuning) bool {
	if st.Snap.Started || st.Broken {
		return false
	}
	threshold := max(tune.DirtyMin, len(st.Claims)/tune.DirtyShare)
	pending := st.Snap.Pending()
	switch {
	case st.Snap.FailedAt > 0 && pending <= st.Snap.FailedAt+threshold:
		return false
	case st.Snap.Info.Gen != 0 && st.Snap.Erasures == st.Snap.Covered && pending <= threshold:
		return false
	}
	st.Snap.Start()
	return true
}

// Start marks a snapshot started, and end marks it ended (st.mu held).
func (sn *snapState) Start() {
	sn.Started = true
	sn.Ended = make(chan struct{})
}

func (sn *snapState) End() {
	sn.Started = false
	if sn.Ended != nil {
		close(sn.Ended)
		sn.Ended = nil
	}
}

// snapSlab is how many records decodeSnapChunk allocates at once.
const snapSlab = 256

// DecodeSnapChunk decodes a chunk into records, but for the metas whose
// ids skip has, and counts the metas it decoded. The records are allocated
// snapSlab at a time, and their strings copied into shared blocks (see
// ChunkDecoder). At 1,000,000 claims a record and two or three
// strings per claim, each its own allocation, were about 2.6 million heap
// objects that every collection marked one by one: 0.7 s of CPU for the
// collection after the unlock, 0.9-1.2 s for each collection under owner
// writes, a quarter of the daemon's CPU. A slab or a block stays in memory
// while one of its records or strings does: never more than the load
// allocated, as records are replaced, not changed.
func DecodeSnapChunk(chunk []byte, cache *claimCache, memo map[string]string, skip map[string]*ClaimRecord) (out []*ClaimRecord, n int, err error) {
	d, err := NewChunkDecoder(chunk, memo)
	if err != nil {
		return nil, 0, err
	}
	var slab []ClaimRecord
	for d.More() {
		mark := d.Mark()
		var m ClaimMeta
		if err := d.Next(&m); err != nil {
			return nil, 0, err
		}
		n++
		if _, ok := skip[m.ID]; ok {
			d.Rewind(mark) // its strings were the last copied
			continue
		}
		if len(slab) == 0 {
			slab = make([]ClaimRecord, snapSlab)
		}
		r := &slab[0]
		slab = slab[1:]
		r.Meta, r.cache = m, cache
		out = append(out, r)
	}
	return out, n, nil
}

// loadSnapshot reads the claim records from the snapshot and the metas
// written since. ok is false when the store has no snapshot this version
// reads (the caller then loads every meta); an error is a store that
// failed. active holds the active records in index order. Either way it
// notes in st.snap what the next snapshot replaces.
func (st *State) loadSnapshot(tx Tx) (records, active []*ClaimRecord, ok bool, err error) {
	var storeRev, logRev, oldRev uint64
	for _, m := range []struct {
		key string
		v   *uint64
	}{{MetaRevision, &storeRev}, {MetaLogRevision, &logRev}, {metaSnapRevision, &oldRev}} {
		if *m.v, err = loadMarker(tx, m.key); err != nil {
			return nil, nil, false, err
		}
	}
	if _, found, err := tx.Get(BucketMeta, MetaSnapshotErased); err != nil {
		return nil, nil, false, err
	} else if found {
		st.Snap.Erasures = 1 // none covered: the unlock's commit starts a snapshot
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
		st.LoadNotes = append(st.LoadNotes, fmt.Sprintf("claim metas snapshot unreadable: %d chunks, %d claims", info.Chunks, info.Claims))
		return nil, nil, false, nil
	}
	dirty, err := st.decodeWrittenSince(tx, written)
	if err != nil {
		return nil, nil, false, err
	}
	records, bad := st.decodeSnapshot(tx, info, dirty)
	if bad != nil {
		st.LoadNotes = append(st.LoadNotes, "claim metas snapshot unreadable: "+bad.Error())
		return nil, nil, false, nil
	}
	st.Snap.Info = info
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
	if err := tx.ForEach(BucketMetaDirty, func(id string, raw []byte) error {
		st.Snap.Legacy = append(st.Snap.Legacy, id)
		if string(raw) == dirtyLookUp {
			raw = nil
		}
		written = append(written, sinceSnapshot{id: id, raw: raw}) // the value belongs to fn (see Tx)
		return nil
	}); err != nil {
		return nil, nil, "", err
	}
	if err := tx.ForEach(BucketMetaLog, func(k string, v []byte) error {
		seq, err := strconv.ParseUint(k, 16, 64)
		id, raw, ok := SplitLogEntry(v)
		if err != nil || len(k) != 16 || !ok {
			if badEntry == "" {
				badEntry = k
			}
			logKeys = append(logKeys, k) // dropped with the rest (see below)
			return nil
		}
		if len(logKeys) == 0 {
			st.Snap.LogFirst = seq
		}
		st.Snap.LogNext = seq + 1
		logKeys = append(logKeys, k)
		written = append(written, sinceSnapshot{id: string(id), raw: raw})
		return nil
	}); err != nil {
		return nil, nil, "", err
	}
	if len(logKeys) == 0 {
		st.Snap.LogFirst = st.Snap.LogNext
	}

	return written, logKeys, badEntry, nil
}

// chooseSnapshot decides which snapshot record goes with the metas
// written since, given the store's revision markers, and notes in
// st.upgrades what the unlock's commit changes of the records; ok is
// false when none does (the metas themselves are read).
func (st *State) chooseSnapshot(tx Tx, storeRev, logRev, oldRev uint64, logKeys []string, badEntry string) (info SnapshotInfo, ok bool, err error) {
	// Which snapshot record goes with these: this build's while it wrote
	// last (or an older build's, there being none of this build's yet),
	// an older build's while it wrote last and left no log.
	readRecord := func(key string) (SnapshotInfo, []byte, error) {
		var info SnapshotInfo
		raw, found, err := tx.Get(BucketMeta, key)
		if err != nil || !found {
			return info, nil, err
		}
		if err := json.Unmarshal(raw, &info); err != nil { // unreadable is not a failed store here
			st.LoadNotes = append(st.LoadNotes, "claim metas snapshot unreadable: "+err.Error())
			return SnapshotInfo{}, nil, nil
		}
		st.Snap.LastGen = max(st.Snap.LastGen, info.Gen)
		return info, raw, nil
	}
	ours, oursRaw, err := readRecord(MetaSnapshotLog)
	if err != nil {
		return SnapshotInfo{}, false, err
	}
	older, olderRaw, err := readRecord(metaSnapshot)
	if err != nil {
		return SnapshotInfo{}, false, err
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
			st.LoadNotes = append(st.LoadNotes, fmt.Sprintf("claim metas snapshot passed over: the log of metas written since holds an unreadable entry (%q)", badEntry))
		} else {
			st.LoadNotes = append(st.LoadNotes, fmt.Sprintf("claim metas snapshot passed over: the store is at revision %d, the log of metas written since at %d (an older phc wrote to it)", storeRev, logRev))
		}
		st.Upgrades = append(st.Upgrades,
			Write{Bucket: BucketMeta, Key: MetaSnapshotLog},
			Write{Bucket: BucketMeta, Key: metaSnapshot},
			Write{Bucket: BucketMeta, Key: metaSnapRevision})
		for _, k := range logKeys {
			st.Upgrades = append(st.Upgrades, Write{Bucket: BucketMetaLog, Key: k})
		}
		st.Snap.LogFirst = st.Snap.LogNext
		return SnapshotInfo{}, false, nil
	}
	// The older build's record, when there is one, becomes this build's
	// (the older list is read either way) with the unlock's commit, and
	// its marker goes: were they left until this build's first snapshot,
	// an older build opening the store meanwhile would, after one write
	// of its own, take them for current and miss this build's writes. A
	// record of this build's passed over here goes the same way.
	switch {
	case fromOlder:
		st.Upgrades = append(st.Upgrades, Write{Bucket: BucketMeta, Key: MetaSnapshotLog, Value: olderRaw})
	case oursRaw != nil && chosen == nil:
		st.Upgrades = append(st.Upgrades, Write{Bucket: BucketMeta, Key: MetaSnapshotLog})
	}
	if olderRaw != nil {
		st.Upgrades = append(st.Upgrades,
			Write{Bucket: BucketMeta, Key: metaSnapshot},
			Write{Bucket: BucketMeta, Key: metaSnapRevision})
	}
	if chosen == nil || st.IgnoreSnapshot {
		return SnapshotInfo{}, false, nil
	}
	return info, true, nil
}

// decodeWrittenSince decodes the metas written since the snapshot, which
// replace the snapshot's: of a claim written more than once since, only
// the last. A claim whose meta is gone maps to nil.
func (st *State) decodeWrittenSince(tx Tx, written []sinceSnapshot) (map[string]*ClaimRecord, error) {
	// The metas written since replace the snapshot's, whose copies are
	// not even decoded into records; of a claim written more than once
	// since, only the last is decoded.
	last := make(map[string]int, len(written))
	for i, w := range written {
		last[w.id] = i
	}
	dirty := make(map[string]*ClaimRecord, len(last))
	for i, w := range written {
		if last[w.id] != i {
			continue
		}
		raw, found := w.raw, string(w.raw) != dirtyGone
		if raw == nil {
			var err error
			if raw, found, err = tx.Get(BucketClaimMeta, w.id); err != nil {
				return nil, err
			}
		}
		dirty[w.id] = nil // a meta no longer there: the claim goes
		if found {
			m := new(ClaimMeta)
			if err := fastjson.Unmarshal(raw, m); err != nil {
				return nil, fmt.Errorf("claim meta %s: %w", w.id, err)
			}
			m.ID = w.id
			InternMeta(m)
			dirty[w.id] = &ClaimRecord{Meta: *m, cache: st.Cache}
		}
	}
	return dirty, nil
}

// decodeSnapshot reads the snapshot's chunks and decodes them into
// records, but for the claims of dirty; an error says why the snapshot
// cannot be used (the metas are still there to read).
func (st *State) decodeSnapshot(tx Tx, info SnapshotInfo, dirty map[string]*ClaimRecord) ([]*ClaimRecord, error) {
	// Chunks are opened here, one after another (a MiB each: decryption
	// is the cheap part), and decoded on every core.
	workers := max(1, runtime.GOMAXPROCS(0))
	parts := make([][]*ClaimRecord, info.Chunks)
	counts := make([]int, info.Chunks)
	errs := make([]error, info.Chunks)
	todo := make(chan int, workers)
	raws := make([][]byte, info.Chunks)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			memo := map[string]string{}
			for i := range todo {
				parts[i], counts[i], errs[i] = DecodeSnapChunk(raws[i], st.Cache, memo, dirty)
				raws[i] = nil
			}
		})
	}
	var getErr error
	for i := range info.Chunks {
		v, found, err := tx.Get(BucketMetaSnap, snapKey(info.Gen, i))
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
	records := make([]*ClaimRecord, 0, n+len(dirty))
	for _, p := range parts {
		records = append(records, p...)
	}
	return records, nil
}

// mergeWrittenSince returns the snapshot's records with those written
// since it in place of theirs, and the active ones in index order.
func mergeWrittenSince(records []*ClaimRecord, dirty map[string]*ClaimRecord) (kept, active []*ClaimRecord) {
	if len(dirty) == 0 {
		for _, r := range records {
			if r.Meta.Status != model.StatusActive {
				break // active ones come first
			}
			active = append(active, r)
		}
		return records, active
	}
	kept = records
	var old []*ClaimRecord // the snapshot's active records still current, in order
	for _, r := range records {
		if r.Meta.Status != model.StatusActive {
			break // active ones come first
		}
		old = append(old, r)
	}
	var fresh []*ClaimRecord // the dirty active records, in index order
	for _, r := range dirty {
		if r == nil {
			continue
		}
		kept = append(kept, r)
		if r.Meta.Status == model.StatusActive {
			fresh = append(fresh, r)
		}
	}
	slices.SortFunc(fresh, RecordCmp)
	active = make([]*ClaimRecord, 0, len(old)+len(fresh))
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
	_, err := LoadMetaJSON(tx, key, &v)
	return v, err
}

// eraseWrittenSince adds to a group's writes the removal of every meta
// written since the snapshot of the claims the group erased (journal, st.mu
// held): each holds the claim's key. The log's entries the group stages go
// but the last of each claim (its tombstone's); those already stored are
// found in one pass over the log for the whole group, however many claims
// it erased (a replace import erases every claim in one job); an older
// build's copies go by id. Should the log be unreadable, they are left to
// the snapshot the erasures make due, with a warning. The group also sets
// MetaSnapshotErased, so that a crash before that snapshot does not lose it.
func (s *Engine) eraseWrittenSince(st *State, writes []Write) []Write {
	erased := st.Snap.Erasing
	st.Snap.Erasing = nil
	writes = append(writes, Write{Bucket: BucketMeta, Key: MetaSnapshotErased, Value: []byte("true")})
	// erasedIn is the claim whose logged meta v is, if the group erased it.
	erasedIn := func(v []byte) (string, bool) {
		id, _, _ := SplitLogEntry(v)
		if !erased[string(id)] { // no copy of id made for the lookup
			return "", false
		}
		return string(id), true
	}
	last := map[string]int{}
	for i, w := range writes {
		if w.Bucket == BucketMetaLog && w.Value != nil {
			if id, ok := erasedIn(w.Value); ok {
				last[id] = i
			}
		}
	}
	kept := writes[:0]
	for i, w := range writes {
		if w.Bucket == BucketMetaLog && w.Value != nil {
			if id, ok := erasedIn(w.Value); ok && last[id] != i {
				continue
			}
		}
		kept = append(kept, w)
	}
	writes = kept
	if len(st.Snap.Legacy) > 0 {
		for id := range erased {
			writes = append(writes, Write{Bucket: BucketMetaDirty, Key: id})
		}
	}
	if err := s.Store.View(func(tx Tx) error {
		return tx.ForEach(BucketMetaLog, func(k string, v []byte) error {
			if _, ok := erasedIn(v); ok {
				writes = append(writes, Write{Bucket: BucketMetaLog, Key: k})
			}
			return nil
		})
	}); err != nil {
		s.Log.Warn("erased claims' metas stay in the log of metas written since the snapshot until the next snapshot", "err", err)
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
	defer s.Wg.Done()
	defer s.Hooks.Fire() // after snapMu is let go
	s.SnapMu.Lock()
	defer s.SnapMu.Unlock()
	if err := s.SnapshotOf(st); err != nil {
		if !errors.Is(err, ErrSnapshotStale) {
			s.Log.Warn("claim metas snapshot not written; the next unlock reads every meta", "err", err)
		}
		st.Mu.Lock()
		st.Snap.End()
		if !errors.Is(err, ErrSnapshotStale) {
			st.Snap.FailedAt = max(1, st.Snap.Pending())
		}
		st.Mu.Unlock()
	}
}

func (s *Engine) SnapshotOf(st *State) error {
	current := func() bool { return s.whileCurrent(st, func() error { return nil }) == nil }
	if !current() {
		return ErrSnapshotStale
	}
	// The cut: every record as the view holds it now, active ones in
	// index order; and the log's end: the snapshot holds what every entry
	// before it says.
	st.Mu.RLock()
	prev, lastGen, erasures := st.Snap.Info, st.Snap.LastGen, st.Snap.Erasures
	records := make([]*ClaimRecord, 0, len(st.Claims))
	st.Active.Ascend(func(r *ClaimRecord) bool {
		records = append(records, r)
		return true
	})
	for _, r := range st.Claims {
		if r.Meta.Status != model.StatusActive {
			records = append(records, r)
		}
	}
	cut := st.Snap.LogNext
	st.Mu.RUnlock()
	if f := s.SnapAfterCut.Load(); f != nil {
		(*f)()
	}

	gen := max(prev.Gen, lastGen) + 1 // never over the chunks of one the store records
	written, err := WriteChunks(s.Store, BucketMetaSnap, gen, len(records), func(i int) *ClaimMeta { return &records[i].Meta },
		s.Hooks.Snap.ChunkBytes, current, s.Stop)
	if err != nil {
		return err
	}
	// What else the bucket holds (the previous snapshot, or chunks of one
	// an earlier attempt left) goes with the switch.
	var stale []string
	if err := s.Store.View(func(tx Tx) error {
		each := tx.ForEach
		if lr, ok := tx.(LazyRanger); ok { // keys only: no chunk opened
			each = func(bucket string, fn func(string, []byte) error) error {
				return lr.ForEachLazy(bucket, func(k string, _ func() ([]byte, error)) error { return fn(k, nil) })
			}
		}
		return each(BucketMetaSnap, func(k string, _ []byte) error {
			if !written[k] {
				stale = append(stale, k)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	return s.whileCurrent(st, func() error {
		return s.Queue(&Job{St: st, Apply: func(b *Batch) error {
			if st.Snap.Info != prev {
				return model.Internalf("snapshot", "another snapshot became current")
			}
			for seq := st.Snap.LogFirst; seq < cut; seq++ {
				b.Del(BucketMetaLog, ReceiptKey(seq))
			}
			st.Snap.LogFirst = max(st.Snap.LogFirst, cut)
			for _, id := range st.Snap.Legacy {
				b.Del(BucketMetaDirty, id)
			}
			st.Snap.Legacy = nil
			for _, k := range stale {
				b.Del(BucketMetaSnap, k)
			}
			st.Snap.Info = SnapshotInfo{Gen: gen, Chunks: len(written), Claims: len(records)}
			st.Snap.LastGen = gen
			st.Snap.FailedAt = 0
			st.Snap.Covered = erasures
			if st.Snap.Erasures == erasures {
				b.Del(BucketMeta, MetaSnapshotErased)
			}
			b.Put(BucketMeta, MetaSnapshotLog, st.Snap.Info)
			st.Snap.End()
			return nil
		}})
	})
}
