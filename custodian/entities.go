package custodian

import (
	"context"
	"encoding/json"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/schema"
)

// CreateEntity adds an entity node (owner only), with an optional name
// claim about it.
func (s *Service) CreateEntity(ctx context.Context, p Principal, in EntityInput) (EntityCreated, error) {
	const op = "entity.create"
	if err := p.RequireOwner(op); err != nil {
		return EntityCreated{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return EntityCreated{}, err
	}
	if _, ok := model.EntityTypes[in.Type]; !ok {
		return EntityCreated{}, model.Fail(op, KindInvalid, "type must be person, project, goal, event or organisation")
	}
	if in.Key == "" {
		in.Key = in.Type + ".name"
	}
	if !model.ValidKey(in.Key) {
		return EntityCreated{}, model.Fail(op, KindInvalid, "malformed key")
	}
	if in.Name != "" && (!utf8.ValidString(in.Name) || len(in.Name) > 1024) {
		return EntityCreated{}, model.Fail(op, KindInvalid, "name must be UTF-8 of at most 1024 bytes")
	}
	if in.Sensitivity == "" {
		in.Sensitivity = defaultSensitivity(in.Key)
	} else if _, ok := model.TierRank[in.Sensitivity]; !ok {
		return EntityCreated{}, model.Fail(op, KindInvalid, "unknown sensitivity tier")
	}
	var out EntityCreated
	err := s.write(op, p, func(st *state, b *batch) error {
		personas, err := st.checkPersonas(op, in.Personas)
		if err != nil {
			return err
		}
		id, err := identity.NewID("ent_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		e := &Entity{ID: id, Type: in.Type, CreatedAt: b.Now, Revision: b.NextRevision()}
		st.SetEntity(e)
		b.Put(engine.BucketEntities, id, e)
		records := []string{id}
		out = EntityCreated{Entity: *e, Revision: e.Revision}
		if in.Name != "" {
			cid, err := identity.NewOrderedID("clm_", b.Now)
			if err != nil {
				return model.Wrap(op, KindInternal, err)
			}
			value, _ := json.Marshal(in.Name)
			at := b.Now
			c := &Claim{
				ID: cid, Version: 1, Key: in.Key, Value: value, Subject: id, Kind: "fact",
				Assertion: AssertionReported, Confirmation: Confirmation{Status: ConfirmationConfirmed, By: "owner", At: &at},
				Producer: Producer{Authenticated: model.OwnerAuth}, Evidence: []Evidence{}, RecordedAt: at,
				Sensitivity: in.Sensitivity, Restrictions: []Restriction{}, WrittenBy: WrittenByUser,
			}
			r := st.newClaim(b, c, personas)
			view := r.View(1)
			out.Claim, out.Revision = &view, c.Revision
			records = append(records, c.Ref())
		}
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: records, Revision: out.Revision})
		return nil
	})
	return out, err
}

// ListEntities returns every entity, oldest first (owner only).
func (s *Service) ListEntities(ctx context.Context, p Principal) ([]Entity, error) {
	return ownerRead(s, "entity.list", p, func(st *state) ([]Entity, error) {
		out := make([]Entity, 0, len(st.Entities))
		for _, e := range st.Entities {
			out = append(out, *e)
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].Revision != out[j].Revision {
				return out[i].Revision < out[j].Revision
			}
			return out[i].ID < out[j].ID
		})
		return out, nil
	})
}

// checkRelationship refuses a claim about a node that does not exist, and a
// relationship claim whose value is not an edge between self and existing
// entities. Callers are the owner's writes:
// an application's proposal is checked only for form, so that proposing
// cannot probe which entities exist.
func (st *state) checkRelationship(op string, c *Claim) error {
	if c.Subject != SubjectSelf && st.Entities[c.Subject] == nil {
		return model.Fail(op, KindInvalid, "the subject must be self or an existing entity")
	}
	if c.Kind != KindRelationship {
		return nil
	}
	rel, ok := model.RelationshipOf(c)
	if !ok {
		return &Error{Op: op, Kind: KindSchema, Subject: "claim", Violations: []schema.Violation{{
			Path: "/value", Keyword: "$ref", Message: "must be a relationship: from, to and relation",
		}}}
	}
	for _, n := range []string{rel.From, rel.To} {
		if n != SubjectSelf && st.Entities[n] == nil {
			return model.Fail(op, KindInvalid, "a relationship's ends must be self or existing entities")
		}
	}
	return nil
}

// endsVisible reports whether a recipient may see both ends of c when c is
// a relationship (any other claim passes): an edge is disclosed only with
// both of its ends, through every read, not only traversal. may says which
// claims the recipient may read on the path asking; memo, if not nil,
// keeps one request's answers per node.
func (st *state) endsVisible(c *Claim, may func(*claimRecord) bool, memo map[string]bool) bool {
	if c.Kind != KindRelationship {
		return true
	}
	rel, ok := model.RelationshipOf(c)
	return ok && st.nodeVisible(rel.From, may, memo) && st.nodeVisible(rel.To, may, memo)
}

func (st *state) nodeVisible(n string, may func(*claimRecord) bool, memo map[string]bool) bool {
	if v, ok := memo[n]; ok {
		return v
	}
	v := st.nodeWitness(n, may) != nil
	if memo != nil {
		memo[n] = v
	}
	return v
}

// nodeWitness returns a claim that lets a recipient see node n: n is self
// or an existing entity, and the claim is about n, active, not itself a
// relationship (so that deciding a node never asks about another edge),
// and one the recipient may read. nil means the node is hidden.
func (st *state) nodeWitness(n string, may func(*claimRecord) bool) *claimRecord {
	if n != SubjectSelf && st.Entities[n] == nil {
		return nil
	}
	var w *claimRecord
	witness := func(r *claimRecord) bool {
		if r.Meta.Subject == n && r.Meta.Kind != KindRelationship && may(r) {
			w = r
		}
		return w == nil
	}
	if n == SubjectSelf {
		st.Active.Ascend(witness) // self's claims are not in bySubject
	} else {
		for _, r := range st.BySubject[n] {
			if !witness(r) {
				break
			}
		}
	}
	return w
}

// recipientGrant is readGrant for a recipient's read of r, with the ends
// of a relationship checked too (see endsVisible).
func (st *state) recipientGrant(grants []*Grant, p Principal, r *claimRecord, purpose string, now time.Time, memo map[string]bool) *Grant {
	g := st.readGrant(grants, p, r, purpose, now)
	if g == nil || !st.endsVisible(r.Head(), func(x *claimRecord) bool { return st.readGrant(grants, p, x, purpose, now) != nil }, memo) {
		return nil
	}
	return g
}
