package custodian

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/internal/identity"
)

// CreatePersona adds a persona (owner only); an existing id is KindConflict.
func (s *Service) CreatePersona(ctx context.Context, p Principal, body PersonaInput) (Persona, uint64, error) {
	const op = "persona.create"
	if err := p.RequireOwner(op); err != nil {
		return Persona{}, 0, err
	}
	if err := s.accept(op, &body); err != nil {
		return Persona{}, 0, err
	}
	in := Persona{ID: body.ID, Name: body.Name, Preferences: body.Preferences, Guardrails: body.Guardrails}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.Personas[in.ID]; ok {
			return model.Fail(op, KindConflict, "a persona with this id exists")
		}
		// Stored under an opaque key: a persona's id is the owner's own
		// word ("therapy", "job-search") and stays inside the encrypted value.
		key, err := identity.NewID("per_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		in.Preferences, in.Guardrails = model.OrEmpty(in.Preferences), model.OrEmpty(in.Guardrails)
		in.CreatedAt = b.Now
		rev = b.NextRevision()
		np := in
		np.Node = key
		st.SetPersona(&np)
		b.Put(engine.BucketPersonas, key, &np)
		b.Receipt(Receipt{Actor: "owner", Operation: "persona.create", Decision: "allow", Records: []string{in.ID}, Revision: rev})
		return nil
	})
	return in, rev, err
}

// ListPersonas returns the personas sorted by id (owner only).
func (s *Service) ListPersonas(ctx context.Context, p Principal) ([]Persona, error) {
	return ownerRead(s, "persona.list", p, func(st *state) ([]Persona, error) {
		out := make([]Persona, 0, len(st.Personas))
		for _, p := range st.Personas {
			out = append(out, *p)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out, nil
	})
}

// UpdatePersona renames a persona and replaces its preferences or
// guardrails (owner only). Its id, which claims and grants name, stays. A
// persona that does not exist is KindNotFound. New guardrails apply to the
// next read.
func (s *Service) UpdatePersona(ctx context.Context, p Principal, id string, in PersonaUpdateInput) (Persona, uint64, error) {
	const op = "persona.update"
	if err := p.RequireOwner(op); err != nil {
		return Persona{}, 0, err
	}
	if !model.ValidSegment(id) {
		return Persona{}, 0, model.Fail(op, KindInvalid, "malformed persona id")
	}
	if err := s.accept(op, &in); err != nil {
		return Persona{}, 0, err
	}
	var (
		out Persona
		rev uint64
	)
	err := s.write(op, p, func(st *state, b *batch) error {
		old, ok := st.Personas[id]
		if !ok {
			return model.NotFound(op)
		}
		np := *old
		if in.Name != nil {
			np.Name = *in.Name
		}
		if in.Preferences != nil {
			np.Preferences = model.OrEmpty(*in.Preferences)
		}
		if in.Guardrails != nil {
			np.Guardrails = model.OrEmpty(*in.Guardrails)
		}
		rev = b.NextRevision()
		st.SetPersona(&np)
		b.Put(engine.BucketPersonas, np.Node, &np)
		b.Receipt(Receipt{Actor: "owner", Operation: "persona.update", Decision: "allow", Records: []string{id}, Revision: rev})
		out = np
		return nil
	})
	return out, rev, err
}

// DeletePersona removes a persona (owner only): it leaves every claim's
// associations (a new claim meta, no new version; no claim is deleted),
// every grant's persona selector, and the graph. A grant whose only persona
// selectors named it is revoked rather than left to widen. All in one
// revision, receipted with ids only.
func (s *Service) DeletePersona(ctx context.Context, p Principal, id string) (PersonaDeleted, error) {
	const op = "persona.delete"
	if err := p.RequireOwner(op); err != nil {
		return PersonaDeleted{}, err
	}
	if !model.ValidSegment(id) {
		return PersonaDeleted{}, model.Fail(op, KindInvalid, "malformed persona id")
	}
	var out PersonaDeleted
	err := s.write(op, p, func(st *state, b *batch) error {
		pe, ok := st.Personas[id]
		if !ok {
			return model.NotFound(op)
		}
		out = PersonaDeleted{ID: id, Claims: []string{}, GrantsNarrowed: []string{}, GrantsRevoked: []string{}}
		rev := b.NextRevision()
		out.Revision = rev
		without := func(ids []string) []string {
			return slices.DeleteFunc(slices.Clone(ids), func(x string) bool { return x == id })
		}
		for _, cid := range slices.Sorted(maps.Keys(st.Claims)) {
			r := st.Claims[cid]
			if !r.InPersona(id) {
				continue
			}
			if r.Meta.Status == StatusActive && pe.Node != "" {
				// The projection of the claim is computed after the
				// persona is gone, so it cannot name this edge: remove it
				// here.
				b.Graph.Remove = append(b.Graph.Remove, graph.Edge{Subject: cid, Predicate: graph.InPersona, Object: pe.Node})
			}
			st.SetMeta(b, r, func(m *claimMeta) { m.Personas = without(r.Meta.Personas) })
			out.Claims = append(out.Claims, cid)
		}
		for _, gid := range slices.Sorted(maps.Keys(st.Grants)) {
			g := st.Grants[gid]
			if g.RevokedAt != nil || !slices.Contains(g.Selectors.Personas, id) {
				continue
			}
			rest := without(g.Selectors.Personas)
			if len(rest) == 0 {
				st.revokeGrant(b, g, rev)
				out.GrantsRevoked = append(out.GrantsRevoked, gid)
				b.Receipt(Receipt{Actor: "owner", Operation: "grant.revoke", Recipient: g.Recipient.ID,
					Purpose: g.Purpose, Decision: "allow", Records: []string{gid, "persona:" + id}, Revision: rev})
				continue
			}
			ng := *g
			ng.Selectors.Personas = rest
			st.SetGrant(&ng)
			b.Put(engine.BucketGrants, gid, &ng)
			out.GrantsNarrowed = append(out.GrantsNarrowed, gid)
			b.Receipt(Receipt{Actor: "owner", Operation: "grant.narrow", Recipient: g.Recipient.ID,
				Purpose: g.Purpose, Decision: "allow", Records: []string{gid, "persona:" + id}, Revision: rev})
		}
		st.DeletePersona(id)
		b.Del(engine.BucketPersonas, pe.Node)
		b.Receipt(Receipt{Actor: "owner", Operation: "persona.delete", Decision: "allow",
			Records: append([]string{id}, out.Claims...), Revision: rev})
		return nil
	})
	return out, err
}
