package store_test

import (
	"path/filepath"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) custodian.Store { return store.NewMemory() })
}

func TestBolt(t *testing.T) {
	storetest.Run(t, func(t *testing.T) custodian.Store { return mustOpenBolt(t) })
}

func TestBoltDurable(t *testing.T) {
	storetest.RunDurable(t,
		func(t *testing.T) custodian.Store { return mustOpenBolt(t) },
		func(t *testing.T, old custodian.Store) custodian.Store {
			t.Helper()
			b := old.(*store.Bolt)
			if err := b.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			return mustReopenBolt(t, b.Path(), newTestCipher(t))
		})
}

// TestTxAfterClosure checks that a Tx kept past its closure refuses every
// call instead of touching memory the transaction no longer owns.
func TestTxAfterClosure(t *testing.T) {
	stores := map[string]custodian.Store{"Memory": store.NewMemory(), "Bolt": mustOpenBolt(t)}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			defer s.Close()
			err := s.Update(func(tx custodian.Tx) error { return tx.Put("b", "k", []byte("v")) })
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			for _, run := range []func(func(custodian.Tx) error) error{s.View, s.Update} {
				var kept custodian.Tx
				if err := run(func(tx custodian.Tx) error { kept = tx; return nil }); err != nil {
					t.Fatalf("transaction = %v", err)
				}
				if v, ok, err := kept.Get("b", "k"); err == nil {
					t.Errorf("Get after the closure = %q, %v, nil; want an error", v, ok)
				}
				if err := kept.Put("b", "k", []byte("late")); err == nil {
					t.Errorf("Put after the closure = nil; want an error")
				}
				if err := kept.Delete("b", "k"); err == nil {
					t.Errorf("Delete after the closure = nil; want an error")
				}
				if err := kept.ForEach("b", func(string, []byte) error { return nil }); err == nil {
					t.Errorf("ForEach after the closure = nil; want an error")
				}
			}
		})
	}
}

func TestCloseTwice(t *testing.T) {
	stores := map[string]custodian.Store{"Memory": store.NewMemory(), "Bolt": mustOpenBolt(t)}
	for name, s := range stores {
		if err := s.Close(); err != nil {
			t.Fatalf("%s: Close = %v", name, err)
		}
		if err := s.Close(); err == nil {
			t.Errorf("%s: second Close = nil; want an error", name)
		}
	}
}

// mustOpenBolt opens a new Bolt store in t's temporary directory and closes
// it when t ends.
func mustOpenBolt(t testing.TB, tune ...store.Tuning) *store.Bolt {
	t.Helper()
	return mustReopenBolt(t, filepath.Join(t.TempDir(), "phc.db"), newTestCipher(t), tune...)
}

// mustReopenBolt opens the store at path, with tune[0] if given, and
// closes it when the test ends.
func mustReopenBolt(t testing.TB, path string, c store.Cipher, tune ...store.Tuning) *store.Bolt {
	t.Helper()
	var tn store.Tuning
	if len(tune) > 0 {
		tn = tune[0]
	}
	b, err := store.OpenBoltTuned(path, c, tn)
	if err != nil {
		t.Fatalf("OpenBolt(%q) = %v", path, err)
	}
	t.Cleanup(func() { _ = b.Close() }) // the test may have closed it already
	return b
}
