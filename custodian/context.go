package custodian

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"
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
	var err error
	if q.Purpose, err = p.readPurpose(op, q.Purpose); err != nil {
		return ContextResult{}, err
	}
	if !validPurpose(q.Purpose) {
		return ContextResult{}, fail(op, KindInvalid, errPurpose)
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return ContextResult{}, err
	}
	if q.Persona != "" && !validSegment(q.Persona) {
		return ContextResult{}, fail(op, KindInvalid, "malformed persona id")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return ContextResult{}, err
	}
	defer release()
	if !p.token.canRead() {
		return ContextResult{}, s.refuse(st, p, "context.read", fail(op, KindModeDenied, "the token does not allow reads"))
	}
	if err := st.reached(op, q.MinRevision); err != nil {
		return ContextResult{}, err
	}
	var (
		out    ContextResult
		encErr error
	)
	rc := Receipt{Actor: p.actor(), Operation: "context.read", Recipient: p.Consumer, Purpose: q.Purpose}
	_, err = s.recipientRead(st, p, rc, func(st *state, now time.Time) (records []string, used []*Grant, _ *Error) {
		out, encErr = ContextResult{Revision: st.revision, Claims: []*Claim{}}, nil
		if !st.live(p, now) {
			return nil, nil, nil
		}
		grants := st.grantsFor(p.Consumer, OpRead, now)
		if q.Persona != "" {
			// Filter only by a persona the reader may see: one its grant
			// names. Membership in any other persona stays hidden.
			named := grants[:0:0]
			for _, g := range grants {
				if slices.Contains(g.Selectors.Personas, q.Persona) {
					named = append(named, g)
				}
			}
			grants = named
		}
		if len(grants) == 0 {
			return nil, nil, nil
		}
		active := st.candidates(p, grants, q.Purpose, false)
		out.Claims = make([]*Claim, 0, len(active))
		out.raw = make([]json.RawMessage, 0, len(active))
		records = make([]string, 0, len(active))
		seen := map[*Grant]bool{}
		var memo map[string]bool // node answers, made with the first relationship
		for _, r := range active {
			if q.Persona != "" && !r.inPersona(q.Persona) {
				continue
			}
			if memo == nil && r.head().Kind == KindRelationship {
				memo = map[string]bool{}
			}
			g := st.recipientGrant(grants, p, r, q.Purpose, now, memo)
			if g == nil {
				continue
			}
			sc, err := served(r, g)
			if err != nil {
				encErr = err
				return nil, nil, nil
			}
			out.Claims = append(out.Claims, &sc.claim)
			out.raw = append(out.raw, sc.raw)
			records = append(records, sc.claim.Ref())
			if !seen[g] {
				seen[g] = true
				used = append(used, g)
			}
		}
		return records, used, nil
	})
	if err == nil && encErr != nil {
		err = wrap(op, KindInternal, encErr)
	}
	if err != nil {
		return ContextResult{}, err
	}
	return out, nil
}
