package custodian

import (
	"context"
	"slices"
	"sort"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// CreateGrant records a sharing decision (owner only). The recipient
// consumer and every named persona must exist, the expiry must be in the
// future, and at least one selector must be given.
func (s *Service) CreateGrant(ctx context.Context, p Principal, d GrantInput) (GrantCreated, error) {
	const op = "grant.create"
	if err := p.RequireOwner(op); err != nil {
		return GrantCreated{}, err
	}
	if err := s.accept(op, &d); err != nil {
		return GrantCreated{}, err
	}
	for _, k := range d.Selectors.Keys {
		if !validPattern(k) {
			return GrantCreated{}, model.Fail(op, KindInvalid, "malformed key pattern in selectors")
		}
	}
	for _, c := range d.Selectors.Claims {
		if !identity.ValidID(c, "clm_") {
			return GrantCreated{}, model.Fail(op, KindInvalid, "malformed claim id in selectors")
		}
	}
	if len(d.Selectors.Keys)+len(d.Selectors.Personas)+len(d.Selectors.Claims) == 0 {
		return GrantCreated{}, model.Fail(op, KindInvalid, "a grant needs at least one selector")
	}
	for _, o := range d.Operations {
		if o == OpContribute && len(d.Selectors.Keys) == 0 {
			return GrantCreated{}, model.Fail(op, KindInvalid, "a contribute grant needs key selectors")
		}
	}
	if d.ExpiresAt.UTC().Year() > 9999 {
		return GrantCreated{}, model.Fail(op, KindInvalid, "expires_at is beyond year 9999")
	}
	if d.Usage == "" {
		d.Usage = "multi"
	}
	var out GrantCreated
	err := s.write(op, p, func(st *state, b *batch) error {
		if !d.ExpiresAt.After(b.Now) {
			return model.Fail(op, KindInvalid, "expires_at must be in the future")
		}
		switch d.Recipient.Kind {
		case "consumer":
			if _, ok := st.Consumers[d.Recipient.ID]; !ok {
				return model.Fail(op, KindInvalid, "unknown consumer")
			}
		case "oidc":
			if !st.trustedIssuer(d.Recipient.Issuer) {
				return model.Fail(op, KindInvalid, "the issuer is not on the trust list (phc trust add)")
			}
		}
		if d.Requires != nil && st.DecPolicies[d.Requires.Qualification] == nil {
			return model.Fail(op, KindInvalid, "requires names no admission policy (phc dec policy add)")
		}
		personas, err := st.checkPersonas(op, d.Selectors.Personas)
		if err != nil {
			return err
		}
		id, err := identity.NewID("grt_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		g := &Grant{
			ID: id, Recipient: d.Recipient, Purpose: d.Purpose, Category: d.Category, Operations: d.Operations,
			Selectors: Selectors{Keys: d.Selectors.Keys, Personas: personas, Claims: d.Selectors.Claims},
			ExpiresAt: d.ExpiresAt.UTC(), Usage: d.Usage, Route: d.Route, Requires: d.Requires,
			CreatedAt: b.Now, Revision: b.NextRevision(), Disclosure: d.Disclosure,
		}
		st.SetGrant(g)
		b.Put(engine.BucketGrants, id, g)
		b.Receipt(Receipt{Actor: "owner", Operation: "grant.create", Recipient: d.Recipient.ID,
			Purpose: d.Purpose, Decision: "allow", Records: []string{id}, Revision: g.Revision})
		out = GrantCreated{ID: id, Revision: g.Revision}
		return nil
	})
	return out, err
}

// ListGrants returns every grant, revoked and expired ones included, oldest
// first (owner only).
func (s *Service) ListGrants(ctx context.Context, p Principal) ([]Grant, error) {
	return ownerRead(s, "grant.list", p, func(st *state) ([]Grant, error) {
		out := make([]Grant, 0, len(st.Grants))
		for _, g := range st.Grants {
			out = append(out, *g)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
		return out, nil
	})
}

// RevokeGrant ends a grant (owner only). From the returned revision on, the
// grant authorises nothing.
func (s *Service) RevokeGrant(ctx context.Context, p Principal, id string) (uint64, error) {
	const op = "grant.revoke"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "grt_") {
		return 0, model.Fail(op, KindInvalid, "malformed grant id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		g, ok := st.Grants[id]
		if !ok {
			return model.NotFound(op)
		}
		if g.RevokedAt != nil {
			return model.Fail(op, KindConflict, "the grant is already revoked")
		}
		rev = b.NextRevision()
		st.revokeGrant(b, g, rev)
		b.Receipt(Receipt{Actor: "owner", Operation: "grant.revoke", Recipient: g.Recipient.ID,
			Purpose: g.Purpose, Decision: "allow", Records: []string{id}, Revision: rev})
		return nil
	})
	return rev, err
}

// revokeGrant revokes g at b.now as of revision rev (with st.mu held for
// writing).
func (st *state) revokeGrant(b *batch, g *Grant, rev uint64) {
	ng := *g
	at := b.Now
	ng.RevokedAt, ng.RevokedRev = &at, rev
	st.SetGrant(&ng)
	b.Put(engine.BucketGrants, g.ID, &ng)
}

// narrowHint says what NarrowGrant accepts; every refusal of a wider term
// ends with it.
const narrowHint = "a grant can only be narrowed: operations a subset of its own, key patterns each within one of its own, " +
	"personas and claims subsets of its own, an expiry no later than its own"

// NarrowGrant replaces the terms of grant id, in force, with the narrower
// ones in t (owner only). The grant keeps its id,
// recipient and purpose; from the returned revision on, every read, every
// reference resolved and every answer of "what can it read" follows the
// new terms, and nothing the old ones allowed is kept. Anything wider than
// the grant's own terms fails with KindInvalid: to give more, make a new
// grant.
func (s *Service) NarrowGrant(ctx context.Context, p Principal, id string, t GrantTerms) (GrantNarrowed, error) {
	const op = "grant.narrow"
	if err := p.RequireOwner(op); err != nil {
		return GrantNarrowed{}, err
	}
	if !identity.ValidID(id, "grt_") {
		return GrantNarrowed{}, model.Fail(op, KindInvalid, "malformed grant id")
	}
	if err := s.accept(op, &t); err != nil {
		return GrantNarrowed{}, err
	}
	if t.Operations == nil && t.Selectors == nil && t.ExpiresAt == nil {
		return GrantNarrowed{}, model.Fail(op, KindInvalid, "name at least one term to narrow (operations, selectors, expires_at)")
	}
	if t.Selectors != nil {
		for _, k := range t.Selectors.Keys {
			if !validPattern(k) {
				return GrantNarrowed{}, model.Fail(op, KindInvalid, "malformed key pattern in selectors")
			}
		}
		for _, c := range t.Selectors.Claims {
			if !identity.ValidID(c, "clm_") {
				return GrantNarrowed{}, model.Fail(op, KindInvalid, "malformed claim id in selectors")
			}
		}
	}
	if t.ExpiresAt != nil && t.ExpiresAt.UTC().Year() > 9999 {
		return GrantNarrowed{}, model.Fail(op, KindInvalid, "expires_at is beyond year 9999")
	}
	var out GrantNarrowed
	err := s.write(op, p, func(st *state, b *batch) error {
		g, ok := st.Grants[id]
		if !ok {
			return model.NotFound(op)
		}
		if g.RevokedAt != nil || g.SpentAt != nil || !b.Now.Before(g.ExpiresAt) {
			return model.Fail(op, KindConflict, "only a grant in force can be narrowed (this one is revoked, spent or expired)")
		}
		ng := *g
		if t.Operations != nil {
			ops, err := narrowList(op, "operations", g.Operations, t.Operations)
			if err != nil {
				return err
			}
			if len(ops) == 0 {
				return model.Fail(op, KindInvalid, "a grant needs at least one operation; to end it, revoke it")
			}
			ng.Operations = ops
		}
		if t.Selectors != nil {
			ns, err := st.narrowSelectors(op, g.Selectors, *t.Selectors)
			if err != nil {
				return err
			}
			ng.Selectors = ns
		}
		for _, o := range ng.Operations {
			if o == OpContribute && len(ng.Selectors.Keys) == 0 {
				return model.Fail(op, KindInvalid, "a contribute grant needs key selectors")
			}
		}
		if t.ExpiresAt != nil {
			at := t.ExpiresAt.UTC()
			if at.After(g.ExpiresAt) {
				return model.Fail(op, KindInvalid, "the expiry is later than the grant's: "+narrowHint)
			}
			if !at.After(b.Now) {
				return model.Fail(op, KindInvalid, "expires_at must be in the future; to end the grant now, revoke it")
			}
			ng.ExpiresAt = at
		}
		rev := b.NextRevision()
		at := b.Now
		ng.NarrowedAt, ng.NarrowedRev = &at, rev
		if ng.MadeWith == nil {
			made := g.Selectors
			ng.MadeWith = &made
		}
		// The grant is replaced, never changed in place: a read under way
		// holds the old terms or the new, never a mixture, and SetGrant
		// files it again under its recipient.
		st.SetGrant(&ng)
		b.Put(engine.BucketGrants, id, &ng)
		b.Receipt(Receipt{Actor: "owner", Operation: "grant.narrow", Recipient: g.Recipient.ID,
			Purpose: g.Purpose, Decision: "allow", Records: []string{id}, Revision: rev})
		out = GrantNarrowed{Grant: ng, Revision: rev}
		return nil
	})
	return out, err
}

// narrowSelectors returns the selectors have narrowed by sel (a grant's
// narrowing, see [Service.NarrowGrant]): key patterns within have's,
// personas and claims among have's, or any where have names none.
func (st *state) narrowSelectors(op string, have Selectors, sel TermSelectors) (Selectors, error) {
	ns := have
	if sel.Keys != nil {
		if len(have.Keys) > 0 && len(sel.Keys) == 0 {
			return Selectors{}, model.Fail(op, KindInvalid, "the key patterns cannot be cleared: "+narrowHint)
		}
		if len(have.Keys) > 0 {
			for _, k := range sel.Keys {
				if !patternWithin(k, have.Keys) {
					return Selectors{}, model.Fail(op, KindInvalid, "a key pattern reaches beyond the grant's: "+narrowHint)
				}
			}
		}
		ns.Keys = dedupSorted(sel.Keys)
	}
	if sel.Personas != nil {
		if len(have.Personas) == 0 {
			personas, err := st.checkPersonas(op, sel.Personas)
			if err != nil {
				return Selectors{}, err
			}
			ns.Personas = personas
		} else {
			personas, err := narrowList(op, "personas", have.Personas, sel.Personas)
			if err != nil {
				return Selectors{}, err
			}
			ns.Personas = personas
		}
	}
	if sel.Claims != nil {
		if len(have.Claims) == 0 {
			ns.Claims = dedupSorted(sel.Claims)
		} else {
			claims, err := narrowList(op, "claims", have.Claims, sel.Claims)
			if err != nil {
				return Selectors{}, err
			}
			ns.Claims = claims
		}
	}
	if len(ns.Keys)+len(ns.Personas)+len(ns.Claims) == 0 {
		return Selectors{}, model.Fail(op, KindInvalid, "a grant needs at least one selector; to end it, revoke it")
	}
	return ns, nil
}

// narrowList returns want, without repeats and sorted, if every member is
// one of have's; otherwise a KindInvalid error naming the term. want may
// not be empty where have is not: an empty selector selects everything.
func narrowList(op, term string, have, want []string) ([]string, error) {
	if len(have) > 0 && len(want) == 0 {
		return nil, model.Fail(op, KindInvalid, "the "+term+" cannot be cleared: "+narrowHint)
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return nil, model.Fail(op, KindInvalid, "the "+term+" are not a subset of the grant's: "+narrowHint)
		}
	}
	return dedupSorted(want), nil
}

func dedupSorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// patternWithin reports whether every key grant key pattern p covers (see
// coversKey) one of the patterns in have covers too. Patterns nest or are
// disjoint, so each of p's match patterns must lie within one of have's.
func patternWithin(p string, have []string) bool {
	hs := scopePatterns(have)
	for _, q := range scopePatterns([]string{p}) {
		within := false
		for _, h := range hs {
			if x, ok := engine.IntersectPatterns(q, h); ok && x == q {
				within = true
				break
			}
		}
		if !within {
			return false
		}
	}
	return true
}
