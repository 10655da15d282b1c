package custodian

// rateLimit spends one read or write of consumer principal p; the owner is
// not limited. The rates count per token (PCP §7): each token has the
// owner's rate, or the lower one it asked for when it was minted, and no
// token's use spends another's, so a fresh token's first request is never
// refused for what another did. Minting more tokens is bounded by the
// app's live-token quota (tooManyTokens), which so bounds the app's total.
// Callers must not hold s.life.
func (s *Service) rateLimit(op string, p Principal, write bool) error {
	if p.Kind() != PrincipalConsumer || p.Token() == nil {
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
	if t := p.Token().RateLimit; t != nil {
		own := t.Reads
		if write {
			own = t.Writes
		}
		if own > 0 && own < rate {
			rate = own
		}
	}
	if wait := s.rates.Take(s.eng.Clock.Now(), limit{Key: kind + "token:" + p.Token().ID, Rate: rate}); wait > 0 {
		return &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	return nil
}
