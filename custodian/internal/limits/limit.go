package limits

import (
	"container/list"
	"sync"
	"time"
)

// maxFailureKeys bounds the keys a failures limiter tracks.
const maxFailureKeys = 10_000

// Failures limits failed attempts per key within a sliding window: after
// limit failures within window, further attempts wait until the oldest
// failure leaves the window. It guards the credential checks anyone on the
// machine can call (unlock, token minting, token exchange).
//
// Memory is bounded whatever the keys: at most maxKeys keys, each with at
// most limit failures. When a new key would exceed maxKeys, the key whose
// last failure is oldest is forgotten. Forgetting only ever lifts a block,
// so a flood of new keys can never make another key wait.
type Failures struct {
	limit   int
	window  time.Duration
	maxKeys int

	mu    sync.Mutex
	m     map[string]*list.Element // of *failureKey
	order list.List                // of *failureKey, least recently failed first
}

type failureKey struct {
	key   string
	times []time.Time // oldest first, at most limit
}

func NewFailures(limit int, window time.Duration) *Failures {
	return NewFailuresCap(limit, window, maxFailureKeys)
}

// NewFailuresCap is newFailures tracking at most maxKeys keys.
func NewFailuresCap(limit int, window time.Duration, maxKeys int) *Failures {
	return &Failures{limit: limit, window: window, maxKeys: max(maxKeys, 1), m: make(map[string]*list.Element)}
}

// Wait returns how long an attempt for key must wait at now (0: go ahead).
func (f *Failures) Wait(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.m[key]
	if !ok {
		return 0
	}
	fk := e.Value.(*failureKey)
	kept := fk.times[:0]
	for _, t := range fk.times {
		if now.Sub(t) < f.window {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		f.order.Remove(e)
		delete(f.m, key)
		return 0
	}
	fk.times = kept
	if len(kept) < f.limit {
		return 0
	}
	return max(f.window-now.Sub(kept[0]), time.Second)
}

// Note records a failure for key at now.
func (f *Failures) Note(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.m[key]; ok {
		fk := e.Value.(*failureKey)
		if len(fk.times) >= f.limit { // only the newest limit failures matter
			fk.times = append(fk.times[:0], fk.times[len(fk.times)-f.limit+1:]...)
		}
		fk.times = append(fk.times, now)
		f.order.MoveToBack(e)
		return
	}
	for len(f.m) >= f.maxKeys {
		oldest := f.order.Front()
		f.order.Remove(oldest)
		delete(f.m, oldest.Value.(*failureKey).key)
	}
	f.m[key] = f.order.PushBack(&failureKey{key: key, times: []time.Time{now}})
}

// tracked returns how many keys f tracks.
func (f *Failures) tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}
