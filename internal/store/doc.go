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
// # The log
//
// An Update's writes (sealed values, deletions) are one record of a
// write-ahead log, the directory path+".wal" (0700) of preallocated segment
// files (0600): Update returns once the record and everything before it is
// written and fdatasync'ed, one sync per Update (the core's journal puts a
// whole group of requests in one). The writes then wait in an in-memory
// overlay, ordered by key, which every later transaction reads over the
// bbolt file; the flusher copies the overlay into the file in one bbolt
// commit a moment later (flushDelay, or at once past flushBytes), records
// in the file the last record it holds, and the log reuses segments whose
// records are all in the file. An Update larger than directBytes skips the
// log and commits to the file directly, with everything waiting before it.
// OpenBolt replays the records the file lacks before it returns, and fails
// with [ErrCorrupt] if a record the log acknowledged is missing or damaged
// while later ones are present; a record cut short by a crash (never
// acknowledged) ends the log. Updates run one at a time; Views run
// concurrently with them and see only committed state. [Bolt.Check] flushes,
// then runs bbolt's structural check, for phc check.
//
// # Caveats
//
//   - The file shows, in plaintext, every bucket name and key, the size of each
//     value (plus the cipher's overhead) and, to a careful reader, the order of
//     writes.
//   - Each Update pays for one fdatasync of the log (about 0.15 ms here, see
//     BenchmarkBoltUpdate). Put many writes in one Update where they belong
//     together.
//   - The log holds ciphertexts and plaintext bucket names and keys, like the
//     file; a clean Close leaves nothing in it that the file lacks.
//   - Never call View (or Check) inside an Update's closure: the closure
//     holds a bbolt read transaction, and a flush that grows the file waits
//     for it while the nested View waits for the flush.
//   - An Update whose fdatasync failed reports an error, but its record may
//     still reach the disk and be replayed at the next open (as with any
//     write-ahead log); the store refuses further Updates until reopened.
//   - A View that waits for an Update to finish can deadlock: a commit that
//     grows the file waits until every open View has returned. Long Views
//     also keep bbolt from reusing freed pages, so the file grows.
//   - Check verifies pages and structure, not that each value decrypts.
//   - [Memory] copies every bucket an Update writes to (copy-on-write); it is
//     meant for tests, not for large data.
//
// # Compatibility
//
// The layout above, the log's frames (see wal.go) and the "phc/store/v1"
// additional-data prefix are the file format. A file without a log (before
// it existed) opens as one whose log is empty. Changing either makes existing files unreadable and needs a
// migration, and a new prefix version.
package store
