package custodian

import "github.com/phc-project/phc/custodian/internal/engine"

// The store's interfaces belong to the engine (custodian/internal/engine),
// which commits to it; the core and its adapters name them here.
type (
	// Store is the canonical, durable record store the core persists to
	// (see [engine.Store]).
	Store = engine.Store
	// Tx is one transaction of a Store (see [engine.Tx]).
	Tx = engine.Tx
	// Appender is an optional capability of a [Tx] (see [engine.Appender]).
	Appender = engine.Appender
	// LazyRanger is an optional capability of a [Tx] (see
	// [engine.LazyRanger]).
	LazyRanger = engine.LazyRanger
	// Prefixer is an optional capability of a [Tx] (see [engine.Prefixer]).
	Prefixer = engine.Prefixer
	// Seeker is an optional capability of a [Tx] (see [engine.Seeker]).
	Seeker = engine.Seeker
)

// forEachFrom is [engine.ForEachFrom].
func forEachFrom(tx Tx, bucket, from string, fn func(key string, value []byte) error) error {
	return engine.ForEachFrom(tx, bucket, from, fn)
}

// forEachPrefix is [engine.ForEachPrefix].
func forEachPrefix(tx Tx, bucket, prefix string, fn func(key string, value []byte) error) error {
	return engine.ForEachPrefix(tx, bucket, prefix, fn)
}
