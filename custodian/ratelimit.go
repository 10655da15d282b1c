package custodian

import (
	"sync"
	"time"
)

// buckets rate-limits the service tokens: one token bucket per key (a
// token) and kind, refilled continuously at its per-minute rate, holding at
// most a minute's worth.
type buckets struct {
	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// limit is one bucket a request must find a token in: its key and rate per
// minute.
type limit struct {
	key  string
	rate int
}

// take spends one request from every bucket of limits at now, or, when one
// of them is empty, spends nothing and reports how long to wait.
func (b *buckets) take(now time.Time, limits ...limit) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[string]*bucket)
	}
	var wait time.Duration
	bks := make([]*bucket, len(limits))
	for i, l := range limits {
		if l.rate <= 0 {
			return time.Minute
		}
		bk, ok := b.m[l.key]
		if !ok {
			if len(b.m) > 100_000 {
				clear(b.m)
			}
			bk = &bucket{tokens: float64(l.rate), last: now}
			b.m[l.key] = bk
		}
		perSec := float64(l.rate) / 60
		if el := now.Sub(bk.last).Seconds(); el > 0 {
			bk.tokens = min(float64(l.rate), bk.tokens+el*perSec)
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

// rateLimit spends one read or write of consumer principal p; the owner is
// not limited. The rates count per token (PCP §7): each token has the
// owner's rate, or the lower one it asked for when it was minted, and no
// token's use spends another's, so a fresh token's first request is never
// refused for what another did. Minting more tokens is bounded by the
// app's live-token quota (tooManyTokens), which so bounds the app's total.
// Callers must not hold s.life.
func (s *Service) rateLimit(op string, p Principal, write bool) error {
	if p.kind != PrincipalConsumer || p.token == nil {
		return nil
	}
	s.life.RLock()
	st := s.st
	if st == nil {
		s.life.RUnlock()
		return nil // the operation itself answers vault_locked
	}
	st.Mu.RLock()
	set := st.Settings
	st.Mu.RUnlock()
	s.life.RUnlock()
	rate, kind := set.ReadRate(), "r:"
	if write {
		rate, kind = set.WriteRate(), "w:"
	}
	if t := p.token.RateLimit; t != nil {
		own := t.Reads
		if write {
			own = t.Writes
		}
		if own > 0 && own < rate {
			rate = own
		}
	}
	if wait := s.rates.take(s.eng.Clock.Now(), limit{key: kind + "token:" + p.token.ID, rate: rate}); wait > 0 {
		return &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	return nil
}
