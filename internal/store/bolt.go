package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/phc-project/phc/custodian"
)

var (
	_ custodian.Store      = (*Bolt)(nil)
	_ custodian.Tx         = (*boltTx)(nil)
	_ custodian.Appender   = (*boltTx)(nil)
	_ custodian.LazyRanger = (*boltTx)(nil)
	_ custodian.Prefixer   = (*boltTx)(nil)
)

// Cipher seals and opens the values of a [Bolt] store; the vault implements
// it. category is the bucket name and aad binds the value to its bucket and
// key (see the package documentation). An error (for example a locked vault)
// is passed through by the store, wrapped with %w.
//
// Seal must neither modify nor retain plaintext, and its result must not
// alias plaintext: the store hands that result to bbolt, which keeps it until
// the transaction ends. Open receives a ciphertext slice the store allocated
// for the call: Open may decrypt in place and return a subslice of it.
// Neither may retain aad.
//
// When Open fails, the store calls Seal with an empty plaintext to tell a
// value that does not decrypt ([ErrCorrupt]) from a cipher that decrypts
// nothing at all (a locked vault); Seal must have no other effect than using
// randomness.
type Cipher interface {
	Seal(category string, aad, plaintext []byte) ([]byte, error)
	Open(category string, aad, ciphertext []byte) ([]byte, error)
}

// aadPrefix starts the additional data of every value. It versions the
// binding of a ciphertext to its record; changing it makes every stored value
// unreadable.
const aadPrefix = "phc/store/v1\x00"

// lockTimeout bounds the wait for bbolt's file lock, so that a second process
// fails with a clear error instead of hanging.
const lockTimeout = time.Second

// Bolt is the product [custodian.Store]: one bbolt file in which every value
// is encrypted by a [Cipher], with a write-ahead log beside it. Bucket names
// and keys are stored in plaintext. An Update is durable when its record is
// in the log (one fdatasync); a flusher copies the log into the bbolt file
// in batches. Views run concurrently with Updates on the last committed
// state: the bbolt file under the writes not yet flushed to it.
type Bolt struct {
	db     *bbolt.DB
	c      Cipher
	path   string
	closed atomic.Bool

	// Locks, always taken in this order: wmu, fmu, omu.
	wmu     sync.Mutex // serialises Updates; guards log, seq and rec
	fmu     sync.Mutex // one flush at a time; guards flushed
	omu     sync.Mutex // guards publishing ov, and failed
	log     *wal
	seq     uint64 // the last record written to the log
	rec     []byte // the buffer Updates build their log record in
	flushed uint64 // the last record in the file
	failed  error  // set when the log or a flush failed: Updates refuse
	tune    tuning
	ov      atomic.Pointer[overlay] // the writes not yet in the file
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// tuning is when a store flushes and how large its log segments are. A
// store opened by OpenBolt has defaultTuning; tests open one with another
// (export_test.go), never by changing a package variable.
type tuning struct {
	flushDelay      time.Duration // see defaultTuning
	closeFlushBytes int
	segmentSize     int64
}

// The flusher copies the log into the file flushDelay after a write finds
// nothing waiting, or at once when flushBytes are waiting; an Update waits
// for a flush when maxOverlayBytes are waiting. A record larger than
// directBytes skips the log: it is committed to the file with everything
// before it. A bbolt commit costs two fdatasyncs and a write of every page
// it touched, so the longer the delay, the more writes share them: under
// owner writes at 16 clients the flusher took 67-69 µs of CPU per write at
// 25 ms, 52-60 µs at 100 ms (about a fifth of the daemon's CPU). In a
// large file a random key's put also reads in the branch pages above its
// leaf (at 1,000,000 claims, about 9 KiB of bbolt nodes per owner write):
// there 500 ms, whose flushes share most branch pages, took the daemon's
// CPU per owner write from 637-674 µs to 535-577 µs (interleaved runs).
// Each page a flush writes is a scattered write of its own, and on a disk
// that caps them the log's fdatasync waits behind them: 2 s (with the
// graph's 1 s, see custodian's graphDelay) rather than 500 ms (and 250)
// halved the disk writes per owner write at 1,000,000 claims (2.7-4.2 →
// 1.3-1.5) and lowered the daemon's CPU per write by a sixth (interleaved
// 15 s runs, docs/benchmarks/history.md). At 16 clients flushBytes comes first.
//
// closeFlushBytes is the most Close copies from the log into the file (see
// overlay.bytes): about 400 owner writes at a million claims, each a few
// pages scattered over the file. When the flusher is behind a slow disk,
// the overlay holds up to maxOverlayBytes; flushing that at Close took a
// daemon's stop 30 to 80 s on this project's test VM (the restarted daemon
// found the store still locked).
//
// segmentSize is the preallocated size of a log segment (see wal.go).
var defaultTuning = tuning{flushDelay: 2 * time.Second, closeFlushBytes: 1 << 20, segmentSize: 8 << 20}

// errGivenUp is what a flush returns when Close asked it to stop.
var errGivenUp = errors.New("store: flush given up for Close")

const (
	recKeep         = 1 << 20 // the largest record buffer an Update keeps for the next
	flushBytes      = 16 << 20
	maxOverlayBytes = 64 << 20
	directBytes     = 4 << 20
)

// maxValueSize bounds a value: bbolt's limit, less the cipher's overhead.
const maxValueSize = bbolt.MaxValueSize - 1024

// walBucket holds, under walApplied, the sequence number (8 bytes, big
// endian) of the last log record the file has. The core's buckets are
// opaque ids that never contain a dot.
const (
	walBucket  = "phc.wal"
	walApplied = "applied"
)

// OpenBolt opens the store file at path, creating it with mode 0600 (and its
// parent directory with mode 0700) if needed, and its log, the directory
// path+".wal". An existing file readable by others is narrowed to 0600.
// Records of the log the file does not have yet are read into memory
// first, without the cipher, and copied into the file by the flusher; a
// log that lost a record it acknowledged fails with an error wrapping
// [ErrCorrupt]. Only one process may have the file open: if
// another holds it, OpenBolt fails after about a second with an error that
// wraps [berrors.ErrTimeout].
func OpenBolt(path string, c Cipher) (*Bolt, error) { return openBolt(path, c, defaultTuning) }

// openBolt is OpenBolt with tune.
func openBolt(path string, c Cipher, tune tuning) (*Bolt, error) {
	if c == nil {
		return nil, errors.New("store: open: nil cipher")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      lockTimeout,
		FreelistType: bbolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: store in use by another process: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	prefetch(path)
	b := &Bolt{db: db, c: c, path: path, tune: tune, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.ov.Store(emptyOverlay)
	if err := narrowMode(path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := b.recover(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	go b.flusher()
	return b, nil
}

// recover reads the log's records the file does not have into the
// overlay, which the flusher then copies into the file as it does an
// Update's, and opens the log for the next record. Close leaves the
// overlay to the log, so neither stopping nor starting waits for the
// writes a busy disk has not taken yet.
func (b *Bolt) recover() error {
	var applied uint64
	if err := b.db.View(func(tx *bbolt.Tx) error {
		applied = readApplied(tx)
		return nil
	}); err != nil {
		return err
	}
	dir := b.path + ".wal"
	ov := &overlay{buckets: map[string]*btree.BTreeG[*entry]{}}
	last, segs, err := replayLog(dir, applied, func(seq uint64, payload []byte) error {
		err := decodeOps(payload, func(o walOp) error {
			t := ov.buckets[o.bucket]
			if t == nil {
				t = newTree()
				ov.buckets[o.bucket] = t
			}
			e := &entry{key: o.key, ct: bytes.Clone(o.value), seq: seq, append: o.op == opAppend}
			if o.op == opDelete {
				e.ct = nil
			}
			if old, ok := t.Set(e); ok {
				ov.bytes -= entrySize(old)
			}
			ov.bytes += entrySize(e)
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: log: %w: %w", err, ErrCorrupt)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ov.maxSeq = last
	b.seq, b.flushed = last, applied
	b.ov.Store(ov)
	b.log, err = openLog(dir, last+1, applied, segs, b.tune.segmentSize)
	if err != nil {
		return fmt.Errorf("store: open the log: %w", err)
	}
	if !ov.empty() {
		b.kick <- struct{}{}
	}
	return nil
}

func readApplied(tx *bbolt.Tx) uint64 {
	if bk := tx.Bucket([]byte(walBucket)); bk != nil {
		if v := bk.Get([]byte(walApplied)); len(v) == 8 {
			return binary.BigEndian.Uint64(v)
		}
	}
	return 0
}

func writeApplied(tx *bbolt.Tx, seq uint64) error {
	bk, err := tx.CreateBucketIfNotExists([]byte(walBucket))
	if err != nil {
		return err
	}
	return bk.Put([]byte(walApplied), binary.BigEndian.AppendUint64(nil, seq))
}

// applyOp makes one write of the log in the file.
func applyOp(tx *bbolt.Tx, op byte, bucket, key string, value []byte) error {
	if op == opDelete {
		if bk := tx.Bucket([]byte(bucket)); bk != nil {
			return bk.Delete([]byte(key))
		}
		return nil
	}
	bk, err := tx.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	if op == opAppend {
		bk.FillPercent = appendFill
	}
	return bk.Put([]byte(key), value)
}

// flusher copies the log into the file, a batch at a time, until Close.
func (b *Bolt) flusher() {
	defer close(b.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.kick:
		}
		if b.ov.Load().bytes < flushBytes {
			t.Reset(b.tune.flushDelay)
			select {
			case <-b.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		b.flushUnless(b.stop)
	}
}

// flush copies every write waiting in the overlay into the file, in one
// bbolt commit, then drops them from the overlay and lets the log reuse
// their space. A failure fails later Updates; the log keeps the writes.
func (b *Bolt) flush() error { return b.flushUnless(nil) }

// flushUnless is flush, given up (rolled back, nothing written) if stop is
// closed while it puts the writes into the transaction: at a million
// claims that reads pages of the file at random, seconds of Close's wait
// on a slow disk. The log keeps what it gave up.
func (b *Bolt) flushUnless(stop <-chan struct{}) error {
	b.fmu.Lock()
	defer b.fmu.Unlock()
	ov := b.ov.Load()
	if ov.empty() || ov.maxSeq <= b.flushed {
		return nil
	}
	err := b.db.Update(func(tx *bbolt.Tx) error {
		if err := applyOverlay(tx, ov, nil, stop); err != nil {
			return err
		}
		return writeApplied(tx, ov.maxSeq)
	})
	if errors.Is(err, errGivenUp) {
		return nil
	}
	if err != nil {
		err = fmt.Errorf("store: flush: %w", err)
		b.omu.Lock()
		if b.failed == nil {
			b.failed = err
		}
		b.omu.Unlock()
		return err
	}
	b.flushed = ov.maxSeq
	b.omu.Lock()
	b.ov.Store(b.ov.Load().without(ov.maxSeq))
	b.omu.Unlock()
	b.log.applied.Store(ov.maxSeq)
	return nil
}

// applyOverlay writes ov's entries, then top's (an Update's own), to the file.
// If stop (may be nil) is closed, it gives up with errGivenUp.
func applyOverlay(tx *bbolt.Tx, ov *overlay, top map[string]*btree.BTreeG[*entry], stop <-chan struct{}) error {
	n := 0
	for _, layer := range []map[string]*btree.BTreeG[*entry]{ov.buckets, top} {
		for bucket, t := range layer {
			var err error
			t.Scan(func(e *entry) bool {
				if n++; n%256 == 0 && stop != nil {
					select {
					case <-stop:
						err = errGivenUp
						return false
					default:
					}
				}
				err = applyOp(tx, e.op(), bucket, e.key, e.ct)
				return err == nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// narrowMode removes any group or other permission from the file at path.
func narrowMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(path, fi.Mode().Perm()&0o700)
}

// Path returns the path of the store file, also after Close.
func (b *Bolt) Path() string { return b.path }

// View runs fn on the last committed state. fn's error is returned
// unchanged. Do not wait inside fn for an Update to finish.
func (b *Bolt) View(fn func(custodian.Tx) error) error {
	if b.closed.Load() {
		return fmt.Errorf("store: view: %w", errClosed)
	}
	// The overlay first: the flusher drops writes from it only after the
	// file has them, so a bbolt transaction begun after sees them there.
	// But the file may by then hold later records too, which the overlay
	// would hide under older values: then begin again.
	var ov *overlay
	var btx *bbolt.Tx
	for {
		ov = b.ov.Load()
		var err error
		if btx, err = b.db.Begin(false); err != nil {
			return fmt.Errorf("store: view: %w", err)
		}
		if readApplied(btx) <= ov.maxSeq {
			break
		}
		btx.Rollback()
	}
	defer btx.Rollback()
	tx := &boltTx{tx: btx, c: b.c, ov: ov}
	defer tx.end()
	return fn(tx)
}

// Update runs fn in a transaction and, if fn returns nil, commits its
// writes: their record is written to the log and synced before Update
// returns. If fn returns an error, nothing it wrote is kept and the error is
// returned unchanged. Updates are serialised.
func (b *Bolt) Update(fn func(custodian.Tx) error) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.closed.Load() {
		return fmt.Errorf("store: update: %w", errClosed)
	}
	b.omu.Lock()
	failed := b.failed
	b.omu.Unlock()
	if failed != nil {
		return fmt.Errorf("store: update: an earlier write failed, reopen the store: %w", failed)
	}
	ov := b.ov.Load()
	top := map[string]*btree.BTreeG[*entry]{}
	fnFailed := false
	err := b.db.View(func(btx *bbolt.Tx) error {
		tx := &boltTx{tx: btx, c: b.c, ov: ov, top: top}
		defer tx.end()
		if err := fn(tx); err != nil {
			fnFailed = true
			return err
		}
		return nil
	})
	if err != nil {
		if fnFailed {
			return err
		}
		return fmt.Errorf("store: update: %w", err)
	}
	if len(top) == 0 {
		return nil
	}
	// The record is built in one buffer: room for its frame's header, the
	// ops, room for the zero header after it.
	size := 0
	for bucket, t := range top {
		t.Scan(func(e *entry) bool {
			size += opSize(walOp{op: e.op(), bucket: bucket, key: e.key, value: e.ct})
			return true
		})
	}
	seq := b.seq + 1
	if size > directBytes {
		return b.commitDirect(top, seq)
	}
	// The log does not keep the record: one buffer serves every Update
	// (wmu is held), unless a large record would keep a large one.
	rec := b.rec[:0]
	if cap(rec) < 2*frameHeader+size {
		rec = make([]byte, 0, 2*frameHeader+size)
	}
	rec = rec[:frameHeader]
	if cap(rec) <= recKeep {
		b.rec = rec
	}
	for bucket, t := range top {
		t.Scan(func(e *entry) bool {
			rec = appendOp(rec, walOp{op: e.op(), bucket: bucket, key: e.key, value: e.ct})
			return true
		})
	}
	if err := b.log.append(seq, rec); err != nil {
		err = fmt.Errorf("store: update: write the log: %w", err)
		b.omu.Lock()
		b.failed = err
		b.omu.Unlock()
		return err
	}
	b.seq = seq
	b.omu.Lock()
	next := b.ov.Load().with(top, seq)
	b.ov.Store(next)
	b.omu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
	if next.bytes > maxOverlayBytes {
		// The write is durable whatever the flush does; a failed flush
		// fails the next Update.
		_ = b.flush()
	}
	return nil
}

// commitDirect commits a large Update's writes straight to the file,
// together with every write waiting before them, as record seq. The caller
// holds wmu.
func (b *Bolt) commitDirect(top map[string]*btree.BTreeG[*entry], seq uint64) error {
	b.fmu.Lock()
	defer b.fmu.Unlock()
	ov := b.ov.Load()
	err := b.db.Update(func(tx *bbolt.Tx) error {
		if err := applyOverlay(tx, ov, top, nil); err != nil {
			return err
		}
		return writeApplied(tx, seq)
	})
	// seq is spent either way: a commit that failed may yet reach the disk.
	b.seq = seq
	if err == nil {
		b.flushed = seq
		b.omu.Lock()
		b.ov.Store(&overlay{buckets: map[string]*btree.BTreeG[*entry]{}, maxSeq: seq})
		b.omu.Unlock()
		b.log.applied.Store(seq)
		// An empty record seq keeps the log's numbers without a gap.
		err = b.log.append(seq, make([]byte, frameHeader, 2*frameHeader))
	}
	if err != nil {
		err = fmt.Errorf("store: update: %w", err)
		b.omu.Lock()
		if b.failed == nil {
			b.failed = err
		}
		b.omu.Unlock()
		return err
	}
	return nil
}

// Close waits for a flush under way and for running transactions, flushes
// what is left if it is little (closeFlushBytes), and closes the store.
// More is left in the log, which the next OpenBolt reads: a store is its
// file and its log (path+".wal") together. Later calls, Close included,
// fail.
func (b *Bolt) Close() error {
	if b.closed.Swap(true) {
		return fmt.Errorf("store: close: %w", errClosed)
	}
	close(b.stop)
	<-b.done
	b.wmu.Lock() // no Update is running, and none will run
	var ferr error
	if b.ov.Load().bytes <= b.tune.closeFlushBytes {
		ferr = b.flush()
	}
	lerr := b.log.close()
	b.wmu.Unlock()
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	if ferr != nil {
		return fmt.Errorf("store: close: %w", ferr)
	}
	if lerr != nil {
		return fmt.Errorf("store: close: %w", lerr)
	}
	return nil
}

// Check runs bbolt's consistency check over the whole file and returns the
// first problem it reports, or nil. It checks pages and structure, not that
// values decrypt. Flushes wait while it runs; Updates go on into the log.
func (b *Bolt) Check() error {
	if err := b.flush(); err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	// A writable transaction keeps writers out, which bbolt requires for a
	// check that is both safe and cheap.
	tx, err := b.db.Begin(true)
	if err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	defer tx.Rollback()
	var first error
	for err := range tx.Check() { // drain, so the checker goroutine ends
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("store: check %s: %w", b.Path(), first)
	}
	return nil
}

// boltTx is a transaction of a Bolt store: it reads the overlay over a
// bbolt read transaction, and an Update's writes go to top.
type boltTx struct {
	tx   *bbolt.Tx
	c    Cipher
	ov   *overlay
	top  map[string]*btree.BTreeG[*entry] // nil in a View
	done bool
}

func (tx *boltTx) end() { tx.done = true }

func (tx *boltTx) Get(bucket, key string) ([]byte, bool, error) {
	if tx.done {
		return nil, false, errTxDone
	}
	var (
		e  *entry
		ok bool
	)
	if t := tx.top[bucket]; t != nil {
		e, ok = t.Get(&entry{key: key})
	}
	if !ok {
		e, ok = tx.ov.get(bucket, key)
	}
	if ok {
		if e.ct == nil {
			return nil, false, nil
		}
		v, err := tx.open(bucket, key, e.ct)
		if err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	b := tx.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil, false, nil
	}
	ct := b.Get([]byte(key))
	if ct == nil {
		return nil, false, nil
	}
	v, err := tx.open(bucket, key, ct)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Append is Put for a key greater than every key of bucket: the bucket's
// pages are filled for appends rather than left half empty for inserts.
func (tx *boltTx) Append(bucket, key string, value []byte) error {
	return tx.put(bucket, key, value, true)
}

// appendFill is the page fill of a bucket that a commit appends to.
const appendFill = 1.0

func (tx *boltTx) Put(bucket, key string, value []byte) error {
	return tx.put(bucket, key, value, false)
}

// put seals value and stages it under bucket/key.
func (tx *boltTx) put(bucket, key string, value []byte, appending bool) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	if bucket == "" || key == "" {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, errEmptyName)
	}
	if bucket == walBucket {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, errReserved)
	}
	// bbolt's limits, checked now: a logged write the file then refused
	// would fail every flush and every open.
	if len(bucket) > bbolt.MaxKeySize || len(key) > bbolt.MaxKeySize || len(value) > maxValueSize {
		return fmt.Errorf("store: put %q/…: %w", bucket, errTooLarge)
	}
	ct, err := tx.c.Seal(bucket, aad(bucket, key), value)
	if err != nil {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, err)
	}
	// ct is fresh from Seal and never changed again: the overlay and
	// bbolt may keep it.
	tx.stage(bucket, &entry{key: key, ct: ct, append: appending})
	return nil
}

func (tx *boltTx) stage(bucket string, e *entry) {
	t := tx.top[bucket]
	if t == nil {
		t = newTree()
		tx.top[bucket] = t
	}
	t.Set(e)
}

func (tx *boltTx) Delete(bucket, key string) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	if bucket == "" || key == "" {
		return nil
	}
	if bucket == walBucket {
		return fmt.Errorf("store: delete %q/%q: %w", bucket, key, errReserved)
	}
	tx.stage(bucket, &entry{key: key})
	return nil
}

func (tx *boltTx) ForEach(bucket string, fn func(key string, value []byte) error) error {
	return tx.ForEachPrefix(bucket, "", fn)
}

// ForEachPrefix is ForEach over the keys that begin with prefix: it seeks
// to the first and stops after the last.
func (tx *boltTx) ForEachPrefix(bucket, prefix string, fn func(key string, value []byte) error) error {
	return tx.forEach(bucket, prefix, prefix, tx.opening(bucket, fn))
}

// ForEachFrom is ForEach over the keys at or after from: it seeks to the
// first.
func (tx *boltTx) ForEachFrom(bucket, from string, fn func(key string, value []byte) error) error {
	return tx.forEach(bucket, "", from, tx.opening(bucket, fn))
}

// opening wraps fn, which takes opened values, for forEach.
func (tx *boltTx) opening(bucket string, fn func(key string, value []byte) error) func(key string, sealed []byte) error {
	return func(key string, sealed []byte) error {
		v, err := tx.open(bucket, key, sealed)
		if err != nil {
			return err
		}
		return fn(key, v)
	}
}

// ForEachLazy is ForEach handing fn a function that opens the value: bbolt's
// memory stays valid, and the overlay's never changes, until the
// transaction ends, so the function may run on any goroutine until then.
func (tx *boltTx) ForEachLazy(bucket string, fn func(key string, value func() ([]byte, error)) error) error {
	return tx.forEach(bucket, "", "", func(key string, sealed []byte) error {
		return fn(key, func() ([]byte, error) {
			if tx.done {
				return nil, errTxDone
			}
			return tx.open(bucket, key, sealed)
		})
	})
}

// forEach calls fn with each key of bucket that begins with prefix and is
// at or after from, and its sealed value, in key order: the transaction's
// own writes over the overlay over the file.
func (tx *boltTx) forEach(bucket, prefix, from string, fn func(key string, sealed []byte) error) error {
	if tx.done {
		return errTxDone
	}
	if bucket == walBucket {
		return fmt.Errorf("store: read %q: %w", bucket, errReserved)
	}
	start := max(prefix, from)
	ents := merged(tx.ov, tx.top, bucket, start, prefix)
	var k, ct []byte
	var c *bbolt.Cursor
	if b := tx.tx.Bucket([]byte(bucket)); b != nil {
		c = b.Cursor()
		if start == "" {
			k, ct = c.First()
		} else {
			k, ct = c.Seek([]byte(start))
		}
	}
	for k != nil || len(ents) > 0 {
		var key string
		var sealed []byte
		if len(ents) > 0 && (k == nil || ents[0].key <= string(k)) {
			e := ents[0]
			ents = ents[1:]
			if k != nil && e.key == string(k) {
				k, ct = c.Next()
			}
			if e.ct == nil {
				continue
			}
			key, sealed = e.key, e.ct
		} else {
			key, sealed = string(k), ct
			if ct == nil { // a nested bucket: the store never makes one
				return fmt.Errorf("store: %q/%q: nested bucket: %w", bucket, key, ErrCorrupt)
			}
			k, ct = c.Next()
		}
		if !strings.HasPrefix(key, prefix) {
			return nil // keys ascend: none after this one has the prefix
		}
		if err := fn(key, sealed); err != nil {
			return err
		}
	}
	return nil
}

func (tx *boltTx) checkWrite(bucket, key string) error {
	switch {
	case tx.done:
		return errTxDone
	case tx.top == nil:
		return fmt.Errorf("store: write %q/%q: %w", bucket, key, errReadOnly)
	}
	return nil
}

// open decrypts the ciphertext stored under bucket/key. stored is bbolt's
// memory (read-only and valid only during the transaction) or the
// overlay's, so Open gets a copy it may decrypt in place, and the result
// belongs to the caller.
func (tx *boltTx) open(bucket, key string, stored []byte) ([]byte, error) {
	ad := aad(bucket, key)
	v, err := tx.c.Open(bucket, ad, bytes.Clone(stored))
	if err == nil {
		return v, nil
	}
	// A cipher that cannot seal either is unavailable (a locked vault): the
	// value is not to blame, and the cipher's error passes through.
	if _, serr := tx.c.Seal(bucket, ad, nil); serr != nil {
		return nil, fmt.Errorf("store: open %q/%q: %w", bucket, key, err)
	}
	return nil, fmt.Errorf("store: open %q/%q: %w", bucket, key, ErrCorrupt)
}

// aad returns the additional data binding a value to its bucket and key.
func aad(bucket, key string) []byte {
	b := make([]byte, 0, len(aadPrefix)+len(bucket)+1+len(key))
	b = append(b, aadPrefix...)
	b = append(b, bucket...)
	b = append(b, 0)
	return append(b, key...)
}
