package custodian

import (
	"context"
	"sort"

	"github.com/phc-project/phc/internal/identity"

	"github.com/phc-project/phc/schema"
)

// CreatePersona adds a persona (owner only); an existing id is KindConflict.
func (s *Service) CreatePersona(ctx context.Context, p Principal, raw []byte) (Persona, uint64, error) {
	const op = "persona.create"
	if err := requireOwner(op, p); err != nil {
		return Persona{}, 0, err
	}
	var in Persona
	if err := s.decodeDoc(op, schema.Persona, raw, &in); err != nil {
		return Persona{}, 0, err
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.personas[in.ID]; ok {
			return fail(op, KindConflict, "a persona with this id exists")
		}
		// Stored under an opaque key: a persona's id is the owner's own
		// word ("therapy", "job-search") and stays inside the encrypted value.
		key, err := identity.NewID("per_")
		if err != nil {
			return wrap(op, KindInternal, err)
		}
		in.Preferences, in.Guardrails = orEmpty(in.Preferences), orEmpty(in.Guardrails)
		in.CreatedAt = b.now
		rev = b.nextRevision()
		np := in
		np.Node = key
		st.setPersona(&np)
		b.put(bucketPersonas, key, &np)
		b.receipt(Receipt{Actor: "owner", Operation: "persona.create", Decision: "allow", Records: []string{in.ID}, Revision: rev})
		return nil
	})
	return in, rev, err
}

// ListPersonas returns the personas sorted by id (owner only).
func (s *Service) ListPersonas(ctx context.Context, p Principal) ([]Persona, error) {
	return ownerRead(s, "persona.list", p, func(st *state) ([]Persona, error) {
		out := make([]Persona, 0, len(st.personas))
		for _, p := range st.personas {
			out = append(out, *p)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out, nil
	})
}
