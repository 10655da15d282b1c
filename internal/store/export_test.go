package store

import (
	"time"

	"go.etcd.io/bbolt"
)

// LeafPages returns the number of leaf pages of bucket, for tests.
func (b *Bolt) LeafPages(bucket string) int {
	n := 0
	b.flush()
	b.db.View(func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(bucket)); bk != nil {
			n = bk.Stats().LeafPageN
		}
		return nil
	})
	return n
}

// Crash abandons b as a killed process would: the flusher stops, and
// nothing waiting in the log is copied into the file.
func (b *Bolt) Crash() {
	b.closed.Store(true)
	close(b.stop)
	<-b.done
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.log.close()
	b.db.Close()
}

// Flush copies the log into the file now.
func (b *Bolt) Flush() error { return b.flush() }

// LogDir returns the directory of b's log.
func (b *Bolt) LogDir() string { return b.path + ".wal" }

// SetSegmentSize sets the size of new log segments until the test ends.
func SetSegmentSize(t interface{ Cleanup(func()) }, n int64) {
	old := segmentSize
	segmentSize = n
	t.Cleanup(func() { segmentSize = old })
}

// Frame returns the log frame of record seq holding one put.
func Frame(seq uint64, bucket, key string, value []byte) []byte {
	return sealFrame(appendOp(make([]byte, frameHeader), walOp{op: opPut, bucket: bucket, key: key, value: value}), seq)
}

// ReadSegment calls fn for each op of each record of a segment's data,
// from record first, as OpenBolt's replay reads it.
func ReadSegment(data []byte, first uint64, fn func(seq uint64, op byte, bucket, key string, value []byte)) error {
	_, err := readFrames(data, first, func(seq uint64, payload []byte) error {
		return decodeOps(payload, func(o walOp) error {
			fn(seq, o.op, o.bucket, o.key, o.value)
			return nil
		})
	})
	return err
}

// SetFlushDelay sets the flusher's delay until the test ends.
func SetFlushDelay(t interface{ Cleanup(func()) }, d time.Duration) {
	old := flushDelay
	flushDelay = d
	t.Cleanup(func() { flushDelay = old })
}

// SetCloseFlushBytes sets how much Close flushes until the test ends.
func SetCloseFlushBytes(t interface{ Cleanup(func()) }, n int) {
	old := closeFlushBytes
	closeFlushBytes = n
	t.Cleanup(func() { closeFlushBytes = old })
}

// FlushGivenUp runs a flush that Close has asked to stop.
func (b *Bolt) FlushGivenUp() error {
	stop := make(chan struct{})
	close(stop)
	return b.flushUnless(stop)
}
