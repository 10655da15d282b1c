// Package engine is the custodian's storage engine: the mechanism under
// the core's rules (package custodian), which it never imports. The core
// decides what each job writes; the engine decides how it is queued,
// grouped, stored, indexed, kept resident, snapshotted and made durable.
// The records it holds are package model's.
//
// What it holds:
//
//   - State: the in-memory view of the canonical store — every claim
//     record (ClaimRecord: its meta, its resident versions) and the
//     indexes over them (active, by persona, by tier, by subject, each
//     key's field), the records of access (personas, grants, consumers,
//     tokens, requests, issuers, DEC keys and policies, summaries,
//     entities, the quarantine), the revision, the chain head and the
//     settings. The core wraps it (custodian's state) with what only the
//     rules keep. LoadClaims (through the snapshot when one is good) and
//     LoadPending read it at unlock; SetClaim and SetMeta keep it and its
//     indexes current; JobCtx notes what the journal's job replaced.
//   - Batch and Write: what one job stages (store writes, receipts, the
//     graph's delta); the bucket names of the canonical store; the
//     receipt's key, encoding and hash; ChainHead.
//   - The claim metas snapshot: State.Snap says what was written since
//     the last one; the load reads it back (choosing a generation,
//     decoding its chunks, merging what was written since), and
//     NoteMetaWrites and SnapshotDue decide the next.
//   - Disclosed sets (State.Sets): the digests of the sets receipts name.
//   - The store's interfaces (Store, Tx and the optional Appender,
//     LazyRanger, Prefixer, Seeker), which internal/store implements and
//     the core names through aliases.
//   - Journal: the single writer's queue. Jobs queue from any goroutine;
//     one goroutine takes them in order and hands them to the Engine's
//     group commit (commitGroup) a group at a time (one store commit, one fsync). Queued
//     counts the jobs waiting. Write and Apply are a group's store
//     operations.
//   - Durability: which groups are committed. The journal applies a group
//     to the view before its commit; a read that answers without a
//     receipt waits (Await) for the group it saw.
//   - Cache and Resident: the claims' content kept in memory within a byte
//     budget (second-chance eviction, never a version whose group is not
//     durable); a read the store cannot give back is an error.
//   - Index: the ordered indexes over claim records (a B-tree).
//   - Meta, AppendMeta, ChunkDecoder, WriteChunks: the claim metas and the
//     binary form of their snapshot; Intern shares repeated strings.
//   - DecodeWhere and Load: the unlock's load, decoding on every core.
//   - The check's comparisons: CompareGraph (the graph, held, against
//     the view's projection) and ClaimChunk (a chunk of the store's claim
//     metas against the view's, at a cut where the two agree).
//   - Receipts kept and rolled: LoadReceipt, the checkpoints that stand
//     for rolled receipts under a MAC (Checkpoint, CheckpointMAC, with
//     the vault's KeyDeriver), RollReceipts, and VerifyChain, which
//     checks the checkpoints and the receipts kept in full as one chain.
//   - Engine: the running part — the journal's group commit (a job's
//     Apply, then its projection (finishJob), its receipts chained, its writes staged,
//     the group stored in one transaction and marked durable), the graph
//     worker that applies the committed deltas off the writes' path
//     (HoldGraph keeps it still for a check), and the claim metas
//     snapshot writer.
//   - The projection: what graph edges each record makes (ClaimEdges,
//     Projection), the delta a job's changes make (finishJob), the
//     lineage-driven invalidation of summaries it starts (Invalidation,
//     applied to the view and stored as one record per change), and the
//     graph's catch-up at unlock (SyncGraph replays the outbox, or
//     RebuildGraph replaces the graph). ProjectionVersion numbers it.
//   - GraphLag and DeltaMerger: how far the graph has followed the view
//     (the graph is updated off the writes' path, from an outbox), and the
//     joining of consecutive deltas into one.
//
// # Lock order
//
// Locks are taken in this order, never the reverse; a lock marked leaf is
// never held while another is taken. The lock state (3) is the core's
// (package custodian), the admission cache's lock (5) its DEC glue's
// (custodian/internal/admission); the rest are the engine's. They are
// listed here so that the order is written in one place.
//
//  1. Engine.SnapMu: one claim metas snapshot at a time; held for the
//     whole snapshot, which then takes life (shared, through
//     WithView) and queues a journal job.
//  2. Engine.rollMu: one receipt roll at a time; then life (shared,
//     through WithView).
//  3. custodian Service.life (RWMutex): the lock state. Every request
//     holds it shared while it runs, including its wait for the journal;
//     Unlock, Lock and Close hold it exclusively. Taken exclusively only
//     through Engine.Locking, which first breaks the graph's holds
//     (holdMu) so that a check holding the graph cannot keep a lock
//     waiting.
//     Holding it exclusively, the lock waits for the graph (GraphLag.Wait):
//     the graph worker takes no lock above GraphLag.mu.
//  4. State.Mu (RWMutex): the view. Readers hold it shared;
//     the journal's goroutine holds it exclusively while it applies a
//     group's jobs and stages the group's writes, and releases it before
//     the store commit. A store View may run under it (a claim read back
//     by the Cache, the check's cut); a store Update never does.
//  5. Engine.holdMu (the graph's holds), admission Cache.mu
//     (admission cache, under State.Mu shared), the rate limiters' and failure
//     counters' mutexes: leaves.
//  6. Cache.mu: the eviction queue; leaf. Taken under State.Mu (a record
//     published: Admit) or under it shared (a head read back); never
//     while the store is read.
//  7. Durability.mu with Durability.cond: leaf; may be taken under
//     State.Mu. Await waits on cond, holding nothing else but what its
//     caller holds: life shared (never State.Mu).
//  8. GraphLag.mu with GraphLag.cond: leaf; may be taken under State.Mu.
//     Wait waits on cond; Applied and Fail signal it.
//  9. The store's own locks (internal/store: wmu, fmu, omu), below all of
//     these.
//
// phc's gcHeld (internal/cli/gctune.go, around the unlock's load) is
// taken alone.
//
// Atomics that matter: Resident.hd, older and flags (a record's resident
// versions; published records change only through them); Cache.durable
// (the durable group, for eviction without the view's lock);
// Journal.queued; in the core, the record's served and field caches,
// Service.unlocked (the lock state for lock-free status), lastActive (the
// idle timer) and idleLooks (tests).
//
// # Goroutines
//
// The engine starts, of its own:
//   - DecodeWhere: one decoding worker per GOMAXPROCS and one consumer;
//     all end before it returns.
//
// Engine.Start starts the journal's goroutine (Journal.Run), the graph
// worker (graphWorker) and the receipt roller (maintain, which rolls
// receipts past the owner's retention into checkpoints every hour), all
// counted in Engine.Wg and ended by closing Engine.Stop. The journal
// starts a claim metas snapshot (writeSnapshot, in Wg) when a group is
// durable and one is due; it ends on its own, or gives up once the view is
// no longer open or Stop is closed. A commit or graph update that fails
// calls Broken in a goroutine of its own, which locks the vault and ends.
//
// The core (package custodian) starts, in New, the engine and, unless
// IdleLock is negative, the idle watcher (idleWatch), also counted in
// Engine.Wg; Close closes Stop and waits for
// Wg. Unlock starts a receipt roll (RollAll, in
// Service.unlockRolls), which ends on its own. The
// unlock's load of the snapshot decodes its chunks on a worker per
// GOMAXPROCS, which end before the load does.
//
// # Runtime tuning
//
// The process's collector is tuned in one place, phc's command line
// (internal/cli/gctune.go, passed through daemon.Options.LoadGC): the steady state's GOGC, and the collector
// held off around the unlock's load, which the core runs through
// custodian.Config.LoadGC. The engine tunes nothing itself.
package engine
