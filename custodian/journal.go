package custodian

// write runs fn for p in the journal (see commit), once the vault is open
// and p's session current.
func (s *Service) write(op string, p Principal, fn func(st *state, b *batch) error) error {
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	return s.commit(st, fn)
}

// commit queues fn for the journal and waits until it is durable. fn runs
// alone against st with st.Mu held for writing. It should validate before
// it mutates st: an error from fn discards what it staged in b, but cannot
// undo what it changed in st. So an error from fn after it changed the view
// — took a revision, staged a write or a receipt, or published a record —
// breaks the view: the write fails with KindInternal (its group with it),
// nothing more is served from st, and the vault locks so that the next
// unlock reloads from the store. An error before any of that is returned as
// it is. Callers hold s.life (shared or exclusive) so that st stays current.
func (s *Service) commit(st *state, fn func(st *state, b *batch) error) error {
	return s.eng.Queue(&job{St: st.view, Apply: func(b *batch) error { return fn(st, b) }})
}

// commitAlone is commit for a job that runs as a group of its own (see
// engine.Job.Alone).
func (s *Service) commitAlone(st *state, fn func(st *state, b *batch) error) error {
	return s.eng.Queue(&job{St: st.view, Apply: func(b *batch) error { return fn(st, b) }, Alone: true})
}

// lockBroken locks the vault after a failed commit, if st is still current.
func (s *Service) lockBroken(st *view) {
	s.lockLife(st) // a stale st breaks no check of the state open now
	defer s.life.Unlock()
	if s.st != nil && s.st.view == st {
		s.lockLocked()
	}
}

// withView runs fn with life held shared, on the open view (nil while
// locked).
func (s *Service) withView(fn func(st *view) error) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		return fn(nil)
	}
	return fn(s.st.view)
}
