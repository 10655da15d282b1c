package custodian

import "github.com/phc-project/phc/custodian/internal/engine"

// Types of package engine, under the names the rules use.
type (
	State        = engine.State
	batch        = engine.Batch
	chainHead    = engine.ChainHead
	claimIndex   = engine.ClaimIndex
	claimMeta    = engine.ClaimMeta
	claimRecord  = engine.ClaimRecord
	deltaMerger  = engine.DeltaMerger
	jobCtx       = engine.JobCtx
	servedClaim  = engine.ServedClaim
	snapTuning   = engine.SnapTuning
	snapshotInfo = engine.SnapshotInfo
	write        = engine.Write
)

const DefaultClaimCacheBytes = engine.DefaultClaimCacheBytes
