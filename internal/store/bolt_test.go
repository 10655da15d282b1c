package store_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
)

// testCipher is AES-256-GCM under a fixed key, binding the category and the
// AAD; a ciphertext is nonce ‖ sealed. It decrypts in place, as [store.Cipher]
// allows. Setting locked makes it fail like a locked vault.
type testCipher struct {
	aead   cipher.AEAD
	locked atomic.Bool
}

var errLocked = errors.New("test cipher: locked")

// errAuth is the test cipher's flat authentication failure.
var errAuth = errors.New("test cipher: message authentication failed")

func newTestCipher(t testing.TB) *testCipher {
	t.Helper()
	key := bytes.Repeat([]byte("phc-test-key-32b"), 2)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &testCipher{aead: aead}
}

func (c *testCipher) ad(category string, aad []byte) []byte {
	return append(append([]byte(category), 0), aad...)
}

func (c *testCipher) Seal(category string, aad, plaintext []byte) ([]byte, error) {
	if c.locked.Load() {
		return nil, errLocked
	}
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plaintext)+c.aead.Overhead())
	rand.Read(nonce)
	return c.aead.Seal(nonce, nonce, plaintext, c.ad(category, aad)), nil
}

func (c *testCipher) Open(category string, aad, ciphertext []byte) ([]byte, error) {
	if c.locked.Load() {
		return nil, errLocked
	}
	n := c.aead.NonceSize()
	if len(ciphertext) < n+c.aead.Overhead() {
		return nil, errAuth
	}
	sealed := ciphertext[n:]
	pt, err := c.aead.Open(sealed[:0], ciphertext[:n], sealed, c.ad(category, aad))
	if err != nil {
		return nil, errAuth
	}
	return pt, nil
}

func TestOpenBoltModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "phc.db")
	b := mustReopenBolt(t, path, newTestCipher(t))
	if b.Path() != path {
		t.Errorf("Path() = %q; want %q", b.Path(), path)
	}
	for _, f := range []struct {
		path string
		want os.FileMode
	}{{path, 0o600}, {dir, 0o700}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != f.want {
			t.Errorf("mode of %s = %v; want %v", f.path, got, f.want)
		}
	}
}

func TestOpenBoltNarrowsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phc.db")
	b := mustReopenBolt(t, path, newTestCipher(t))
	b.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	mustReopenBolt(t, path, newTestCipher(t))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode after reopening a 0644 file = %v; want 0600", got)
	}
}

func TestOpenBoltNilCipher(t *testing.T) {
	if b, err := store.OpenBolt(filepath.Join(t.TempDir(), "phc.db"), nil); err == nil {
		b.Close()
		t.Errorf("OpenBolt(nil cipher) = nil error; want an error")
	}
}

func TestOpenBoltInUse(t *testing.T) {
	b := mustOpenBolt(t)
	second, err := store.OpenBolt(b.Path(), newTestCipher(t))
	if err == nil {
		second.Close()
		t.Fatalf("second OpenBolt(%q) = nil error; want an error", b.Path())
	}
	if !errors.Is(err, berrors.ErrTimeout) {
		t.Errorf("second OpenBolt = %v; want an error wrapping berrors.ErrTimeout", err)
	}
}

func TestBoltPlaintextNotInFile(t *testing.T) {
	const (
		bucket = "claims"
		key    = "clm_canarykey"
		canary = "distinctive-plaintext-canary-9f1c2e"
	)
	b := mustOpenBolt(t)
	value := []byte(strings.Repeat(canary+" ", 10))
	err := b.Update(func(tx custodian.Tx) error { return tx.Put(bucket, key, value) })
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	b.Close()
	raw, err := os.ReadFile(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(canary)) {
		t.Errorf("store file contains the plaintext value %q", canary)
	}
	// Keys are stored in plaintext: finding this one shows the search works.
	if !bytes.Contains(raw, []byte(key)) {
		t.Errorf("store file does not contain the key %q; the search is broken", key)
	}
}

// rawUpdate opens the closed store file at path with bbolt directly.
func rawUpdate(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// checkCorrupt checks that reading bucket/key fails with ErrCorrupt through
// both Get and ForEach, naming the record and not the value.
func checkCorrupt(t *testing.T, b *store.Bolt, bucket, key, plaintext string) {
	t.Helper()
	err := b.View(func(tx custodian.Tx) error {
		v, ok, err := tx.Get(bucket, key)
		if !errors.Is(err, store.ErrCorrupt) || v != nil || ok {
			t.Errorf("Get(%q, %q) = %q, %v, %v; want nil, false, ErrCorrupt", bucket, key, v, ok, err)
		}
		if err != nil && (!strings.Contains(err.Error(), key) || strings.Contains(err.Error(), plaintext)) {
			t.Errorf("Get error %q: want it to name key %q and not the value", err, key)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View = %v", err)
	}
	err = b.View(func(tx custodian.Tx) error {
		return tx.ForEach(bucket, func(string, []byte) error { return nil })
	})
	if !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ForEach(%q) = %v; want ErrCorrupt", bucket, err)
	}
}

func TestBoltTamperedValue(t *testing.T) {
	const plaintext = "a value worth protecting"
	tests := []struct {
		name string
		pos  func(n int) int // the byte to flip in a ciphertext of n bytes
	}{
		{"first byte", func(int) int { return 0 }},
		{"middle byte", func(n int) int { return n / 2 }},
		{"last byte", func(n int) int { return n - 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustOpenBolt(t)
			err := b.Update(func(tx custodian.Tx) error {
				return errors.Join(tx.Put("claims", "clm_1", []byte(plaintext)), tx.Put("claims", "clm_2", []byte("other")))
			})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			b.Close()
			rawUpdate(t, b.Path(), func(tx *bbolt.Tx) error {
				bk := tx.Bucket([]byte("claims"))
				ct := bytes.Clone(bk.Get([]byte("clm_1")))
				ct[tt.pos(len(ct))] ^= 0x01
				return bk.Put([]byte("clm_1"), ct)
			})
			b = mustReopenBolt(t, b.Path(), newTestCipher(t))
			checkCorrupt(t, b, "claims", "clm_1", plaintext)
			// The untouched record still reads.
			err = b.View(func(tx custodian.Tx) error {
				v, ok, err := tx.Get("claims", "clm_2")
				if string(v) != "other" || !ok || err != nil {
					t.Errorf("Get(claims, clm_2) = %q, %v, %v; want \"other\", true, nil", v, ok, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("View = %v", err)
			}
			if err := b.Check(); err != nil {
				t.Errorf("Check = %v; want nil (the file's structure is intact)", err)
			}
		})
	}
}

func TestBoltMovedCiphertext(t *testing.T) {
	tests := []struct {
		name                 string
		fromBucket, toBucket string
		fromKey, toKey       string
		fromValue, toValue   string
	}{
		{"to another key", "claims", "claims", "clm_a", "clm_b", "value of a", "value of b"},
		{"to another bucket", "claims", "grants", "id_1", "id_1", "claim value", "grant value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustOpenBolt(t)
			err := b.Update(func(tx custodian.Tx) error {
				return errors.Join(
					tx.Put(tt.fromBucket, tt.fromKey, []byte(tt.fromValue)),
					tx.Put(tt.toBucket, tt.toKey, []byte(tt.toValue)))
			})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			b.Close()
			rawUpdate(t, b.Path(), func(tx *bbolt.Tx) error {
				ct := bytes.Clone(tx.Bucket([]byte(tt.fromBucket)).Get([]byte(tt.fromKey)))
				return tx.Bucket([]byte(tt.toBucket)).Put([]byte(tt.toKey), ct)
			})
			b = mustReopenBolt(t, b.Path(), newTestCipher(t))
			checkCorrupt(t, b, tt.toBucket, tt.toKey, tt.fromValue)
		})
	}
}

func TestBoltLockedCipher(t *testing.T) {
	c := newTestCipher(t)
	b := mustReopenBolt(t, filepath.Join(t.TempDir(), "phc.db"), c)
	err := b.Update(func(tx custodian.Tx) error { return tx.Put("claims", "clm_1", []byte("v")) })
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	c.locked.Store(true)

	err = b.Update(func(tx custodian.Tx) error { return tx.Put("claims", "clm_2", []byte("v")) })
	if !errors.Is(err, errLocked) {
		t.Errorf("Update(Put) while locked = %v; want an error wrapping errLocked", err)
	}
	err = b.View(func(tx custodian.Tx) error {
		_, _, err := tx.Get("claims", "clm_1")
		return err
	})
	if !errors.Is(err, errLocked) || errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Get while locked = %v; want errLocked, not ErrCorrupt", err)
	}
	err = b.View(func(tx custodian.Tx) error {
		return tx.ForEach("claims", func(string, []byte) error { return nil })
	})
	if !errors.Is(err, errLocked) || errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ForEach while locked = %v; want errLocked, not ErrCorrupt", err)
	}

	c.locked.Store(false)
	err = b.View(func(tx custodian.Tx) error {
		v, ok, err := tx.Get("claims", "clm_1")
		if string(v) != "v" || !ok || err != nil {
			t.Errorf("Get after unlock = %q, %v, %v; want \"v\", true, nil", v, ok, err)
		}
		if _, ok, _ := tx.Get("claims", "clm_2"); ok {
			t.Errorf("Get(claims, clm_2) found the value of a failed Update")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View = %v", err)
	}
}

func TestBoltCheck(t *testing.T) {
	b := mustOpenBolt(t)
	err := b.Update(func(tx custodian.Tx) error {
		for i := range 1000 {
			if err := tx.Put(fmt.Sprintf("b%d", i%7), fmt.Sprintf("k%04d", i), bytes.Repeat([]byte{byte(i)}, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	if err := b.Check(); err != nil {
		t.Errorf("Check = %v; want nil", err)
	}
	b.Close()
	if err := b.Check(); err == nil {
		t.Errorf("Check after Close = nil; want an error")
	}
}

func benchmarkBoltUpdate(b *testing.B, putsPerUpdate int) {
	s := mustOpenBolt(b)
	value := bytes.Repeat([]byte("v"), 128)
	i := 0
	for b.Loop() {
		err := s.Update(func(tx custodian.Tx) error {
			for range putsPerUpdate {
				if err := tx.Put("bench", fmt.Sprintf("k%09d", i), value); err != nil {
					return err
				}
				i++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/put")
}

// BenchmarkBoltUpdate commits one 128-byte Put per Update: its figure is
// mostly the commit's fsync.
func BenchmarkBoltUpdate(b *testing.B) { benchmarkBoltUpdate(b, 1) }

// BenchmarkBoltUpdateBatch commits 100 Puts per Update.
func BenchmarkBoltUpdateBatch(b *testing.B) { benchmarkBoltUpdate(b, 100) }

// BenchmarkBoltGet reads and decrypts one 128-byte value per View.
func BenchmarkBoltGet(b *testing.B) {
	s := mustOpenBolt(b)
	err := s.Update(func(tx custodian.Tx) error {
		for i := range 1000 {
			if err := tx.Put("bench", fmt.Sprintf("k%09d", i), bytes.Repeat([]byte("v"), 128)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		err := s.View(func(tx custodian.Tx) error {
			_, _, err := tx.Get("bench", fmt.Sprintf("k%09d", i%1000))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestBoltAppend: Append stores like Put, and appended buckets pack their
// pages: a thousand small appended values take fewer pages than the same
// values put.
func TestBoltAppend(t *testing.T) {
	usedPages := func(appendKeys bool) int {
		t.Helper()
		b, err := store.OpenBolt(filepath.Join(t.TempDir(), "s.db"), newTestCipher(t))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for lo := 0; lo < 1000; lo += 100 {
			if err := b.Update(func(tx custodian.Tx) error {
				for i := lo; i < lo+100; i++ {
					key, val := fmt.Sprintf("%016x", i), []byte(fmt.Sprintf("value %d of some length to fill pages", i))
					var err error
					if appendKeys {
						err = tx.(custodian.Appender).Append("log", key, val)
					} else {
						err = tx.Put("log", key, val)
					}
					if err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		if err := b.View(func(tx custodian.Tx) error {
			return tx.ForEach("log", func(k string, v []byte) error {
				if want := fmt.Sprintf("value %d of some length to fill pages", n); string(v) != want || k != fmt.Sprintf("%016x", n) {
					return fmt.Errorf("%s = %q; want %q", k, v, want)
				}
				n++
				return nil
			})
		}); err != nil || n != 1000 {
			t.Fatalf("read back %d values: %v", n, err)
		}
		return b.LeafPages("log")
	}
	put, appended := usedPages(false), usedPages(true)
	if appended >= put {
		t.Errorf("appended values take %d leaf pages, put ones %d; want fewer", appended, put)
	}
}
