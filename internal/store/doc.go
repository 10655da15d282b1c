// Package store implements [custodian.Store], the core's durable record
// store: [Bolt], the product store, keeps everything in one bbolt file with
// every value encrypted; [Memory] keeps it in memory, for tests. Both pass the
// contract suite in [github.com/phc-project/phc/internal/store/storetest].
//
// # Bolt
//
// [OpenBolt] opens (or creates, mode 0600) one bbolt file and takes bbolt's
// exclusive file lock; a second opener, in this process or another, fails
// after about a second. A store bucket is a top-level bbolt bucket, created by
// the first Put into it; a store key is a key of that bucket. Bucket names
// and keys are written as given, in plaintext, which is why the core uses
// opaque identifiers for both.
//
// Every value is sealed by a [Cipher] (the vault) with the bucket name as
// category and, as additional data,
//
//	"phc/store/v1" 0x00 bucket 0x00 key
//
// so a ciphertext opens only under the record it was written to: a ciphertext
// copied to another key or bucket, or changed in any byte, reads as an error
// wrapping [ErrCorrupt], which names the bucket and key but never the value.
// An error of the cipher itself, such as a locked vault, passes through
// instead, wrapped with %w.
//
// Update is one bbolt read-write transaction: fn's writes are committed, with
// an fsync, before Update returns nil, and are discarded if fn returns an
// error. Updates run one at a time; Views run concurrently with them and see
// only committed state. [Bolt.Check] runs bbolt's structural check, for
// phc check.
//
// # Caveats
//
//   - The file shows, in plaintext, every bucket name and key, the size of each
//     value (plus the cipher's overhead) and, to a careful reader, the order of
//     writes.
//   - Each Update pays for its own commit (about a millisecond on a fast disk,
//     see BenchmarkBoltUpdate); there is no group commit yet. Put many writes
//     in one Update where they belong together.
//   - A View that waits for an Update to finish can deadlock: a commit that
//     grows the file waits until every open View has returned. Long Views
//     also keep bbolt from reusing freed pages, so the file grows.
//   - Check verifies pages and structure, not that each value decrypts.
//   - [Memory] copies every bucket an Update writes to (copy-on-write); it is
//     meant for tests, not for large data.
//
// # Compatibility
//
// The layout above and the "phc/store/v1" additional-data prefix are the file
// format. Changing either makes existing files unreadable and needs a
// migration, and a new prefix version.
package store
