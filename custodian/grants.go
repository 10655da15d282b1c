package custodian

import (
	"context"
	"sort"
	"time"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/schema"
)

// grantDoc is the body of a new grant, per the grant schema.
type grantDoc struct {
	Recipient  Recipient `json:"recipient"`
	Purpose    string    `json:"purpose"`
	Category   string    `json:"purpose_category"`
	Operations []string  `json:"operations"`
	Selectors  Selectors `json:"selectors"`
	ExpiresAt  time.Time `json:"expires_at"`
	Usage      string    `json:"usage"`
	Route      string    `json:"route"`
	Requires   *Requires `json:"requires"`
	Disclosure string    `json:"disclosure"`
}

// GrantCreated is the answer to a new grant.
type GrantCreated struct {
	ID       string `json:"id"`
	Revision uint64 `json:"revision"`
}

// CreateGrant records a sharing decision (owner only). The recipient
// consumer and every named persona must exist, the expiry must be in the
// future, and at least one selector must be given.
func (s *Service) CreateGrant(ctx context.Context, p Principal, raw []byte) (GrantCreated, error) {
	const op = "grant.create"
	if err := requireOwner(op, p); err != nil {
		return GrantCreated{}, err
	}
	var d grantDoc
	if err := s.decodeDoc(op, schema.Grant, raw, &d); err != nil {
		return GrantCreated{}, err
	}
	for _, k := range d.Selectors.Keys {
		if !validPattern(k) {
			return GrantCreated{}, fail(op, KindInvalid, "malformed key pattern in selectors")
		}
	}
	for _, c := range d.Selectors.Claims {
		if !identity.ValidID(c, "clm_") {
			return GrantCreated{}, fail(op, KindInvalid, "malformed claim id in selectors")
		}
	}
	if len(d.Selectors.Keys)+len(d.Selectors.Personas)+len(d.Selectors.Claims) == 0 {
		return GrantCreated{}, fail(op, KindInvalid, "a grant needs at least one selector")
	}
	for _, o := range d.Operations {
		if o == OpContribute && len(d.Selectors.Keys) == 0 {
			return GrantCreated{}, fail(op, KindInvalid, "a contribute grant needs key selectors")
		}
	}
	if d.ExpiresAt.UTC().Year() > 9999 {
		return GrantCreated{}, fail(op, KindInvalid, "expires_at is beyond year 9999")
	}
	if d.Usage == "" {
		d.Usage = "multi"
	}
	var out GrantCreated
	err := s.write(op, p, func(st *state, b *batch) error {
		if !d.ExpiresAt.After(b.now) {
			return fail(op, KindInvalid, "expires_at must be in the future")
		}
		switch d.Recipient.Kind {
		case "consumer":
			if _, ok := st.consumers[d.Recipient.ID]; !ok {
				return fail(op, KindInvalid, "unknown consumer")
			}
		case "oidc":
			if !st.trustedIssuer(d.Recipient.Issuer) {
				return fail(op, KindInvalid, "the issuer is not on the trust list (phc trust add)")
			}
		}
		if d.Requires != nil && st.decPolicies[d.Requires.Qualification] == nil {
			return fail(op, KindInvalid, "requires names no admission policy (phc dec policy add)")
		}
		personas, err := st.checkPersonas(op, d.Selectors.Personas)
		if err != nil {
			return err
		}
		id, err := identity.NewID("grt_")
		if err != nil {
			return wrap(op, KindInternal, err)
		}
		g := &Grant{
			ID: id, Recipient: d.Recipient, Purpose: d.Purpose, Category: d.Category, Operations: d.Operations,
			Selectors: Selectors{Keys: d.Selectors.Keys, Personas: personas, Claims: d.Selectors.Claims},
			ExpiresAt: d.ExpiresAt.UTC(), Usage: d.Usage, Route: d.Route, Requires: d.Requires,
			CreatedAt: b.now, Revision: b.nextRevision(), Disclosure: d.Disclosure,
		}
		st.setGrant(g)
		b.put(bucketGrants, id, g)
		b.receipt(Receipt{Actor: "owner", Operation: "grant.create", Recipient: d.Recipient.ID,
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
		out := make([]Grant, 0, len(st.grants))
		for _, g := range st.grants {
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
	if err := requireOwner(op, p); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "grt_") {
		return 0, fail(op, KindInvalid, "malformed grant id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		g, ok := st.grants[id]
		if !ok {
			return notFound(op)
		}
		if g.RevokedAt != nil {
			return fail(op, KindConflict, "the grant is already revoked")
		}
		rev = b.nextRevision()
		st.revokeGrant(b, g, rev)
		b.receipt(Receipt{Actor: "owner", Operation: "grant.revoke", Recipient: g.Recipient.ID,
			Purpose: g.Purpose, Decision: "allow", Records: []string{id}, Revision: rev})
		return nil
	})
	return rev, err
}

// revokeGrant revokes g at b.now as of revision rev (with st.mu held for
// writing).
func (st *state) revokeGrant(b *batch, g *Grant, rev uint64) {
	ng := *g
	at := b.now
	ng.RevokedAt, ng.RevokedRev = &at, rev
	st.setGrant(&ng)
	b.put(bucketGrants, g.ID, &ng)
}
