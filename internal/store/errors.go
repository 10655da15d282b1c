package store

import "errors"

// ErrCorrupt reports a stored value that does not decrypt under its own
// bucket and key: the file was damaged or tampered with, or a ciphertext was
// moved from another record. The error that wraps it names the bucket and the
// key, never the value, and carries no cause from the cipher (a failed
// authentication is deliberately flat).
var ErrCorrupt = errors.New("store: corrupt value")

// Errors no caller branches on: they name a misuse of the store.
var (
	errEmptyName = errors.New("store: empty bucket or key name")
	errReadOnly  = errors.New("store: write in a read-only transaction")
	errTxDone    = errors.New("store: transaction used after its closure returned")
	errClosed    = errors.New("store: closed")
	errReserved  = errors.New("store: the bucket is the store's own")
	errTooLarge  = errors.New("store: key or value larger than the store allows")
)
