package custodian

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/phc-project/phc/custodian/internal/localvault"
	"github.com/phc-project/phc/custodian/internal/model"
)

// Context returns every active claim the consumer p may read for q.Purpose:
// covered by one of its grants in force for that purpose, inside its token's
// scope, eligible under its restrictions, tier and the guardrails of the
// personas its grants reach it through. Claims it may not see are simply
// absent. A read naming a persona that a grant for the purpose selects also
// receives the persona's preferences, labelled advisory; when the persona's
// guardrails forbid the read itself under every such grant (its purpose or
// route), it is KindRestrictionBlocked. The disclosure is receipted, and durable, before it is
// returned. A MinRevision this custodian has not reached is KindConflict.
func (s *Service) Context(ctx context.Context, p Principal, q ContextQuery) (ContextResult, error) {
	const op = "context"
	if p.Kind() != PrincipalConsumer {
		switch {
		case p.IsOwner():
			return ContextResult{}, model.Fail(op, KindInvalid, "context is for recipients; the owner lists claims")
		case p.Kind() == PrincipalSealed:
			return ContextResult{}, model.Fail(op, KindLocked, "")
		}
		return ContextResult{}, model.Fail(op, KindUnauthenticated, "")
	}
	var err error
	if q.Purpose, err = p.ReadPurpose(op, q.Purpose); err != nil {
		return ContextResult{}, err
	}
	if !validPurpose(q.Purpose) {
		return ContextResult{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return ContextResult{}, err
	}
	if q.Persona != "" && !model.ValidSegment(q.Persona) {
		return ContextResult{}, model.Fail(op, KindInvalid, "malformed persona id")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return ContextResult{}, err
	}
	defer release()
	if !p.Token().CanRead() {
		return ContextResult{}, s.refuse(st, p, "context.read", model.Fail(op, KindModeDenied, "the token does not allow reads"))
	}
	if err := st.reached(op, q.MinRevision); err != nil {
		return ContextResult{}, err
	}
	var (
		out    ContextResult
		encErr error
		wants  []localvault.Want
		at     []int // the index in out.Claims of each want
	)
	rc := Receipt{Actor: p.Actor(), Operation: "context.read", Recipient: p.Consumer, Purpose: q.Purpose}
	_, err = s.recipientRead(st, p, rc, func(st *state, now time.Time) (records []string, used []*Grant, _ *Error) {
		out, encErr, wants, at = ContextResult{Revision: st.Revision, Claims: []*Claim{}}, nil, nil, nil
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
		var personaGrant *Grant // the grant that delivers the persona's preferences
		var perr *Error
		if out.Persona, personaGrant, perr = st.readPersona(op, grants, q.Persona, q.Purpose); perr != nil {
			return nil, nil, perr
		}
		var sv []servedItem
		sv, used, encErr = st.servable(p, grants, q.Purpose, q.Persona, now)
		if encErr != nil {
			return nil, nil, nil
		}
		out.Claims = make([]*Claim, 0, len(sv))
		records = make([]string, 0, len(sv))
		for _, it := range sv {
			sc := it.sc
			if st.referenceMode(p, it.g, &sc.Claim) {
				wants = append(wants, localvault.Want{Claim: sc.Claim.ID, Version: sc.Claim.Version, Grant: it.g.ID, Purpose: q.Purpose})
				at = append(at, len(out.Claims))
			}
			model.AppendContextClaim(&out, &sc.Claim, sc.Raw)
			records = append(records, sc.Claim.Ref())
		}
		seen := map[*Grant]bool{}
		for _, g := range used {
			seen[g] = true
		}
		if out.Persona != nil {
			records = append(records, "persona:"+out.Persona.ID)
			if !seen[personaGrant] {
				used = append(used, personaGrant)
			}
		}
		return records, used, nil
	})
	if err == nil && encErr != nil {
		err = model.Wrap(op, KindInternal, encErr)
	}
	if err != nil {
		return ContextResult{}, err
	}
	if len(wants) > 0 {
		texts, err := s.references(st, p.Consumer, wants)
		if err != nil {
			return ContextResult{}, err
		}
		for i, w := range wants {
			c := localvault.AsReference(*out.Claims[at[i]], texts[w.Claim])
			raw, err := json.Marshal(&c)
			if err != nil {
				return ContextResult{}, model.Wrap(op, KindInternal, err)
			}
			model.SetContextClaim(&out, at[i], &c, raw)
		}
	}
	return out, nil
}

// readPersona returns what a read for purpose naming persona receives of
// it under grants (the reader's grants that select it), and the grant
// that delivers it: nothing when the persona is not named or not here;
// KindRestrictionBlocked when a grant for the purpose selects it but its
// guardrails forbid the read under every such grant. Callers hold st.mu.
func (st *state) readPersona(op string, grants []*Grant, persona, purpose string) (*PersonaContext, *Grant, *Error) {
	pe := st.Personas[persona]
	if persona == "" || pe == nil {
		return nil, nil, nil
	}
	named := false
	for _, g := range grants {
		if g.Purpose != purpose {
			continue
		}
		named = true
		if personaReadAllowed(pe, purpose, g) {
			return &PersonaContext{ID: pe.ID, Preferences: AdvisoryPreferences{Advisory: true, Items: model.OrEmpty(pe.Preferences)}}, g, nil
		}
	}
	if named {
		return nil, nil, model.Fail(op, KindRestrictionBlocked, "a guardrail of this persona forbids this read")
	}
	return nil, nil, nil
}

// servedItem is a claim as a recipient receives it and the grant it is
// served under.
type servedItem struct {
	sc *servedClaim
	g  *Grant
}

// servable is what a context read by consumer principal p for purpose (in
// persona, when not empty) serves at now under grants (its grants in force
// for reads): the active claims some grant covers and every rule allows, in
// key order, as the recipient receives them (values, before reference mode
// replaces some), and the grants used. It is the read path itself:
// [Service.Context] serves it and [Service.ReadableNow] shows it to the
// owner. Callers hold st.mu.
func (st *state) servable(p Principal, grants []*Grant, purpose, persona string, now time.Time) ([]servedItem, []*Grant, error) {
	active := st.candidates(p, grants, purpose, false)
	out := make([]servedItem, 0, len(active))
	var used []*Grant
	seen := map[*Grant]bool{}
	var memo map[string]bool // node answers, made with the first relationship
	for _, r := range active {
		if persona != "" && !r.InPersona(persona) {
			continue
		}
		if memo == nil && r.Meta.Kind == KindRelationship {
			memo = map[string]bool{}
		}
		g := st.recipientGrant(grants, p, r, purpose, now, memo)
		if g == nil {
			continue
		}
		sc, err := served(r, g)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, servedItem{sc, g})
		if !seen[g] {
			seen[g] = true
			used = append(used, g)
		}
	}
	return out, used, nil
}
