package custodian

import (
	"context"
)

// ContextQuery asks for context for a purpose.
type ContextQuery struct {
	Purpose     string
	Persona     string // optional: only claims in this persona
	MinRevision uint64 // optional: the state must include this revision
}

// ContextResult is the eligible, current context a recipient receives.
type ContextResult struct {
	Revision uint64  `json:"revision"`
	Claims   []Claim `json:"claims"`
}

// Context returns every active claim the consumer p may read for q.Purpose:
// covered by one of its grants in force for that purpose, inside its token's
// scope, eligible under its restrictions and tier. Claims it may not see are
// simply absent. The disclosure is receipted, and durable, before it is
// returned. A MinRevision this custodian has not reached is KindConflict.
func (s *Service) Context(ctx context.Context, p Principal, q ContextQuery) (ContextResult, error) {
	const op = "context"
	if p.kind != PrincipalConsumer {
		if p.IsOwner() {
			return ContextResult{}, fail(op, KindInvalid, "context is for recipients; the owner lists claims")
		}
		return ContextResult{}, fail(op, KindUnauthenticated, "")
	}
	if !p.token.canRead() {
		return ContextResult{}, fail(op, KindModeDenied, "the token does not allow reads")
	}
	if !validPurpose(q.Purpose) {
		return ContextResult{}, fail(op, KindInvalid, errPurpose)
	}
	if q.Persona != "" && !validSegment(q.Persona) {
		return ContextResult{}, fail(op, KindInvalid, "malformed persona id")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return ContextResult{}, err
	}
	defer release()
	now := s.clock.Now()
	st.mu.RLock()
	if q.MinRevision > st.revision {
		st.mu.RUnlock()
		return ContextResult{}, fail(op, KindConflict, "min_revision is ahead of this custodian")
	}
	out := ContextResult{Revision: st.revision, Claims: []Claim{}}
	grants := st.grantsFor(p.Consumer, OpRead, now)
	var records []string
	if len(grants) > 0 {
		for _, r := range st.activeClaims() {
			if q.Persona != "" && !r.inPersona(q.Persona) {
				continue
			}
			if g := readGrant(grants, p, r, q.Purpose, now); g != nil {
				c := recipientView(r, g)
				out.Claims = append(out.Claims, c)
				records = append(records, c.Ref())
			}
		}
	}
	st.mu.RUnlock()
	rc := Receipt{Actor: p.actor(), Operation: "context.read", Recipient: p.Consumer, Purpose: q.Purpose,
		Decision: "allow", Records: records, Revision: out.Revision}
	if len(records) == 0 {
		rc.Decision, rc.Constraint = "deny", "not_found"
	}
	if err := s.commit(st, func(st *state, b *batch) error { b.receipt(rc); return nil }); err != nil {
		return ContextResult{}, err
	}
	return out, nil
}
