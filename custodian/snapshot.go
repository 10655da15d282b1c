package custodian

// The claim metas snapshot. The unlock needs every claim's meta (see
// claimMeta): read one stored value at a time — a bbolt lookup, a
// decryption and a JSON decoding per claim — that is seconds at a million
// claims. So the metas are also kept as a snapshot: every claim's meta in a
// compact binary form, active claims first in index order, in chunks of
// about a MiB that the store encrypts each as one value. The unlock reads
// the snapshot, then the metas written since it was taken, which the
// journal appends to a log (bucketMetaLog) as it writes them, in write
// order: at a million claims a copy under the claim's own id (as builds
// before kept them, in bucketMetaDirty) was a page of the store rewritten
// per write, scattered over the file; the log's new entries share the
// last page. When the log grows past a share of the vault
// (snapTuning), a new snapshot is written in the background and the
// log emptied of the entries it covers.
//
// The snapshot is only ever a faster way to read bucketClaimMeta: a store
// without one (or with one this version cannot read, or whose log it cannot
// trust) loads from the metas themselves, and the next snapshot replaces it.
