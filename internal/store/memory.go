package store

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/phc-project/phc/custodian"
)

var (
	_ custodian.Store = (*Memory)(nil)
	_ custodian.Tx    = (*memTx)(nil)
)

// Memory is an in-memory [custodian.Store] for tests. Values are copied in and
// out; an Update is applied all at once when its closure returns nil, and not
// at all otherwise; one Update runs at a time while any number of Views read
// the last committed state. Nothing survives the process.
type Memory struct {
	writer sync.Mutex               // held for the whole of an Update, and by Close
	state  atomic.Pointer[memState] // the committed state; never modified once stored
}

// memState is one committed state. Its maps and values are immutable: an
// Update copies every bucket it writes (copy-on-write) and publishes a new
// memState on commit.
type memState struct {
	buckets map[string]map[string][]byte
	closed  bool
}

// NewMemory returns an empty Memory store. The zero Memory is not usable.
func NewMemory() *Memory {
	m := new(Memory)
	m.state.Store(&memState{buckets: map[string]map[string][]byte{}})
	return m
}

// View runs fn on a snapshot of the committed state. fn's error is returned
// unchanged.
func (m *Memory) View(fn func(custodian.Tx) error) error {
	s := m.state.Load()
	if s.closed {
		return fmt.Errorf("store: view: %w", errClosed)
	}
	tx := &memTx{buckets: s.buckets}
	defer tx.end()
	return fn(tx)
}

// Update runs fn on a private copy-on-write view of the committed state and
// publishes fn's writes only if fn returns nil; otherwise it returns fn's
// error unchanged and keeps nothing.
func (m *Memory) Update(fn func(custodian.Tx) error) error {
	m.writer.Lock()
	defer m.writer.Unlock()
	s := m.state.Load()
	if s.closed {
		return fmt.Errorf("store: update: %w", errClosed)
	}
	tx := &memTx{buckets: s.buckets, writable: true}
	defer tx.end()
	if err := fn(tx); err != nil {
		return err
	}
	if tx.owned != nil {
		m.state.Store(&memState{buckets: tx.buckets})
	}
	return nil
}

// Close discards the contents. Later calls, Close included, fail.
func (m *Memory) Close() error {
	m.writer.Lock()
	defer m.writer.Unlock()
	if m.state.Load().closed {
		return fmt.Errorf("store: close: %w", errClosed)
	}
	m.state.Store(&memState{closed: true})
	return nil
}

// memTx is a transaction of a Memory store. A writable memTx copies the
// bucket map and each bucket it writes on first write (recorded in owned), so
// that the committed state it started from stays untouched.
type memTx struct {
	buckets  map[string]map[string][]byte
	writable bool
	owned    map[string]bool // buckets this tx copied; nil until the first write
	done     bool
}

func (tx *memTx) end() { tx.done = true }

func (tx *memTx) Get(bucket, key string) ([]byte, bool, error) {
	if tx.done {
		return nil, false, errTxDone
	}
	v, ok := tx.buckets[bucket][key]
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

func (tx *memTx) Put(bucket, key string, value []byte) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	if bucket == "" || key == "" {
		return fmt.Errorf("store: put %q/%q: %w", bucket, key, errEmptyName)
	}
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	tx.own(bucket)[key] = v
	return nil
}

func (tx *memTx) Delete(bucket, key string) error {
	if err := tx.checkWrite(bucket, key); err != nil {
		return err
	}
	if _, ok := tx.buckets[bucket][key]; !ok {
		return nil
	}
	delete(tx.own(bucket), key)
	return nil
}

func (tx *memTx) ForEach(bucket string, fn func(key string, value []byte) error) error {
	return tx.ForEachPrefix(bucket, "", fn)
}

// ForEachPrefix is ForEach over the keys that begin with prefix.
func (tx *memTx) ForEachPrefix(bucket, prefix string, fn func(key string, value []byte) error) error {
	return tx.each(bucket, prefix, "", fn)
}

// ForEachFrom is ForEach over the keys at or after from.
func (tx *memTx) ForEachFrom(bucket, from string, fn func(key string, value []byte) error) error {
	return tx.each(bucket, "", from, fn)
}

// each calls fn for the keys of bucket that begin with prefix and are at
// or after from, in order.
func (tx *memTx) each(bucket, prefix, from string, fn func(key string, value []byte) error) error {
	if tx.done {
		return errTxDone
	}
	b := tx.buckets[bucket]
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if k < from || !strings.HasPrefix(k, prefix) {
			continue
		}
		if err := fn(k, bytes.Clone(b[k])); err != nil {
			return err
		}
	}
	return nil
}

func (tx *memTx) checkWrite(bucket, key string) error {
	switch {
	case tx.done:
		return errTxDone
	case !tx.writable:
		return fmt.Errorf("store: write %q/%q: %w", bucket, key, errReadOnly)
	}
	return nil
}

// own returns bucket's map, private to this tx, copying it (and, on the first
// write of the tx, the map of buckets) from the committed state first.
func (tx *memTx) own(bucket string) map[string][]byte {
	if tx.owned == nil {
		tx.owned = map[string]bool{}
		tx.buckets = maps.Clone(tx.buckets)
	}
	if !tx.owned[bucket] {
		b := maps.Clone(tx.buckets[bucket])
		if b == nil {
			b = map[string][]byte{}
		}
		tx.buckets[bucket] = b
		tx.owned[bucket] = true
	}
	return tx.buckets[bucket]
}
