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

// Tuning is a store's tuning for a test: zero fields keep the defaults;
// CloseFlushBytes below zero is zero (Close copies nothing).
type Tuning struct {
	FlushDelay      time.Duration
	SegmentSize     int64
	CloseFlushBytes int
}

// OpenBoltTuned is OpenBolt with tune.
func OpenBoltTuned(path string, c Cipher, tune Tuning) (*Bolt, error) {
	t := defaultTuning
	if tune.FlushDelay != 0 {
		t.flushDelay = tune.FlushDelay
	}
	if tune.SegmentSize != 0 {
		t.segmentSize = tune.SegmentSize
	}
	if tune.CloseFlushBytes != 0 {
		t.closeFlushBytes = max(tune.CloseFlushBytes, 0)
	}
	return openBolt(path, c, t)
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

// FlushGivenUp runs a flush that Close has asked to stop.
func (b *Bolt) FlushGivenUp() error {
	stop := make(chan struct{})
	close(stop)
	return b.flushUnless(stop)
}
