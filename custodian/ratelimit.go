package custodian

import (
	"sync"
	"time"
)

// Default request rates of a service token, per minute (PCP): reads and
// writes are counted apart. The owner's settings may change the defaults;
// a token may ask for less, never more.
const (
	defaultReadsPerMinute  = 60
	defaultWritesPerMinute = 10
)

// buckets rate-limits service tokens: one token bucket per token and kind,
// refilled continuously at its per-minute rate, holding at most a minute's
// worth.
type buckets struct {
	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// take spends one request of key at rate per minute at now, or reports how
// long to wait for one.
func (b *buckets) take(key string, rate int, now time.Time) time.Duration {
	if rate <= 0 {
		return time.Minute
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[string]*bucket)
	}
	bk, ok := b.m[key]
	if !ok {
		if len(b.m) > 100_000 {
			clear(b.m)
		}
		bk = &bucket{tokens: float64(rate), last: now}
		b.m[key] = bk
	}
	perSec := float64(rate) / 60
	if el := now.Sub(bk.last).Seconds(); el > 0 {
		bk.tokens = min(float64(rate), bk.tokens+el*perSec)
		bk.last = now
	}
	if bk.tokens >= 1 {
		bk.tokens--
		return 0
	}
	return max(time.Duration((1-bk.tokens)/perSec*float64(time.Second)), time.Second)
}

// rateLimit spends one read or write of consumer principal p's token; the
// owner is not limited. Callers must not hold s.life.
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
	st.mu.RLock()
	set := st.settings
	st.mu.RUnlock()
	s.life.RUnlock()
	rate, kind := set.readsPerMinute(), "r:"
	if write {
		rate, kind = set.writesPerMinute(), "w:"
	}
	if t := p.token.RateLimit; t != nil {
		if write && t.Writes > 0 {
			rate = min(rate, t.Writes)
		}
		if !write && t.Reads > 0 {
			rate = min(rate, t.Reads)
		}
	}
	if wait := s.rates.take(kind+p.token.ID, rate, s.clock.Now()); wait > 0 {
		return &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	return nil
}
