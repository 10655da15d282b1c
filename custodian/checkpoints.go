package custodian

// Receipt retention. Receipts are an append-only log in the store, keyed
// by sequence number. Those older than the owner's retention (a year by
// default) are rolled, oldest first, into checkpoints: one record per
// rolled range that keeps what the chain needs — the range, its first
// receipt's link to the one before, its last receipt's hash, a digest over
// every hash in it, and the counts of allow and deny decisions — under a
// MAC with a key derived from the vault's keys. The rolled receipts, and the
// disclosed sets of months no kept receipt names, are then deleted in the
// same commit. Verification walks the checkpoints, then the receipts kept
// in full, as one chain.
