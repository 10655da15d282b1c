package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
)

func put(t *testing.T, s *store.Bolt, b, k, v string) {
	t.Helper()
	if err := s.Update(func(tx custodian.Tx) error { return tx.Put(b, k, []byte(v)) }); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s *store.Bolt, b, k string) string {
	t.Helper()
	var out string
	if err := s.View(func(tx custodian.Tx) error {
		v, ok, err := tx.Get(b, k)
		if !ok {
			out = "<missing>"
		}
		out += string(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func bigUpdate(t *testing.T, s *store.Bolt) {
	t.Helper()
	if err := s.Update(func(tx custodian.Tx) error {
		for i := range 5000 {
			if err := tx.Put("big", fmt.Sprintf("k%05d", i), bytes.Repeat([]byte("v"), 1000)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// An Update after a direct (>4 MiB) commit goes into the same segment as
// the records before it: the direct commit leaves an empty record, so
// replay finds no gap and keeps it.
func TestBoltReviewDirectGapSilentLoss(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	put(t, s, "b", "a", "1") // record 1, log
	bigUpdate(t, s)          // record 2, direct
	put(t, s, "b", "a", "3") // record 3, log, same segment after record 1
	put(t, s, "b", "c", "4") // record 4
	s.Crash()
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	if got := get(t, s, "b", "a"); got != "3" {
		t.Errorf("b/a = %q after crash, want 3 (acknowledged)", got)
	}
	if got := get(t, s, "b", "c"); got != "4" {
		t.Errorf("b/c = %q after crash, want 4 (acknowledged)", got)
	}
}

// The same after later flushes: records written later in that segment are
// replayed.
func TestBoltReviewDirectGapAfterFlush(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	put(t, s, "b", "a", "1")
	bigUpdate(t, s)
	put(t, s, "b", "a", "3")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	put(t, s, "b", "a", "5") // record 4, after a flush
	s.Crash()
	s = mustReopenBolt(t, path, newTestCipher(t), tune)
	if got := get(t, s, "b", "a"); got != "5" {
		t.Errorf("b/a = %q after crash, want 5 (acknowledged)", got)
	}
}

// The same, then enough records to rotate: the store still opens.
func TestBoltReviewDirectGapFalseCorrupt(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour, SegmentSize: 4096}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	put(t, s, "b", "a", "1")
	bigUpdate(t, s)
	for i := range 100 {
		put(t, s, "b", fmt.Sprint(i), string(bytes.Repeat([]byte("x"), 100)))
	}
	s.Crash()
	s2, err := store.OpenBoltTuned(path, newTestCipher(t), tune)
	if err != nil {
		t.Errorf("OpenBolt after a plain crash = %v", err)
		return
	}
	// Closed before the flush delay is put back: its flusher reads it.
	if err := s2.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// A damaged acknowledged record with acknowledged records after it in the
// same segment fails the open, rather than dropping the later ones.
func TestBoltReviewDamagedMidSegment(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Hour}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	for i := range 10 {
		put(t, s, "b", fmt.Sprint(i), "v")
	}
	s.Crash()
	segs, _ := filepath.Glob(filepath.Join(s.LogDir(), "*.seg"))
	slices.Sort(segs)
	data, _ := os.ReadFile(segs[len(segs)-1])
	// damage record 3's payload (records are equal-sized)
	n := int(data[0]) + 16
	data[2*n+17] ^= 0xff
	os.WriteFile(segs[len(segs)-1], data, 0o600)
	s2, err := store.OpenBoltTuned(path, newTestCipher(t), tune)
	if errors.Is(err, store.ErrCorrupt) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	missing := 0
	for i := range 10 {
		if get(t, s2, "b", fmt.Sprint(i)) != "v" {
			missing++
		}
	}
	t.Errorf("OpenBolt accepted a log with a damaged acknowledged record followed by acknowledged ones; %d acknowledged records silently missing", missing)
}

// A View never mixes an old overlay with a newer bbolt file: a count
// written with its items always matches them.
func TestBoltReviewViewTornSnapshot(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Nanosecond}
	s := mustOpenBolt(t, tune)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; !stop.Load(); i++ {
			if err := s.Update(func(tx custodian.Tx) error {
				if err := tx.Put("items", fmt.Sprintf("%08d", i), []byte("x")); err != nil {
					return err
				}
				return tx.Put("meta", "count", []byte(fmt.Sprint(i)))
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var mu sync.Mutex
	bad := 0
	for round := 0; round < 5 && bad == 0; round++ {
		var workers sync.WaitGroup
		for range 8 {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for range 200 {
					s.View(func(tx custodian.Tx) error {
						v, _, _ := tx.Get("meta", "count")
						n := 0
						tx.ForEach("items", func(string, []byte) error { n++; return nil })
						if v != nil && fmt.Sprint(n) != string(v) {
							t.Logf("View saw count=%s but %d items", v, n)
							mu.Lock()
							bad++
							mu.Unlock()
						}
						return nil
					})
				}
			}()
		}
		workers.Wait()
	}
	stop.Store(true)
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d torn Views", bad)
	}
}
