package limits

import (
	"sync"
	"time"
)

// Buckets rate-limits the service tokens: one token bucket per key (a
// token) and kind, refilled continuously at its per-minute rate, holding at
// most a minute's worth.
type Buckets struct {
	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// Limit is one bucket a request must find a token in: its key and rate per
// minute.
type Limit struct {
	Key  string
	Rate int
}

// Take spends one request from every bucket of limits at now, or, when one
// of them is empty, spends nothing and reports how long to wait.
func (b *Buckets) Take(now time.Time, limits ...Limit) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[string]*bucket)
	}
	var wait time.Duration
	bks := make([]*bucket, len(limits))
	for i, l := range limits {
		if l.Rate <= 0 {
			return time.Minute
		}
		bk, ok := b.m[l.Key]
		if !ok {
			if len(b.m) > 100_000 {
				clear(b.m)
			}
			bk = &bucket{tokens: float64(l.Rate), last: now}
			b.m[l.Key] = bk
		}
		perSec := float64(l.Rate) / 60
		if el := now.Sub(bk.last).Seconds(); el > 0 {
			bk.tokens = min(float64(l.Rate), bk.tokens+el*perSec)
			bk.last = now
		}
		if bk.tokens < 1 {
			wait = max(wait, time.Duration((1-bk.tokens)/perSec*float64(time.Second)), time.Second)
		}
		bks[i] = bk
	}
	if wait > 0 {
		return wait
	}
	for _, bk := range bks {
		bk.tokens--
	}
	return 0
}
