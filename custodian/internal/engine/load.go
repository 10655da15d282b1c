package engine

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// loadBatch is how many values a decoding worker takes at once.
const loadBatch = 256

// DecodeWhere decodes the values of bucket whose keys keep accepts (nil:
// all) as T on all cores, with decode (given a scratch map of its worker's
// to reuse), and calls add for each, in key order, from one goroutine. The
// values of the keys keep refuses are neither opened nor decoded. The
// store hands values over one by one in key order (decrypting them, on the
// workers when the Tx is a LazyRanger); decoding them is the larger cost,
// and runs while the store goes on reading.
func DecodeWhere[T any](tx Tx, bucket string, keep func(key string) bool, decode func(raw []byte, v *T, scratch map[string]string) error, add func(key string, v *T) error) error {
	type item struct {
		key  string
		raw  []byte
		lazy func() ([]byte, error) // opens raw, when the store defers it
		v    *T
		err  error
	}
	type batch struct {
		items []item
		done  chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *batch, workers*2)
	ready := make(chan *batch, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// decode may fill a map already there instead of making one.
			scratch := make(map[string]string, 8)
			for b := range todo {
				for i := range b.items {
					it := &b.items[i]
					if it.lazy != nil {
						if it.raw, it.err = it.lazy(); it.err != nil {
							it.lazy = nil
							continue
						}
						it.lazy = nil
					}
					it.v = new(T)
					if err := decode(it.raw, it.v, scratch); err != nil {
						it.err = fmt.Errorf("%s %s: %w", bucket, it.key, err)
					}
					it.raw = nil
				}
				close(b.done)
			}
		})
	}
	// The consumer applies batches in order as they are decoded.
	var addErr error
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for b := range ready {
			<-b.done
			for _, it := range b.items {
				if addErr != nil {
					break
				}
				if it.err != nil {
					addErr = it.err
					break
				}
				addErr = add(it.key, it.v)
			}
		}
	}()
	cur := &batch{done: make(chan struct{})}
	flush := func() {
		if len(cur.items) == 0 {
			return
		}
		ready <- cur
		todo <- cur
		cur = &batch{done: make(chan struct{})}
	}
	queue := func(it item) error {
		if keep != nil && !keep(it.key) {
			return nil
		}
		cur.items = append(cur.items, it)
		if len(cur.items) == loadBatch {
			flush()
		}
		return nil
	}
	var err error
	if lr, ok := tx.(LazyRanger); ok {
		// Opening (decrypting) runs on the workers too.
		err = lr.ForEachLazy(bucket, func(k string, v func() ([]byte, error)) error { return queue(item{key: k, lazy: v}) })
	} else {
		err = tx.ForEach(bucket, func(k string, v []byte) error { return queue(item{key: k, raw: v}) })
	}
	flush()
	close(todo)
	close(ready)
	wg.Wait()
	<-consumed
	if err != nil {
		return err
	}
	return addErr
}

var gcHeld sync.Mutex

// WithoutGC runs fn, which builds a large structure from nothing, with the
// collector held off unless the heap grows by more than loadHeadroom:
// collecting while the view grows mostly traces what is being built. The
// caller collects afterwards (the core's Unlock).
func WithoutGC(fn func() error) error {
	const loadHeadroom = 1 << 30
	gcHeld.Lock() // two loads at once would restore each other's settings
	defer gcHeld.Unlock()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	prevLimit := debug.SetMemoryLimit(-1)
	prevPct := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(min(prevLimit, int64(stats.HeapSys+stats.StackSys)+loadHeadroom))
	defer func() {
		debug.SetGCPercent(prevPct)
		debug.SetMemoryLimit(prevLimit)
	}()
	return fn()
}
