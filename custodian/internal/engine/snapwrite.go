package engine

import (
	"errors"
	"fmt"
	"time"
)

// ErrSnapshotStale is why a snapshot is given up: the vault was locked (or
// the service stopped) while it was written.
var ErrSnapshotStale = errors.New("the vault was locked")

// SnapKey is the store key of chunk chunk of snapshot generation gen.
func SnapKey(gen uint64, chunk int) string { return fmt.Sprintf("%016x/%08x", gen, chunk) }

// WriteChunks stores n metas (meta(i) the i-th) as the chunks of snapshot
// generation gen in bucket, chunks of about chunkBytes, and returns the
// keys it wrote. It gives up with ErrSnapshotStale once current reports
// false (the store's cipher is gone) or stop is closed.
//
// Each chunk is stored in a commit of its own, small enough for the
// store's log, so that the journal's commits (a read's receipt) wait
// behind one chunk at most. A snapshot is background work: after each
// chunk it rests as long as the chunk took (encoding and storing it), so
// that it takes at most about half of a core and of the store's commits
// from the requests being served meanwhile.
func WriteChunks(store Store, bucket string, gen uint64, n int, meta func(i int) *Meta, chunkBytes int, current func() bool, stop <-chan struct{}) (map[string]bool, error) {
	written := map[string]bool{}
	began := time.Now()
	put := func(chunk []byte) error {
		if !current() {
			return ErrSnapshotStale // locked meanwhile: the store's cipher is gone
		}
		key := SnapKey(gen, len(written))
		if err := store.Update(func(tx Tx) error { return tx.Put(bucket, key, chunk) }); err != nil {
			return err
		}
		written[key] = true
		rest := time.NewTimer(time.Since(began))
		defer rest.Stop()
		select {
		case <-stop:
			return ErrSnapshotStale
		case <-rest.C:
		}
		began = time.Now()
		return nil
	}
	// One buffer for every chunk: the store keeps no value it was given.
	buf := make([]byte, 0, chunkBytes+4096)
	for i := range n {
		if len(buf) == 0 {
			buf = append(buf, SnapFormat)
		}
		buf = AppendMeta(buf, meta(i))
		if len(buf) >= chunkBytes || i == n-1 {
			if err := put(buf); err != nil {
				return nil, err
			}
			buf = buf[:0]
		}
	}
	return written, nil
}
