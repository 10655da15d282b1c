package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"

	"github.com/phc-project/phc/custodian"
)

var (
	_ custodian.Store    = (*Bolt)(nil)
	_ custodian.Tx       = (*boltTx)(nil)
	_ custodian.Appender = (*boltTx)(nil)
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
// is encrypted by a [Cipher]. Bucket names and keys are stored in plaintext.
// An Update is one bbolt read-write transaction, fsync'ed before Update
// returns; Views run concurrently with it on the last committed state.
type Bolt struct {
	db     *bbolt.DB
	c      Cipher
	path   string
	closed atomic.Bool
}

// OpenBolt opens the store file at path, creating it with mode 0600 (and its
// parent directory with mode 0700) if needed. An existing file readable by
// others is narrowed to 0600. Only one process may have the file open: if
// another holds it, OpenBolt fails after about a second with an error that
// wraps [bbolt.ErrTimeout].
func OpenBolt(path string, c Cipher) (*Bolt, error) {
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
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: store in use by another process: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := narrowMode(path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &Bolt{db: db, c: c, path: path}, nil
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

// View runs fn in a bbolt read-only transaction. fn's error is returned
// unchanged. Do not wait inside fn for an Update to finish: a commit that
// grows the file waits for open read transactions.
func (b *Bolt) View(fn func(custodian.Tx) error) error {
	return b.run("view", b.db.View, fn)
}

// Update runs fn in a bbolt read-write transaction and commits it, with an
// fsync, if fn returns nil. If fn returns an error, nothing it wrote is kept
// and the error is returned unchanged. Updates are serialised.
func (b *Bolt) Update(fn func(custodian.Tx) error) error {
	return b.run("update", b.db.Update, fn)
}

// run calls fn in a transaction begun by managed (bbolt's View or Update),
// returning fn's error unchanged and wrapping bbolt's own.
func (b *Bolt) run(op string, managed func(func(*bbolt.Tx) error) error, fn func(custodian.Tx) error) error {
	fnFailed := false
	err := managed(func(btx *bbolt.Tx) error {
		tx := &boltTx{tx: btx, c: b.c}
		defer tx.end()
		if err := fn(tx); err != nil {
			fnFailed = true
			return err
		}
		return nil
	})
	if err != nil && !fnFailed {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return err
}

// Close waits for running transactions and closes the store file. Later
// calls, Close included, fail.
func (b *Bolt) Close() error {
	if b.closed.Swap(true) {
		return fmt.Errorf("store: close: %w", errClosed)
	}
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Check runs bbolt's consistency check over the whole file and returns the
// first problem it reports, or nil. It checks pages and structure, not that
// values decrypt. Updates wait while it runs.
func (b *Bolt) Check() error {
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

// boltTx is a transaction of a Bolt store.
type boltTx struct {
	tx   *bbolt.Tx
	c    Cipher
	done bool
}

func (tx *boltTx) end() { tx.done = true }

func (tx *boltTx) Get(bucket, key string) ([]byte, bool, error) {
	if tx.done {
		return nil, false, errTxDone
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
	return tx.put(bucket, key, value, appendFill)
}

// appendFill is the page fill of a bucket that a transaction appends to.
const appendFill = 1.0

func (tx *boltTx) Put(bucket, key string, value []byte) error {
	return tx.put(bucket, key, value, 0)
}

// put stores value under bucket/key; fill, if not 0, sets the bucket's page
// fill for this transaction.
func (tx *boltTx) put(bucket, key string, value []byte, fill float64) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	if bucket == "" || key == "" {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, errEmptyName)
	}
	ct, err := tx.c.Seal(bucket, aad(bucket, key), value)
	if err != nil {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, err)
	}
	b, err := tx.tx.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, err)
	}
	if fill != 0 {
		b.FillPercent = fill
	}
	// ct is fresh from Seal, so bbolt may keep it until the commit.
	if err := b.Put([]byte(key), ct); err != nil {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, err)
	}
	return nil
}

func (tx *boltTx) Delete(bucket, key string) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	b := tx.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	if err := b.Delete([]byte(key)); err != nil {
		return fmt.Errorf("store: delete %q/%q: %w", bucket, key, err)
	}
	return nil
}

func (tx *boltTx) ForEach(bucket string, fn func(key string, value []byte) error) error {
	if tx.done {
		return errTxDone
	}
	b := tx.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, ct := c.First(); k != nil; k, ct = c.Next() {
		key := string(k)
		if ct == nil { // a nested bucket: the store never makes one
			return fmt.Errorf("store: %q/%q: nested bucket: %w", bucket, key, ErrCorrupt)
		}
		v, err := tx.open(bucket, key, ct)
		if err != nil {
			return err
		}
		if err := fn(key, v); err != nil {
			return err
		}
	}
	return nil
}

func (tx *boltTx) checkWrite(bucket, key string) error {
	switch {
	case tx.done:
		return errTxDone
	case !tx.tx.Writable():
		return fmt.Errorf("store: write %q/%q: %w", bucket, key, errReadOnly)
	}
	return nil
}

// open decrypts the ciphertext stored under bucket/key. stored is bbolt's
// memory: read-only and valid only during the transaction, so Open gets a
// copy it may decrypt in place, and the result belongs to the caller.
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
