package engine

import "strings"

// Store is the canonical, durable record store the core persists to. The
// core never sees a transaction outside the closures below, and values
// handed to and returned by a Store are plaintext: an implementation that
// encrypts (internal/store's bbolt store) does so below this interface.
//
// Keys and bucket names are opaque identifiers chosen by the core; they never
// contain a claim's value or a person's name, because an encrypting
// implementation may keep them in plaintext.
type Store interface {
	// View runs fn in a read-only transaction with a consistent snapshot.
	// fn's error is returned unchanged.
	View(fn func(Tx) error) error

	// Update runs fn in a read-write transaction. When fn returns nil the
	// transaction commits and Update returns only after the commit is
	// durable (fsync'ed); when fn returns an error nothing fn wrote is
	// kept and that error is returned unchanged. Update calls may be
	// serialised by the implementation. fn must not call View or Update.
	Update(fn func(Tx) error) error

	// Close releases the store. Calls after Close fail.
	Close() error
}

// Tx is one transaction of a Store. A Tx must not be used after its closure
// returns, nor from more than one goroutine.
type Tx interface {
	// Get returns a copy of the value stored under key in bucket. ok is
	// false, with a nil error, when the bucket or the key does not exist.
	// The returned slice belongs to the caller.
	Get(bucket, key string) (value []byte, ok bool, err error)

	// Put stores value under key in bucket, creating the bucket if needed.
	// The store does not retain value after Put returns. Empty bucket or
	// key names are refused with an error.
	Put(bucket, key string, value []byte) error

	// Delete removes key from bucket. Deleting a missing key or a key of a
	// missing bucket is not an error.
	Delete(bucket, key string) error

	// ForEach calls fn for every key of bucket in ascending byte order of
	// the key. A missing bucket has no keys. The value passed to fn belongs
	// to fn. If fn returns an error, iteration stops and ForEach returns it
	// unchanged. fn must not modify the bucket.
	ForEach(bucket string, fn func(key string, value []byte) error) error
}

// Appender is an optional capability of a [Tx]. Append is Put for a key
// that sorts after every key already in bucket (receipts by sequence
// number, the graph outbox by revision), so that an implementation may pack
// its pages for appends instead of leaving room for inserts between keys.
// The core uses it where it knows the key is the greatest, and Put where a
// Tx lacks it.
type Appender interface {
	Append(bucket, key string, value []byte) error
}

// LazyRanger is an optional capability of a [Tx]. ForEachLazy is ForEach
// that hands fn, in place of each value, a function returning it: opening a
// value (decrypting it) is then up to whoever calls that function, on any
// goroutine, any number of times, until the transaction's closure returns.
// The view's load opens and decodes values on every core this way.
type LazyRanger interface {
	ForEachLazy(bucket string, fn func(key string, value func() ([]byte, error)) error) error
}

// Prefixer is an optional capability of a [Tx]. ForEachPrefix is ForEach
// over the keys that begin with prefix, found without visiting the others
// (an index kept as keys "owner/item" lists one owner's items). Use
// [ForEachPrefix], which falls back to ForEach.
type Prefixer interface {
	ForEachPrefix(bucket, prefix string, fn func(key string, value []byte) error) error
}

// Seeker is an optional capability of a [Tx]. ForEachFrom is ForEach over
// the keys at or after from, found without visiting those before it, so
// that a long walk over a bucket can go in short transactions, each
// beginning where the last stopped. Use [ForEachFrom], which falls back to
// ForEach.
type Seeker interface {
	ForEachFrom(bucket, from string, fn func(key string, value []byte) error) error
}

// ForEachFrom calls fn for the keys of bucket at or after from, in order,
// through tx's Seeker if it has one.
func ForEachFrom(tx Tx, bucket, from string, fn func(key string, value []byte) error) error {
	if sk, ok := tx.(Seeker); ok {
		return sk.ForEachFrom(bucket, from, fn)
	}
	return tx.ForEach(bucket, func(k string, v []byte) error {
		if k < from {
			return nil
		}
		return fn(k, v)
	})
}

// ForEachPrefix calls fn for the keys of bucket that begin with prefix, in
// order, through tx's Prefixer if it has one.
func ForEachPrefix(tx Tx, bucket, prefix string, fn func(key string, value []byte) error) error {
	if p, ok := tx.(Prefixer); ok {
		return p.ForEachPrefix(bucket, prefix, fn)
	}
	return tx.ForEach(bucket, func(k string, v []byte) error {
		if !strings.HasPrefix(k, prefix) {
			return nil
		}
		return fn(k, v)
	})
}
