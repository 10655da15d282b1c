package custodian

import "github.com/phc-project/phc/custodian/internal/engine"

// The storage engine's names, as the core and its adapters use them. The
// store's interfaces belong to the engine (custodian/internal/engine),
// which commits to it.
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
	// KeyDeriver is an optional capability of a [Vault] (see
	// [engine.KeyDeriver]).
	KeyDeriver = engine.KeyDeriver
	// Checkpoint stands for receipts rolled out of the log (see
	// [engine.Checkpoint]).
	Checkpoint = engine.Checkpoint
	// Clock tells the time; tests pass a fake (see [engine.Clock]).
	Clock = engine.Clock

	// view is the engine's view (see [engine.State]); the rules wrap it
	// (state). Unexported: adapters never name it.
	view        = engine.State
	batch       = engine.Batch
	claimIndex  = engine.ClaimIndex
	claimMeta   = engine.ClaimMeta
	claimRecord = engine.ClaimRecord
	servedClaim = engine.ServedClaim
	snapTuning  = engine.SnapTuning
	write       = engine.Write
	job         = engine.Job
)

// DefaultClaimCacheBytes is the claim cache's budget when the Config sets
// none (see [engine.DefaultClaimCacheBytes]).
const DefaultClaimCacheBytes = engine.DefaultClaimCacheBytes

// forEachPrefix is [engine.ForEachPrefix].
func forEachPrefix(tx Tx, bucket, prefix string, fn func(key string, value []byte) error) error {
	return engine.ForEachPrefix(tx, bucket, prefix, fn)
}
