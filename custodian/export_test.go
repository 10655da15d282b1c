package custodian

// This file exports internals to the external tests (package custodian_test).
// Those tests live outside the package because they use internal/store,
// which imports custodian: an in-package test importing it would be an
// import cycle.

// Store layout, for tests that inspect or tamper with the store directly.
const (
	BucketReceipts = bucketReceipts
	BucketMeta     = bucketMeta
	MetaRevision   = metaRevision
	MetaHead       = metaHead
)

// ReceiptKey is the store key of the receipt with sequence number seq.
func ReceiptKey(seq uint64) string { return receiptKey(seq) }

// ReceiptHash recomputes the chain hash of r.
func ReceiptHash(r *Receipt) string { return receiptHash(r) }

// ForgedOwner is an owner principal that no session backs, as code outside
// the package could never build.
func ForgedOwner() Principal { return Principal{kind: PrincipalOwner} }

// CommitUnencodable commits a job that changes the view (it takes a
// revision) and stages a value that cannot be encoded.
func (s *Service) CommitUnencodable() error {
	return s.write("test", Principal{}, func(st *state, b *batch) error {
		b.nextRevision()
		b.put(bucketMeta, "unencodable", make(chan int))
		return nil
	})
}
