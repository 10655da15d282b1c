package custodian

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/localvault"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// GetClaim returns the current version of a claim. The owner sees any claim
// (a deleted one as its tombstone). A consumer sees it only when one of its
// grants in force covers it for purpose; otherwise — and when the id does
// not exist — the answer is the same KindNotFound, and the same deny
// receipt is written either way.
func (s *Service) GetClaim(ctx context.Context, p Principal, id, purpose string) (ClaimRead, error) {
	const op = "claim.get"
	if !identity.ValidID(id, "clm_") {
		return ClaimRead{}, model.Fail(op, KindInvalid, "malformed claim id")
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return ClaimRead{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return ClaimRead{}, err
	}
	defer release()
	switch p.Kind() {
	case PrincipalOwner:
		return readSettled(op, st, func() (ClaimRead, error) {
			r, ok := st.Claims[id]
			if !ok {
				return ClaimRead{}, model.NotFound(op)
			}
			return ClaimRead{Claim: r.View(r.Meta.Head), Revision: st.Revision}, nil
		})
	case PrincipalConsumer:
	default:
		return ClaimRead{}, model.Fail(op, KindUnauthenticated, "")
	}
	if purpose, err = p.ReadPurpose(op, purpose); err != nil {
		return ClaimRead{}, err
	}
	if !validPurpose(purpose) {
		return ClaimRead{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if !p.Token().CanRead() {
		return ClaimRead{}, s.refuse(st, p, "claim.read", model.Fail(op, KindModeDenied, "the token does not allow reads"))
	}
	var (
		out  ClaimRead
		want *localvault.Want
	)
	rc := Receipt{Actor: p.Actor(), Operation: "claim.read", Recipient: p.Consumer, Purpose: purpose}
	disclosed, err := s.recipientRead(st, p, rc, func(st *state, now time.Time) (records []string, used []*Grant, refused *Error) {
		out, want = ClaimRead{}, nil
		if !st.live(p, now) {
			return nil, nil, nil
		}
		var g *Grant
		r := st.Claims[id]
		if r != nil {
			g = st.recipientGrant(st.grantsFor(p.Consumer, OpRead, now), p, r, purpose, now, nil)
		}
		if g == nil {
			// Covered, for all the recipient can tell, but for a
			// qualification not met: what to do, claim or none.
			if failed := st.qualificationFailure(p, purpose, "", id, now); failed != nil {
				return nil, nil, qualificationRequired(op, failed)
			}
			return nil, nil, nil
		}
		out = ClaimRead{Claim: recipientView(r, g), Revision: st.Revision}
		if st.referenceMode(p, g, &out.Claim) {
			want = &localvault.Want{Claim: out.Claim.ID, Version: out.Claim.Version, Grant: g.ID, Purpose: purpose}
		}
		records = []string{out.Claim.Ref()}
		if g.Requires != nil {
			if ok, _, head := st.qualified(p, g, now); ok && head != "" {
				records = append(records, "policy:"+g.Requires.Qualification, "head:"+head)
			}
		}
		return records, []*Grant{g}, nil
	})
	if err != nil {
		return ClaimRead{}, err
	}
	if !disclosed {
		return ClaimRead{}, model.NotFound(op)
	}
	if want != nil {
		texts, err := s.references(st, p.Consumer, []localvault.Want{*want})
		if err != nil {
			return ClaimRead{}, err
		}
		out.Claim = localvault.AsReference(out.Claim, texts[want.Claim])
	}
	return out, nil
}

// recipientView is a claim as a recipient under g receives it: persona
// associations are limited to those g names.
func recipientView(r *claimRecord, g *Grant) Claim {
	sc, _ := served(r, g)
	return sc.Claim
}

// served returns the recipient view of r under g and its JSON, from the
// record's cache when the same personas were shown last time.
func served(r *claimRecord, g *Grant) (*servedClaim, error) {
	personas := []string{}
	for _, p := range g.Selectors.Personas {
		if r.InPersona(p) {
			personas = append(personas, p)
		}
	}
	key := strings.Join(personas, ",")
	if sc := r.Served.Load(); sc != nil && sc.Personas == key {
		return sc, nil
	}
	c := r.View(r.Meta.Head)
	c.Personas = personas
	raw, err := json.Marshal(&c)
	sc := &servedClaim{Personas: key, Claim: c, Raw: raw}
	if err != nil {
		return sc, err
	}
	r.Served.Store(sc)
	return sc, nil
}

// ListClaims returns the owner's active claims, optionally only those whose
// key matches the pattern key and that are in persona.
func (s *Service) ListClaims(ctx context.Context, p Principal, key, persona string) (ClaimList, error) {
	const op = "claim.list"
	if key != "" && !validPattern(key) {
		return ClaimList{}, model.Fail(op, KindInvalid, "malformed key pattern")
	}
	if persona != "" && !model.ValidSegment(persona) {
		return ClaimList{}, model.Fail(op, KindInvalid, "malformed persona id")
	}
	return ownerRead(s, op, p, func(st *state) (ClaimList, error) {
		out := ClaimList{Claims: []Claim{}, Revision: st.Revision}
		pattern := key
		if pattern == "" {
			pattern = "*"
		}
		engine.ScanPattern(st.Active, pattern, func(r *claimRecord) bool {
			if persona == "" || r.InPersona(persona) {
				out.Claims = append(out.Claims, r.View(r.Meta.Head))
			}
			return true
		})
		return out, nil
	})
}

// Versions returns every version of a claim, oldest first (owner only).
func (s *Service) Versions(ctx context.Context, p Principal, id string) (ClaimList, error) {
	const op = "claim.versions"
	if !identity.ValidID(id, "clm_") {
		return ClaimList{}, model.Fail(op, KindInvalid, "malformed claim id")
	}
	return ownerRead(s, op, p, func(st *state) (ClaimList, error) {
		r, ok := st.Claims[id]
		if !ok {
			return ClaimList{}, model.NotFound(op)
		}
		out := ClaimList{Revision: st.Revision}
		for v := 1; v <= r.Meta.Head; v++ {
			out.Claims = append(out.Claims, r.View(v))
		}
		return out, nil
	})
}

// Correct writes a new version of an active claim (owner only); the previous
// version becomes superseded and recipients see only the new one. With
// expected_version, a claim whose head has moved on is KindConflict.
func (s *Service) Correct(ctx context.Context, p Principal, id string, in CorrectionInput) (Written, error) {
	const op = "claim.correct"
	if err := p.RequireOwner(op); err != nil {
		return Written{}, err
	}
	if !identity.ValidID(id, "clm_") {
		return Written{}, model.Fail(op, KindInvalid, "malformed claim id")
	}
	if err := s.accept(op, &in); err != nil {
		return Written{}, err
	}
	var out Written
	err := s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Claims[id]
		if !ok || r.Meta.Status != StatusActive {
			return model.NotFound(op)
		}
		if in.ExpectedVersion != 0 && in.ExpectedVersion != r.Meta.Head {
			return model.Fail(op, KindConflict, "the claim has a newer version")
		}
		prev := r.Head()
		for _, t := range in.Remove {
			if t == RestrictSourceControlled || t == RestrictThirdParty {
				return model.Fail(op, KindRestrictionBlocked, t+" stays with the claim until it is deleted: the material is not only the owner's to release")
			}
			if !slices.ContainsFunc(prev.Restrictions, func(r Restriction) bool { return r.Type == t }) {
				return model.Fail(op, KindInvalid, "the claim has no restriction "+t+" to remove")
			}
		}
		probe := *prev
		applyCorrection(&in, &probe)
		if err := st.checkRelationship(op, &probe); err != nil {
			return err
		}
		nr := st.addVersion(b, r, model.OwnerAuth, "owner", func(c *Claim) {
			applyCorrection(&in, c)
		})
		c := nr.Head()
		b.Receipt(Receipt{Actor: "owner", Operation: "claim.correct", Decision: "allow",
			Records: []string{prev.Ref(), c.Ref()}, Revision: c.Revision})
		if len(in.Remove) > 0 {
			// The removal is its own act, with its own receipt.
			b.Receipt(Receipt{Actor: "owner", Operation: "claim.restrictions.remove", Decision: "allow",
				Records: append([]string{c.Ref()}, in.Remove...), Revision: c.Revision})
		}
		out = Written{Claim: nr.View(c.Version), Revision: c.Revision}
		return nil
	})
	return out, err
}

// applyCorrection applies a correction's fields to c.
func applyCorrection(in *CorrectionInput, c *Claim) {
	if in.Value != nil {
		c.Value = in.Value
	}
	if in.ValidFrom != nil {
		c.ValidFrom = in.ValidFrom
	}
	if in.ValidTo != nil {
		c.ValidTo = in.ValidTo
	}
	if in.Sensitivity != "" {
		c.Sensitivity = in.Sensitivity
	}
	c.Restrictions = model.MergeRestrictions(slices.DeleteFunc(slices.Clone(c.Restrictions), func(r Restriction) bool {
		return slices.Contains(in.Remove, r.Type)
	}), in.Restrictions)
	if in.Kind != "" {
		c.Kind = in.Kind
	}
	if in.Assertion != "" {
		c.Assertion = in.Assertion
	}
	if in.Note != nil {
		c.Note = *in.Note
	}
}

// addVersion writes the next version of active claim r, as written by
// author and confirmed by confirmedBy ("owner", or "auto_grant" when the
// owner's policy confirms an app's write), with edit applied, and publishes
// it. It returns the new record.
func (st *state) addVersion(b *batch, r *claimRecord, author Authenticated, confirmedBy string, edit func(c *Claim)) *claimRecord {
	prev := r.Head()
	at := b.Now
	c := *prev
	c.Version = prev.Version + 1
	c.RecordedAt = at
	c.Confirmation = Confirmation{Status: ConfirmationConfirmed, By: confirmedBy, At: &at}
	c.Producer = Producer{Authenticated: author}
	c.WrittenBy = writtenByOf(author)
	c.Evidence = []Evidence{}
	edit(&c)
	c.Revision = b.NextRevision()
	c.Status = StatusActive
	c.Personas = nil
	m := r.Meta
	m.Head = c.Version
	nr := st.NewRecord(m, &c, st.Carried(r))
	if confirmedBy == "owner" {
		nr.Meta.DisputedAt = nil // the owner's own new version settles the dispute
	}
	st.SetClaim(nr)
	b.Put(engine.BucketClaims, engine.VersionKey(c.ID, c.Version), &c)
	b.Put(engine.BucketClaimMeta, c.ID, nr.Meta)
	return nr
}

// DeleteClaim erases a claim (owner only): every version is replaced by a
// tombstone that keeps only the id, the version number and when it was
// recorded, and the claim leaves every persona.
func (s *Service) DeleteClaim(ctx context.Context, p Principal, id string) (uint64, error) {
	const op = "claim.delete"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "clm_") {
		return 0, model.Fail(op, KindInvalid, "malformed claim id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Claims[id]
		if !ok || r.Meta.Status == StatusDeleted {
			return model.NotFound(op)
		}
		rev = b.NextRevision()
		refs := make([]string, 0, r.Meta.Head)
		for v := 1; v <= r.Meta.Head; v++ {
			refs = append(refs, model.VersionRef(r.Meta.ID, v))
		}
		st.erase(b, r)
		b.Receipt(Receipt{Actor: "owner", Operation: "claim.delete", Decision: "allow", Records: refs, Revision: rev})
		return nil
	})
	return rev, err
}

// SetPersonas replaces the persona associations of an active claim (owner
// only). One claim may be in several personas; it is never duplicated.
func (s *Service) SetPersonas(ctx context.Context, p Principal, id string, in PersonasInput) (Written, error) {
	const op = "claim.personas"
	if err := p.RequireOwner(op); err != nil {
		return Written{}, err
	}
	if !identity.ValidID(id, "clm_") {
		return Written{}, model.Fail(op, KindInvalid, "malformed claim id")
	}
	if err := s.accept(op, &in); err != nil {
		return Written{}, err
	}
	var out Written
	err := s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Claims[id]
		if !ok || r.Meta.Status != StatusActive {
			return model.NotFound(op)
		}
		personas, err := st.checkPersonas(op, in.Personas)
		if err != nil {
			return err
		}
		rev := b.NextRevision()
		nr := st.SetMeta(b, r, func(m *claimMeta) { m.Personas = personas })
		b.Receipt(Receipt{Actor: "owner", Operation: "claim.personas", Decision: "allow",
			Records: []string{r.Head().Ref()}, Revision: rev})
		out = Written{Claim: nr.View(nr.Meta.Head), Revision: rev}
		return nil
	})
	return out, err
}

// newClaim publishes a new claim whose version 1 is c, in personas.
func (st *state) newClaim(b *batch, c *Claim, personas []string) *claimRecord {
	c.Revision = b.NextRevision()
	c.Status = StatusActive
	c.Personas = nil
	r := st.NewRecord(claimMeta{ID: c.ID, Head: 1, Status: StatusActive, Personas: personas}, c, nil)
	st.SetClaim(r)
	b.Put(engine.BucketClaims, engine.VersionKey(c.ID, 1), c)
	b.Put(engine.BucketClaimMeta, c.ID, r.Meta)
	return r
}

// erase replaces every version of claim r by a tombstone that keeps only the
// id, the version number and when it was recorded, and takes it out of every
// persona.
func (st *state) erase(b *batch, r *claimRecord) {
	m := r.Meta
	m.Status = StatusDeleted
	m.Personas = []string{}
	tombs := make([]*Claim, 0, r.Meta.Head)
	for _, v := range r.Versions() {
		t := &Claim{ID: v.ID, Version: v.Version, RecordedAt: v.RecordedAt, Status: StatusDeleted,
			Evidence: []Evidence{}, Restrictions: []Restriction{}, Revision: v.Revision}
		tombs = append(tombs, t)
		b.Put(engine.BucketClaims, engine.VersionKey(v.ID, v.Version), t)
	}
	// The tombstones stay resident until they are committed (see
	// internal/engine/claimcache.go).
	nr := st.NewRecord(m, tombs[len(tombs)-1], tombs[:len(tombs)-1])
	st.SetClaim(nr)
	b.Put(engine.BucketClaimMeta, nr.Meta.ID, nr.Meta)
	// The metas snapshot may hold the claim's key: the next replaces it,
	// after a crash too (see engine.MetaSnapshotErased).
	st.Snap.Erasures++
	// So may the metas written since: they go with the group's commit.
	if st.Snap.Erasing == nil {
		st.Snap.Erasing = map[string]bool{}
	}
	st.Snap.Erasing[nr.Meta.ID] = true
}

// DisputeClaim marks the current version of an active claim disputed
// (owner only; PHC draft §1). It stays active: a recipient whose grant
// covers it receives it with confirmation.status "disputed", never
// without. What was derived from it goes stale. Disputing a disputed claim
// is KindConflict.
func (s *Service) DisputeClaim(ctx context.Context, p Principal, id string) (Written, error) {
	return s.setDispute(p, "claim.dispute", id, true)
}

// WithdrawDispute takes the owner's dispute of a claim back (owner only);
// a claim that is not disputed is KindConflict.
func (s *Service) WithdrawDispute(ctx context.Context, p Principal, id string) (Written, error) {
	return s.setDispute(p, "claim.undispute", id, false)
}

func (s *Service) setDispute(p Principal, op, id string, disputed bool) (Written, error) {
	return s.markClaim(op, p, id, func(r *claimRecord) error {
		if r.Meta.Status != StatusActive {
			return model.NotFound(op)
		}
		if (r.Meta.DisputedAt != nil) == disputed {
			if disputed {
				return model.Fail(op, KindConflict, "the claim is already disputed")
			}
			return model.Fail(op, KindConflict, "the claim is not disputed")
		}
		return nil
	}, func(m *claimMeta, now time.Time) {
		m.DisputedAt = nil
		if disputed {
			m.DisputedAt = &now
		}
	})
}

// markClaim is an owner's act on claim id's meta alone — a dispute, a
// retraction — with no new version: check refuses a claim that may not
// take it (absent, or in the wrong state), edit changes the meta, and the
// receipt names the claim's head.
func (s *Service) markClaim(op string, p Principal, id string, check func(r *claimRecord) error, edit func(m *claimMeta, now time.Time)) (Written, error) {
	if err := p.RequireOwner(op); err != nil {
		return Written{}, err
	}
	if !identity.ValidID(id, "clm_") {
		return Written{}, model.Fail(op, KindInvalid, "malformed claim id")
	}
	var out Written
	err := s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Claims[id]
		if !ok {
			return model.NotFound(op)
		}
		if err := check(r); err != nil {
			return err
		}
		rev := b.NextRevision()
		nr := st.SetMeta(b, r, func(m *claimMeta) { edit(m, b.Now) })
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{r.Head().Ref()}, Revision: rev})
		out = Written{Claim: nr.View(nr.Meta.Head), Revision: rev}
		return nil
	})
	return out, err
}

// RetractClaim retracts an active claim (owner only; PHC draft §1): it is
// kept, with every version and its personas, for the owner, who reads it
// with status "retracted", but no recipient receives it again, it leaves
// the graph and the owner's list of active claims, and what was derived
// from it goes stale. Retraction is final (the owner may still delete the
// claim); retracting a retracted claim is KindConflict.
func (s *Service) RetractClaim(ctx context.Context, p Principal, id string) (Written, error) {
	const op = "claim.retract"
	return s.markClaim(op, p, id, func(r *claimRecord) error {
		switch r.Meta.Status {
		case StatusRetracted:
			return model.Fail(op, KindConflict, "the claim is already retracted")
		case StatusActive:
			return nil
		}
		return model.NotFound(op)
	}, func(m *claimMeta, _ time.Time) { m.Status = StatusRetracted })
}
