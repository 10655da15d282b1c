package store_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/store/storetest"
	"go.etcd.io/bbolt"
)

// TestBoltCrashDurable runs the persistence contract with a crash (no
// Close, nothing flushed) in place of the close.
func TestBoltCrashDurable(t *testing.T) {
	storetest.RunDurable(t,
		func(t *testing.T) custodian.Store { return mustOpenBolt(t) },
		func(t *testing.T, old custodian.Store) custodian.Store {
			t.Helper()
			b := old.(*store.Bolt)
			b.Crash()
			return mustReopenBolt(t, b.Path(), newTestCipher(t))
		})
}

// model is what a store must hold: bucket → key → value.
type model map[string]map[string]string

func (m model) check(t *testing.T, s custodian.Store, buckets []string) {
	t.Helper()
	err := s.View(func(tx custodian.Tx) error {
		for _, b := range buckets {
			got := map[string]string{}
			if err := tx.ForEach(b, func(k string, v []byte) error {
				got[k] = string(v)
				return nil
			}); err != nil {
				return err
			}
			if len(got) != len(m[b]) {
				return fmt.Errorf("bucket %s: %d keys, want %d", b, len(got), len(m[b]))
			}
			for k, want := range m[b] {
				if got[k] != want {
					return fmt.Errorf("%s/%s = %q, want %q", b, k, got[k], want)
				}
				v, ok, err := tx.Get(b, k)
				if err != nil || !ok || string(v) != want {
					return fmt.Errorf("Get(%s, %s) = %q, %v, %v; want %q", b, k, v, ok, err, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// randomUpdates runs n Updates of random puts, appends and deletes against
// s, recording them in m, with a flush now and then.
func randomUpdates(t *testing.T, s *store.Bolt, m model, rng *rand.Rand, n int, buckets []string, seq *int) {
	t.Helper()
	for range n {
		err := s.Update(func(tx custodian.Tx) error {
			for range 1 + rng.IntN(5) {
				b := buckets[rng.IntN(len(buckets))]
				if m[b] == nil {
					m[b] = map[string]string{}
				}
				*seq++
				switch rng.IntN(4) {
				case 0:
					k := fmt.Sprintf("k%03d", rng.IntN(50))
					delete(m[b], k)
					if err := tx.Delete(b, k); err != nil {
						return err
					}
				case 1:
					k := fmt.Sprintf("z%08d", *seq)
					v := strings.Repeat("a", rng.IntN(300))
					m[b][k] = v
					if err := tx.(custodian.Appender).Append(b, k, []byte(v)); err != nil {
						return err
					}
				default:
					k := fmt.Sprintf("k%03d", rng.IntN(50))
					v := fmt.Sprintf("v%d-%s", *seq, strings.Repeat("b", rng.IntN(200)))
					m[b][k] = v
					if err := tx.Put(b, k, []byte(v)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		if rng.IntN(40) == 0 {
			if err := s.Flush(); err != nil {
				t.Fatalf("Flush = %v", err)
			}
		}
	}
}

// TestBoltLogReplay crashes a store again and again under random writes,
// across many small log segments, and checks after each reopen that every
// acknowledged write is there and nothing else.
func TestBoltLogReplay(t *testing.T) {
	tune := store.Tuning{SegmentSize: 4096}
	rng := rand.New(rand.NewPCG(1, 2))
	buckets := []string{"claims", "receipts", "meta"}
	path := filepath.Join(t.TempDir(), "phc.db")
	m := model{}
	seq := 0
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	for round := range 12 {
		randomUpdates(t, s, m, rng, 40+rng.IntN(80), buckets, &seq)
		m.check(t, s, buckets)
		if round%4 == 3 {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			s.Crash()
		}
		s = mustReopenBolt(t, path, newTestCipher(t), tune)
		m.check(t, s, buckets)
		// The reopened store keeps the segments of the records its file
		// lacks; once they are flushed, the next segment drops them (a
		// record larger than a segment fills the one written to, the
		// next starts one).
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("x", 5000)
		for range 2 {
			if err := s.Update(func(tx custodian.Tx) error { return tx.Put("meta", "big", []byte(big)) }); err != nil {
				t.Fatal(err)
			}
		}
		if m["meta"] == nil {
			m["meta"] = map[string]string{}
		}
		m["meta"]["big"] = big
		segs, _ := filepath.Glob(filepath.Join(s.LogDir(), "*.seg"))
		if len(segs) > 3 {
			t.Fatalf("round %d: %d log segments after reopen, a flush and a new segment; want the one written to, the one before and a spare", round, len(segs))
		}
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestBoltLogTornTail checks that a record cut short by a crash (never
// acknowledged) is dropped and everything before it kept, also once the
// reopened store, whose file lacks records of the torn segment (kept until
// they are flushed), has written the next records in a new segment.
func TestBoltLogTornTail(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour} // the torn segment's records stay out of the file
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	m := model{}
	seq := 0
	randomUpdates(t, s, m, rand.New(rand.NewPCG(3, 4)), 30, []string{"b"}, &seq)
	s.Crash()

	seg := onlySegment(t, s.LogDir())
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	first := segFirst(t, seg)
	var last uint64
	if err := store.ReadSegment(data, first, func(seq uint64, _ byte, _, _ string, _ []byte) { last = seq }); err != nil {
		t.Fatal(err)
	}
	end := logEnd(t, data, first)
	torn := store.Frame(last+1, "b", "torn", []byte("never acknowledged"))
	torn = torn[:len(torn)-5]
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(torn, int64(end)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The store goes on writing after the torn record.
	reopenWriteCrash(t, path, m, "b", tune)
}

// reopenWriteCrash reopens the store at path and checks it against m,
// writes one more value, crashes it, and reopens and checks it again.
func reopenWriteCrash(t *testing.T, path string, m model, bucket string, tune store.Tuning) *store.Bolt {
	t.Helper()
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{bucket})
	put(t, s, bucket, "after", "1")
	m[bucket]["after"] = "1"
	s.Crash()
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{bucket})
	return s
}

// TestBoltLogDamaged checks that a damaged record with records after it
// fails the open (acknowledged writes would be lost) instead of dropping
// them.
func TestBoltLogDamaged(t *testing.T) {
	tune := store.Tuning{SegmentSize: 2048, FlushDelay: time.Hour} // nothing reaches the file before the crash
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	for i := range 60 {
		if err := s.Update(func(tx custodian.Tx) error {
			return tx.Put("b", fmt.Sprint(i), bytes.Repeat([]byte("v"), 100))
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.Crash()

	segs, _ := filepath.Glob(filepath.Join(s.LogDir(), "*.seg"))
	slices.Sort(segs)
	if len(segs) < 2 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	// Damage the second byte of the first record's payload: the records
	// after it, in the later segments, are acknowledged.
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[17] ^= 0xff
	if err := os.WriteFile(segs[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = store.OpenBoltTuned(path, newTestCipher(t), tune)
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("OpenBolt over a damaged log = %v, want ErrCorrupt", err)
	}
}

// TestBoltLargeUpdate checks an Update too large for the log (committed to
// the file directly) between logged ones.
func TestBoltLargeUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t))
	m := model{"b": {}}
	put := func(n, size int) {
		putMany(t, s, m, "b", n, func(string) string { return fmt.Sprintf("%d:%s", n, bytes.Repeat([]byte("v"), size)) })
	}
	put(10, 10)
	put(5000, 1000) // about 5 MB
	put(3, 10)
	m.check(t, s, []string{"b"})
	s.Crash()
	s = mustReopenBolt(t, path, newTestCipher(t))
	m.check(t, s, []string{"b"})
}

// TestBoltLogFiles checks the log's permissions: a 0700 directory of 0600
// files.
func TestBoltLogFiles(t *testing.T) {
	s := mustOpenBolt(t)
	if err := s.Update(func(tx custodian.Tx) error { return tx.Put("b", "k", []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.LogDir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("log dir: %v, %v; want mode 0700", fi.Mode(), err)
	}
	segs, _ := filepath.Glob(filepath.Join(s.LogDir(), "*"))
	for _, p := range segs {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v; want mode 0600", p, fi.Mode(), err)
		}
	}
}

// FuzzLogSegment feeds arbitrary segment contents to the replay's reader:
// it must neither panic nor read a record past the data.
func FuzzLogSegment(f *testing.F) {
	f.Add(store.Frame(1, "b", "k", []byte("v")), uint64(1))
	f.Add(append(store.Frame(7, "claims", "c1@1", []byte("x")), store.Frame(8, "meta", "m", nil)...), uint64(7))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, first uint64) {
		next := first
		_ = store.ReadSegment(data, first, func(seq uint64, op byte, bucket, key string, value []byte) {
			if seq < next || bucket == "" || key == "" {
				t.Fatalf("record %d after %d, bucket %q key %q", seq, next, bucket, key)
			}
			next = seq
		})
	})
}

func onlySegment(t *testing.T, dir string) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	return segs[0]
}

func segFirst(t *testing.T, path string) uint64 {
	t.Helper()
	var first uint64
	if _, err := fmt.Sscanf(filepath.Base(path), "%016x.seg", &first); err != nil {
		t.Fatal(err)
	}
	return first
}

// logEnd returns the offset after the last record of a segment.
func logEnd(t *testing.T, data []byte, first uint64) int {
	t.Helper()
	end := 0
	next := first
	for {
		fr := data[end:]
		if len(fr) < 16 {
			return end
		}
		n := int(fr[0]) | int(fr[1])<<8 | int(fr[2])<<16 | int(fr[3])<<24
		seq := uint64(0)
		for i := 7; i >= 0; i-- {
			seq = seq<<8 | uint64(fr[8+i])
		}
		if seq != next || n == 0 || 16+n > len(fr) {
			return end
		}
		end += 16 + n
		next++
	}
}

// TestBoltForEachLazy checks that ForEachLazy sees what ForEach sees — the
// file, the overlay over it and an Update's own writes — and that its
// values open on other goroutines until the closure returns.
func TestBoltForEachLazy(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour}
	s := mustOpenBolt(t, tune)
	put := func(k, v string) {
		if err := s.Update(func(tx custodian.Tx) error { return tx.Put("b", k, []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "1")
	put("c", "3")
	if err := s.Flush(); err != nil { // a and c in the file
		t.Fatal(err)
	}
	put("b", "2") // in the overlay
	if err := s.Update(func(tx custodian.Tx) error { return tx.Delete("b", "c") }); err != nil {
		t.Fatal(err)
	}
	collect := func(tx custodian.Tx) (eager, lazy []string) {
		if err := tx.ForEach("b", func(k string, v []byte) error {
			eager = append(eager, k+"="+string(v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var opens []func() ([]byte, error)
		var keys []string
		if err := tx.(custodian.LazyRanger).ForEachLazy("b", func(k string, v func() ([]byte, error)) error {
			keys, opens = append(keys, k), append(opens, v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, len(opens))
		for i := range opens {
			go func() {
				v, err := opens[i]()
				if err != nil {
					done <- err.Error()
					return
				}
				done <- keys[i] + "=" + string(v)
			}()
		}
		for range opens {
			lazy = append(lazy, <-done)
		}
		slices.Sort(lazy)
		return eager, lazy
	}
	err := s.View(func(tx custodian.Tx) error {
		eager, lazy := collect(tx)
		if want := []string{"a=1", "b=2"}; !slices.Equal(eager, want) || !slices.Equal(lazy, want) {
			t.Errorf("View: ForEach %v, ForEachLazy %v; want %v", eager, lazy, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx custodian.Tx) error {
		if err := tx.Put("b", "d", []byte("4")); err != nil {
			return err
		}
		if err := tx.Delete("b", "a"); err != nil {
			return err
		}
		eager, lazy := collect(tx)
		if want := []string{"b=2", "d=4"}; !slices.Equal(eager, want) || !slices.Equal(lazy, want) {
			t.Errorf("Update: ForEach %v, ForEachLazy %v; want %v", eager, lazy, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var late func() ([]byte, error)
	s.View(func(tx custodian.Tx) error {
		return tx.(custodian.LazyRanger).ForEachLazy("b", func(_ string, v func() ([]byte, error)) error {
			late = v
			return nil
		})
	})
	if v, err := late(); err == nil {
		t.Fatalf("a value opened after its transaction = %q, want an error", v)
	}
}

// TestBoltCloseLeavesBacklog checks that Close leaves more than
// closeFlushBytes of unflushed writes to the log, and that the store they
// belong to reads them back from it — after a reopen, after a crash of the
// reopened store, and in its file once flushed.
func TestBoltCloseLeavesBacklog(t *testing.T) {
	tune := store.Tuning{SegmentSize: 4096, FlushDelay: time.Hour, CloseFlushBytes: 1024}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	m := model{"b": {}}
	putEach(t, s, m, "b", 60, func(string) string { return strings.Repeat("v", 200) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	inFile := func() int {
		n := 0
		rawUpdate(t, path, func(tx *bbolt.Tx) error {
			if bk := tx.Bucket([]byte("b")); bk != nil {
				n = bk.Stats().KeyN
			}
			return nil
		})
		return n
	}
	if n := inFile(); n != 0 {
		t.Fatalf("the file holds %d of the writes after Close; want none (they are over closeFlushBytes)", n)
	}
	s = reopenWriteCrash(t, path, m, "b", tune)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := inFile(); n != len(m["b"]) {
		t.Fatalf("the file holds %d writes once flushed; want %d", n, len(m["b"]))
	}
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{"b"})
}

// TestBoltReopenBeforeAnyWrite stops a store whose file lacks records of
// the log, reopens it and stops it again before it writes or flushes
// anything, then checks that it opens with every write. The second open
// finds the empty segment the first one started (numbered after records
// the file lacks): it must be reused, not kept (keeping it, the open
// failed on its own segment name).
func TestBoltReopenBeforeAnyWrite(t *testing.T) {
	tests := []struct {
		name string
		stop func(*store.Bolt)
	}{
		{"close with a backlog", func(s *store.Bolt) {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"crash", func(s *store.Bolt) { s.Crash() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tune := store.Tuning{FlushDelay: time.Hour, CloseFlushBytes: -1}
			path := filepath.Join(t.TempDir(), "phc.db")
			s := mustReopenBolt(t, path, newTestCipher(t), tune)
			m := model{"b": {}}
			putEach(t, s, m, "b", 5, func(string) string { return strings.Repeat("v", 100) })
			for range 3 {
				tt.stop(s)
				s = mustReopenBolt(t, path, newTestCipher(t), tune)
				m.check(t, s, []string{"b"})
			}
			put(t, s, "b", "after", "1")
			m["b"]["after"] = "1"
			tt.stop(s)
			s = mustReopenBolt(t, path, newTestCipher(t), tune)
			m.check(t, s, []string{"b"})
		})
	}
}

// TestBoltEmptySegmentAfterFlush builds what a crash leaves when it comes
// after a new segment was made and before its first record, while a flush
// had copied only the oldest segment into the file: the open must reuse
// the empty segment, not list it twice (then a later segment change made
// the segment being written the spare, and reused it over records not yet
// in the file).
func TestBoltEmptySegmentAfterFlush(t *testing.T) {
	tune := store.Tuning{SegmentSize: 4096, FlushDelay: time.Hour}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	dir := s.LogDir()
	m := model{"b": {}}
	n := 0
	write := func() {
		k, v := fmt.Sprintf("k%04d", n), strings.Repeat("v", 300)
		n++
		put(t, s, "b", k, v)
		m["b"][k] = v
	}
	segments := func() []string { g, _ := filepath.Glob(filepath.Join(dir, "*.seg")); return g }
	for len(segments()) < 3 {
		write()
	}
	segs := segments() // the third holds only the last record
	oldest, newest := segs[0], segs[2]
	delete(m["b"], fmt.Sprintf("k%04d", n-1)) // the crash comes before it
	s.Crash()
	if err := os.WriteFile(newest, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(oldest)
	if err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error { // the flush of the oldest segment
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		var last uint64
		if err := store.ReadSegment(data, segFirst(t, oldest), func(seq uint64, _ byte, _, k string, v []byte) {
			bk.Put([]byte(k), v)
			last = seq
		}); err != nil {
			return err
		}
		wb, err := tx.CreateBucketIfNotExists([]byte("phc.wal"))
		if err != nil {
			return err
		}
		return wb.Put([]byte("applied"), binary.BigEndian.AppendUint64(nil, last))
	})
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{"b"})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for before := len(segments()); len(segments()) == before; {
		write()
	}
	write()
	s.Crash()
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{"b"})
}

// TestBoltFlushGivenUp checks that a flush Close asks to stop writes
// nothing to the file and leaves every write to the log.
func TestBoltFlushGivenUp(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour, CloseFlushBytes: -1}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	m := model{"b": {}}
	putMany(t, s, m, "b", 600, func(k string) string { return k }) // more than the 256 puts between two looks at stop
	if err := s.FlushGivenUp(); err != nil {
		t.Fatalf("a flush given up = %v; want nil", err)
	}
	m.check(t, s, []string{"b"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte("b")) != nil {
			t.Error("the file has the bucket of a flush given up")
		}
		return nil
	})
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	m.check(t, s, []string{"b"})
}

// putEach is putMany with an Update (a log record) for each key.
func putEach(t *testing.T, s *store.Bolt, m model, bucket string, n int, value func(k string) string) {
	t.Helper()
	for i := range n {
		k := fmt.Sprintf("k%05d", i)
		v := value(k)
		put(t, s, bucket, k, v)
		m[bucket][k] = v
	}
}

// putMany puts keys k00000 to n-1 into bucket in one Update, with the
// values value gives, and records them in m.
func putMany(t *testing.T, s *store.Bolt, m model, bucket string, n int, value func(k string) string) {
	t.Helper()
	err := s.Update(func(tx custodian.Tx) error {
		for i := range n {
			k := fmt.Sprintf("k%05d", i)
			v := value(k)
			m[bucket][k] = v
			if err := tx.Put(bucket, k, []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
