package custodian

import (
	"context"
	"encoding/json"
	"strconv"
)

// ContextQuery asks for context for a purpose.
type ContextQuery struct {
	Purpose     string
	Persona     string // optional: only claims in this persona
	MinRevision uint64 // optional: the state must include this revision
}

// ContextResult is the eligible, current context a recipient receives.
type ContextResult struct {
	Revision uint64 `json:"revision"`
	// Claims are shared with the custodian's cache: read them, never
	// modify them.
	Claims []*Claim `json:"claims"`

	raw []json.RawMessage // Claims, encoded (from the records' caches)
}

// MarshalJSON encodes r from the claims' cached encodings: a read of many
// fields does not encode them again.
func (r ContextResult) MarshalJSON() ([]byte, error) {
	if len(r.raw) != len(r.Claims) {
		type plain ContextResult
		return json.Marshal(plain(r))
	}
	n := 64
	for _, c := range r.raw {
		n += len(c) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"revision":`...)
	b = strconv.AppendUint(b, r.Revision, 10)
	b = append(b, `,"claims":[`...)
	for i, c := range r.raw {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	return append(b, "]}"...), nil
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
	out := ContextResult{Revision: st.revision, Claims: []*Claim{}}
	grants := st.grantsFor(p.Consumer, OpRead, now)
	var records []string
	if len(grants) > 0 {
		active := st.activeClaims()
		out.Claims = make([]*Claim, 0, len(active))
		out.raw = make([]json.RawMessage, 0, len(active))
		records = make([]string, 0, len(active))
		for _, r := range active {
			if q.Persona != "" && !r.inPersona(q.Persona) {
				continue
			}
			if g := readGrant(grants, p, r, q.Purpose, now); g != nil {
				sc, err := served(r, g)
				if err != nil {
					st.mu.RUnlock()
					return ContextResult{}, wrap(op, KindInternal, err)
				}
				out.Claims = append(out.Claims, &sc.claim)
				out.raw = append(out.raw, sc.raw)
				records = append(records, sc.claim.Ref())
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
