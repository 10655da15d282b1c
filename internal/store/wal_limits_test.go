package store_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
)

// A key bbolt refuses (> 32 KiB) is refused by Put, not acknowledged by the
// log to fail every flush and replay after: the store goes on and reopens.
func TestBoltReviewPoisonRecord(t *testing.T) {
	tune := store.Tuning{FlushDelay: time.Millisecond}
	path := filepath.Join(t.TempDir(), "phc.db")
	s := mustReopenBolt(t, path, newTestCipher(t), tune)
	err := s.Update(func(tx custodian.Tx) error { return tx.Put("b", strings.Repeat("k", 40000), []byte("v")) })
	if err == nil {
		t.Fatal("Update(a key over bbolt's limit) = nil, want an error")
	}
	if err := s.Flush(); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	err = s.Update(func(tx custodian.Tx) error { return tx.Put("b", "small", []byte("v")) })
	if err != nil {
		t.Fatalf("next Update = %v", err)
	}
	t.Logf("Close = %v", s.Close())
	s2, err := store.OpenBoltTuned(path, newTestCipher(t), tune)
	t.Logf("OpenBolt = %v", err)
	if err != nil {
		t.Errorf("store bricked by one acknowledged record")
		return
	}
	_ = s2.Close()
}
