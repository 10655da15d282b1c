package custodian

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/jsondiff"
)

// Propose takes an application's memory into the owner's review queue. The
// document d must match the proposal schema. A consumer needs a token with
// write mode whose scope covers the key, and a contribute grant in force
// whose key selectors cover it. Nothing proposed is visible to any reader
// until the owner confirms it.
func (s *Service) Propose(ctx context.Context, p Principal, d ProposalInput) (Proposed, error) {
	const op = "propose"
	if err := s.rateLimit(op, p, true); err != nil {
		return Proposed{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return Proposed{}, err
	}
	defer release()
	producer := Authenticated{Kind: "owner", ID: "owner"}
	switch p.Kind() {
	case PrincipalOwner:
	case PrincipalConsumer:
		if !p.Token().CanWrite() {
			return Proposed{}, s.refuse(st, p, "proposal.create", model.Fail(op, KindModeDenied, "the token does not allow writes"))
		}
		producer = Authenticated{Kind: "consumer", ID: p.Consumer}
	default:
		return Proposed{}, model.Fail(op, KindUnauthenticated, "")
	}
	if err := s.accept(op, &d); err != nil {
		return Proposed{}, err
	}
	if p.Kind() == PrincipalConsumer && !matchAny(p.Token().Scope, d.Key) {
		return Proposed{}, s.refuse(st, p, "proposal.create", model.Fail(op, KindScopeExceeded, "the key is outside the token's scope"))
	}
	if d.Subject == "" {
		d.Subject = SubjectSelf
	}
	var (
		out     Proposed
		refused *Error
	)
	err = s.commit(st, func(st *state, b *batch) error {
		if p.Kind() == PrincipalConsumer && d.Subject == SubjectSelf && st.userOnly(d.Key) {
			refused = model.Fail(op, KindUserOnlyWrite, "")
			b.Receipt(model.DenyReceipt(p, "proposal.create", refused))
			return nil
		}
		if p.Kind() == PrincipalConsumer && !mayContribute(st.grantsFor(p.Consumer, OpContribute, b.Now), d.Key) {
			refused = model.Fail(op, KindScopeExceeded, "no contribute grant covers this key")
			b.Receipt(model.DenyReceipt(p, "proposal.create", refused))
			return nil
		}
		if p.Kind() == PrincipalConsumer {
			if err := st.tooManyProposals(op, p.Consumer); err != nil {
				return err
			}
		}
		// A proposal never lowers the tier of the field it would change.
		tier := model.RaiseTier(defaultSensitivity(d.Key), d.Sensitivity)
		if f := st.field(d.Key); f != nil && d.Subject == SubjectSelf {
			tier = model.RaiseTier(tier, f.Meta.Tier)
		}
		id, err := identity.NewOrderedID("prp_", b.Now)
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		pr := &Proposal{
			ID: id, Status: StatusProposed, Key: d.Key, Value: d.Value, Subject: d.Subject,
			Kind: d.Kind, Assertion: d.Assertion,
			Producer:  Producer{Authenticated: producer, Reported: d.Reported},
			Evidence:  model.OrEmpty(d.Evidence),
			ValidFrom: d.ValidFrom, ValidTo: d.ValidTo,
			Sensitivity:  tier,
			Restrictions: model.OrEmpty(d.Restrictions),
			PersonasHint: d.PersonasHint, Note: d.Note,
			ProposedAt: b.Now, Revision: b.NextRevision(),
		}
		st.filePending(b, pr)
		b.Receipt(Receipt{Actor: p.Actor(), Operation: "proposal.create", Decision: "allow", Records: []string{id}, Revision: pr.Revision})
		out = Proposed{ProposalID: id, Status: StatusProposed, Revision: pr.Revision}
		return nil
	})
	if err == nil && refused != nil {
		return Proposed{}, refused
	}
	return out, err
}

// mayContribute reports whether a contribute grant's key selectors cover
// key. A contribute grant without key selectors covers no key.
func mayContribute(grants []*Grant, key string) bool {
	for _, g := range grants {
		if matchAny(g.Selectors.Keys, key) {
			return true
		}
	}
	return false
}

// Review returns the owner's queue: every pending proposal, in the order
// they arrived, each with the active claim it would supersede (its key,
// about the same subject), if any, and how its value differs from that
// claim's. The queue is read from the store: the view holds only which
// proposals are pending.
func (s *Service) Review(ctx context.Context, p Principal) ([]ReviewItem, error) {
	const op = "review"
	ids, err := ownerRead(s, op, p, func(st *state) ([]string, error) {
		ids := make([]string, 0, len(st.Pending))
		for id := range st.Pending {
			ids = append(ids, id)
		}
		// Revisions are assigned in the journal's order: first come, first shown.
		sort.Slice(ids, func(i, j int) bool { return st.Pending[ids[i]] < st.Pending[ids[j]] })
		return ids, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Proposal, 0, len(ids))
	err = s.eng.Store.View(func(tx Tx) error {
		for _, id := range ids {
			pr, err := engine.LoadProposal(tx, id)
			if err != nil {
				return err
			}
			// Decided since the queue was read: no longer in it.
			if pr != nil && pr.Status == StatusProposed {
				out = append(out, *pr)
			}
		}
		return nil
	})
	if err != nil {
		return nil, model.Wrap(op, KindInternal, err)
	}
	// What each would change, as the view holds it now.
	return ownerRead(s, op, p, func(st *state) ([]ReviewItem, error) {
		items := make([]ReviewItem, len(out))
		for i, pr := range out {
			items[i].Proposal = pr
			r := st.current(pr.Key, pr.Subject)
			if r == nil {
				continue
			}
			c := r.Head()
			items[i].Current = &ReviewCurrent{ClaimID: c.ID, Version: c.Version, Value: c.Value,
				Sensitivity: c.Sensitivity, Restrictions: model.OrEmpty(c.Restrictions), WrittenBy: c.WrittenBy}
			items[i].Diff = jsondiff.Values(c.Value, pr.Value)
			items[i].Conflict = true
		}
		return items, nil
	})
}

// Confirm turns a pending proposal into an active claim (version 1) in the
// given personas. It records the owner's decision only: the assertion stays
// what the producer said, and no sharing authority is created. Only the
// owner may confirm; an application never confirms, its own proposals least
// of all.
func (s *Service) Confirm(ctx context.Context, p Principal, id string, in ConfirmInput) (Written, error) {
	const op = "confirm"
	if err := p.RequireOwner(op); err != nil {
		return Written{}, err
	}
	if !identity.ValidID(id, "prp_") {
		return Written{}, model.Fail(op, KindInvalid, "malformed proposal id")
	}
	if err := s.accept(op, &in); err != nil {
		return Written{}, err
	}
	if in.Edits != nil && in.Edits.Sensitivity != "" {
		if _, ok := model.TierRank[in.Edits.Sensitivity]; !ok {
			return Written{}, model.Fail(op, KindInvalid, "unknown sensitivity tier")
		}
	}
	if in.Edits != nil && in.Edits.Value != nil && !json.Valid(in.Edits.Value) {
		return Written{}, model.Fail(op, KindInvalid, "edited value is not JSON")
	}
	pr, err := s.pendingProposal(op, p, id)
	if err != nil {
		return Written{}, err
	}
	var out Written
	err = s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.Pending[id]; !ok {
			return model.Fail(op, KindConflict, "the proposal was already decided")
		}
		var err error
		out, err = st.confirmIn(op, b, pr, in)
		return err
	})
	return out, err
}

// confirmIn confirms pending proposal pr as in says, in the journal: it
// validates before it changes the view, so an error leaves nothing staged.
func (st *state) confirmIn(op string, b *batch, pr *Proposal, in ConfirmInput) (Written, error) {
	var out Written
	id := pr.ID
	personas, err := st.checkPersonas(op, in.Personas)
	if err != nil {
		return Written{}, err
	}
	cid, err := identity.NewOrderedID("clm_", b.Now)
	if err != nil {
		return Written{}, model.Wrap(op, KindInternal, err)
	}
	at := b.Now
	c := &Claim{
		ID: cid, Version: 1, Key: pr.Key, Value: pr.Value, Subject: pr.Subject,
		Kind: pr.Kind, Assertion: pr.Assertion,
		Confirmation: Confirmation{Status: ConfirmationConfirmed, By: "owner", At: &at},
		Producer:     pr.Producer, Evidence: pr.Evidence,
		ValidFrom: pr.ValidFrom, ValidTo: pr.ValidTo, RecordedAt: at,
		Sensitivity: pr.Sensitivity, Restrictions: pr.Restrictions,
		WrittenBy: writtenByOf(pr.Producer.Authenticated), Note: pr.Note,
	}
	if e := in.Edits; e != nil {
		if e.Value != nil {
			c.Value = e.Value
		}
		if e.Sensitivity != "" {
			c.Sensitivity = e.Sensitivity
		}
		if e.ValidFrom != nil {
			c.ValidFrom = e.ValidFrom
		}
		if e.ValidTo != nil {
			c.ValidTo = e.ValidTo
		}
	}
	if err := st.checkRelationship(op, c); err != nil {
		return Written{}, err
	}
	var rec *claimRecord
	if f := st.field(c.Key); f != nil && c.Subject == SubjectSelf {
		// The proposal changes an existing field: a new version of its
		// claim (never a second claim beside it), at the higher tier, in
		// the personas it had and those given now.
		rec = st.addVersion(b, f, c.Producer.Authenticated, "owner", func(v *Claim) {
			v.Value, v.Kind, v.Assertion, v.Producer = c.Value, c.Kind, c.Assertion, c.Producer
			v.Evidence, v.ValidFrom, v.ValidTo, v.Note = c.Evidence, c.ValidFrom, c.ValidTo, c.Note
			v.Restrictions = model.MergeRestrictions(v.Restrictions, c.Restrictions)
			v.Sensitivity = model.RaiseTier(v.Sensitivity, c.Sensitivity)
			v.WrittenBy = c.WrittenBy
		})
		if merged := mergePersonas(rec.Meta.Personas, personas); len(merged) != len(rec.Meta.Personas) {
			rec = st.SetMeta(b, rec, func(m *claimMeta) { m.Personas = merged })
		}
		c = rec.Head()
		cid = c.ID
	} else {
		rec = st.newClaim(b, c, personas)
	}
	rev := c.Revision
	decided := pr.Decided(StatusConfirmed, at)
	decided.ClaimID = cid
	st.decide(b, &decided)
	b.Receipt(Receipt{Actor: "owner", Operation: "proposal.confirm", Decision: "allow", Records: []string{id, c.Ref()}, Revision: rev})
	out = Written{Claim: rec.View(rec.Meta.Head), Revision: rev}
	return out, nil
}

func writtenByOf(a Authenticated) string {
	if a.Kind == "owner" {
		return WrittenByUser
	}
	return a.ID
}

// Reject declines a pending proposal and erases its draft value.
func (s *Service) Reject(ctx context.Context, p Principal, id string, in RejectInput) (uint64, error) {
	const op = "reject"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "prp_") {
		return 0, model.Fail(op, KindInvalid, "malformed proposal id")
	}
	if err := s.accept(op, &in); err != nil {
		return 0, err
	}
	if len(in.Reason) > 1024 {
		return 0, model.Fail(op, KindInvalid, "the reason is longer than 1024 bytes")
	}
	pr, err := s.pendingProposal(op, p, id)
	if err != nil {
		return 0, err
	}
	var rev uint64
	err = s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.Pending[id]; !ok {
			return model.Fail(op, KindConflict, "the proposal was already decided")
		}
		rev = st.rejectIn(b, pr, in.Reason)
		return nil
	})
	return rev, err
}

// rejectIn rejects pending proposal pr with reason, in the journal, and
// returns the revision.
func (st *state) rejectIn(b *batch, pr *Proposal, reason string) uint64 {
	rev := b.NextRevision()
	decided := pr.Decided(StatusRejected, b.Now)
	decided.Reason = reason
	st.decide(b, &decided)
	b.Receipt(Receipt{Actor: "owner", Operation: "proposal.reject", Decision: "allow", Records: []string{pr.ID}, Revision: rev})
	return rev
}

// mergePersonas returns the sorted union of a and b.
func mergePersonas(a, b []string) []string {
	out := append(append([]string{}, a...), b...)
	sort.Strings(out)
	return slices.Compact(out)
}

// checkPersonas returns a sorted, de-duplicated copy of ids, all of which
// must exist.
func (st *state) checkPersonas(op string, ids []string) ([]string, error) {
	seen := map[string]bool{}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := st.Personas[id]; !ok {
			return nil, model.Fail(op, KindInvalid, "unknown persona")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

// appIndexKey is pr's entry in bucketByApp, or "" when no app's consumer
// record made it (the owner's, an OIDC recipient's, or an app's since
// removed) or it is blind (the app does not know of it). Callers hold st.mu.
func (st *state) appIndexKey(pr *Proposal) string {
	a := pr.Producer.Authenticated
	if a.Kind != "consumer" || pr.Blind {
		return ""
	}
	c := st.Consumers[a.ID]
	if c == nil || pr.ProposedAt.Before(c.CreatedAt) {
		return ""
	}
	return c.ID + "/" + pr.ID
}

// loadAppIndex notes in st.upgrades, for a store from before bucketByApp,
// the entries it lacks (after the consumers are loaded).
func (st *state) loadAppIndex(tx Tx) error {
	if _, ok, err := tx.Get(engine.BucketMeta, engine.MetaByAppIndex); err != nil || ok {
		return err
	}
	st.Upgrades = append(st.Upgrades, write{Bucket: engine.BucketMeta, Key: engine.MetaByAppIndex, Value: []byte("true")})
	return engine.LoadEach(tx, engine.BucketProposals, func(p *Proposal) {
		if k := st.appIndexKey(p); k != "" {
			st.Upgrades = append(st.Upgrades, write{Bucket: engine.BucketByApp, Key: k, Value: []byte("{}")})
		}
	})
}

// filePending stores pr, a new pending proposal, and indexes it.
func (st *state) filePending(b *batch, pr *Proposal) {
	st.Pending[pr.ID] = pr.Revision
	st.CountPending(pr, 1)
	b.Put(engine.BucketProposals, pr.ID, pr)
	b.Put(engine.BucketPending, pr.ID, struct{}{})
	if k := st.appIndexKey(pr); k != "" {
		b.Put(engine.BucketByApp, k, struct{}{})
	}
}

// fileBlind files app p's write c to a field hidden from it, where a write
// to an absent field would be committed, as a blind proposal at tier (never
// below the field's own), and answers *out as that absent field's write:
// committed, c its first version. Neither the answer, the app's proposals
// nor its quota of waiting ones tells the two apart; past the app's cap of
// blind proposals the write is dropped, with a deny receipt for the owner.
func (st *state) fileBlind(b *batch, p Principal, op string, c *Claim, tier string, out *FieldWritten) error {
	c.Revision = b.NextRevision()
	*out = FieldWritten{FieldRead: FieldRead{Field: claimField(c, true), Revision: c.Revision}, Status: WriteCommitted}
	if st.BlindBy[p.Consumer] >= st.Settings.PendingCap() {
		b.Receipt(model.DenyReceipt(p, "proposal.create", &Error{Kind: KindRateLimited}))
		return nil
	}
	pid, err := identity.NewOrderedID("prp_", b.Now)
	if err != nil {
		return model.Wrap(op, KindInternal, err)
	}
	st.filePending(b, &Proposal{ID: pid, Status: StatusProposed, Key: c.Key, Value: c.Value, Subject: SubjectSelf, Kind: c.Kind,
		Assertion: c.Assertion, Producer: c.Producer, Evidence: []Evidence{}, Sensitivity: tier, Restrictions: []Restriction{},
		ProposedAt: b.Now, Revision: c.Revision, Blind: true})
	b.Receipt(Receipt{Actor: p.Actor(), Operation: "proposal.create", Recipient: p.Consumer, Decision: "allow", Records: []string{pid}, Revision: c.Revision})
	return nil
}

// tooManyProposals is KindRateLimited when app already has as many
// proposals waiting for the owner as the settings allow (with st.mu held).
func (st *state) tooManyProposals(op, app string) *Error {
	if st.PendingBy[app] < st.Settings.PendingCap() {
		return nil
	}
	return &Error{Op: op, Kind: KindRateLimited, RetryAfter: time.Minute,
		Public: "too many of the app's proposals wait for the owner's review"}
}

// decide stores the decided form of a pending proposal.
func (st *state) decide(b *batch, decided *Proposal) {
	if _, ok := st.Pending[decided.ID]; ok {
		st.CountPending(decided, -1)
	}
	delete(st.Pending, decided.ID)
	b.Put(engine.BucketProposals, decided.ID, decided)
	b.Del(engine.BucketPending, decided.ID)
}

// pendingProposal reads proposal id for a decision: not found if there is
// none, a conflict if it was decided (see pendingProposals).
func (s *Service) pendingProposal(op string, p Principal, id string) (*Proposal, error) {
	prs, errs, err := s.pendingProposals(op, p, []string{id})
	if err != nil {
		return nil, err
	}
	return prs[0], errs[0]
}

// pendingProposals reads proposals ids for a decision, in one store read
// once what the view says of them is durable (so that the store holds
// them): for each, the proposal, or not found if there is none, or a
// conflict if it was decided. err is an error of the whole read.
func (s *Service) pendingProposals(op string, p Principal, ids []string) (prs []*Proposal, errs []error, err error) {
	if _, err := ownerRead(s, op, p, func(st *state) (struct{}, error) { return struct{}{}, nil }); err != nil {
		return nil, nil, err
	}
	prs, errs = make([]*Proposal, len(ids)), make([]error, len(ids))
	if err := s.eng.Store.View(func(tx Tx) error {
		for i, id := range ids {
			pr, err := engine.LoadProposal(tx, id)
			switch {
			case err != nil:
				return err
			case pr == nil:
				errs[i] = model.NotFound(op)
			case pr.Status != StatusProposed:
				errs[i] = model.Fail(op, KindConflict, "the proposal was already decided")
			default:
				prs[i] = pr
			}
		}
		return nil
	}); err != nil {
		return nil, nil, model.Wrap(op, KindInternal, err)
	}
	return prs, errs, nil
}
