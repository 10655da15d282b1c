package custodian

import (
	"sync"
	"time"
)

// failures limits failed attempts per key within a sliding window: after
// limit failures within window, further attempts wait until the oldest
// failure leaves the window. It guards the credential checks anyone on the
// machine can call (unlock, token minting).
type failures struct {
	limit  int
	window time.Duration

	mu sync.Mutex
	m  map[string][]time.Time
}

func newFailures(limit int, window time.Duration) *failures {
	return &failures{limit: limit, window: window, m: make(map[string][]time.Time)}
}

// wait returns how long an attempt for key must wait at now (0: go ahead).
func (f *failures) wait(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.m[key][:0]
	for _, t := range f.m[key] {
		if now.Sub(t) < f.window {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		delete(f.m, key)
		return 0
	}
	f.m[key] = kept
	if len(kept) < f.limit {
		return 0
	}
	return max(f.window-now.Sub(kept[0]), time.Second)
}

// note records a failure for key at now.
func (f *failures) note(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) > 10_000 { // bound the memory an attacker can make us use
		clear(f.m)
	}
	f.m[key] = append(f.m[key], now)
}
