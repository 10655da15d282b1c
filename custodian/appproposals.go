package custodian

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// maxOwnProposals bounds the proposals [Service.OwnProposals] lists.
const maxOwnProposals = 100

func statusOf(pr *Proposal) ProposalStatus {
	ps := ProposalStatus{ProposalID: pr.ID, Status: pr.Status, ProposedAt: pr.ProposedAt, DecidedAt: pr.DecidedAt}
	if pr.Status == StatusProposed {
		ps.Key = pr.Key
	}
	return ps
}

// ownedBy reports whether consumer p made pr: its name, and made since p's
// consumer record was created (since; see consumerSince) — an app that
// takes a deleted app's name inherits none of its proposals. A blind one
// (Proposal.Blind) the app was never told of.
func ownedBy(pr *Proposal, p Principal, since time.Time) bool {
	a := pr.Producer.Authenticated
	return p.Kind() == PrincipalConsumer && a.Kind == "consumer" && a.ID == p.Consumer && !pr.ProposedAt.Before(since) && !pr.Blind
}

// consumerSince is when consumer name's record was created: what was
// written under that name before belongs to another app of the same name,
// since removed. Zero for an OIDC recipient (no record; its identity is
// its issuer and subject). Callers hold st.mu.
func (st *state) consumerSince(name string) time.Time {
	if c := st.Consumers[name]; c != nil {
		return c.CreatedAt
	}
	return time.Time{}
}

// OwnProposals returns how the proposals of consumer p stand: the one
// called id, or (id "") its newest 100, newest first. A proposal of
// another app, or of the owner, is KindNotFound like one that does not
// exist. Only an app asks: the owner has the review queue.
func (s *Service) OwnProposals(ctx context.Context, p Principal, id string) (OwnProposals, error) {
	const op = "proposal.status"
	if id != "" && !identity.ValidID(id, "prp_") {
		return OwnProposals{}, model.Fail(op, KindInvalid, "malformed proposal id")
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return OwnProposals{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return OwnProposals{}, err
	}
	defer release()
	if p.Kind() != PrincipalConsumer {
		return OwnProposals{}, model.Fail(op, KindInvalid, "only an app asks how its proposals stand; the owner reviews them")
	}
	// Wait until what the view has applied is durable, so that the store
	// holds every proposal the app was told about.
	var since time.Time
	var app string // the app's consumer record: its entries in bucketByApp
	rev, err := readSettled(op, st, func() (uint64, error) {
		since = st.consumerSince(p.Consumer)
		if c := st.Consumers[p.Consumer]; c != nil {
			app = c.ID
		}
		return st.Revision, nil
	})
	if err != nil {
		return OwnProposals{}, err
	}
	out := OwnProposals{Proposals: []ProposalStatus{}, Revision: rev}
	err = s.eng.Store.View(func(tx Tx) error {
		if id != "" {
			pr, err := engine.LoadProposal(tx, id)
			if err != nil {
				return err
			}
			if pr != nil && ownedBy(pr, p, since) {
				out.Proposals = append(out.Proposals, statusOf(pr))
			}
			return nil
		}
		if app == "" {
			return nil
		}
		return forEachPrefix(tx, engine.BucketByApp, app+"/", func(k string, _ []byte) error {
			pr, err := engine.LoadProposal(tx, strings.TrimPrefix(k, app+"/"))
			if err != nil {
				return err
			}
			if pr != nil && ownedBy(pr, p, since) {
				out.Proposals = append(out.Proposals, statusOf(pr))
			}
			return nil
		})
	})
	if err != nil {
		return OwnProposals{}, model.Wrap(op, KindInternal, err)
	}
	if id != "" && len(out.Proposals) == 0 {
		return OwnProposals{}, model.NotFound(op)
	}
	sort.SliceStable(out.Proposals, func(i, j int) bool {
		a, b := out.Proposals[i], out.Proposals[j]
		if !a.ProposedAt.Equal(b.ProposedAt) {
			return a.ProposedAt.After(b.ProposedAt)
		}
		return a.ProposalID > b.ProposalID
	})
	if len(out.Proposals) > maxOwnProposals {
		out.Proposals = out.Proposals[:maxOwnProposals]
	}
	return out, nil
}

// WithdrawProposal withdraws consumer p's own proposal id while it waits
// for the owner: its draft is erased as a rejection's is, and the owner no
// longer sees it. A proposal of another app, or none, is KindNotFound; one
// already decided is KindConflict. The token needs write mode.
func (s *Service) WithdrawProposal(ctx context.Context, p Principal, id string) (ProposalStatus, error) {
	const op = "proposal.withdraw"
	if !identity.ValidID(id, "prp_") {
		return ProposalStatus{}, model.Fail(op, KindInvalid, "malformed proposal id")
	}
	if err := s.rateLimit(op, p, true); err != nil {
		return ProposalStatus{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return ProposalStatus{}, err
	}
	defer release()
	if p.Kind() != PrincipalConsumer {
		return ProposalStatus{}, model.Fail(op, KindInvalid, "only the app that made a proposal withdraws it; the owner rejects it")
	}
	if !p.Token().CanWrite() {
		return ProposalStatus{}, s.refuse(st, p, op, model.Fail(op, KindModeDenied, "the token does not allow writes"))
	}
	since, err := readSettled(op, st, func() (time.Time, error) { return st.consumerSince(p.Consumer), nil })
	if err != nil {
		return ProposalStatus{}, err
	}
	var pr *Proposal
	if err := s.eng.Store.View(func(tx Tx) error {
		var err error
		pr, err = engine.LoadProposal(tx, id)
		return err
	}); err != nil {
		return ProposalStatus{}, model.Wrap(op, KindInternal, err)
	}
	if pr == nil || !ownedBy(pr, p, since) {
		return ProposalStatus{}, model.NotFound(op)
	}
	var out ProposalStatus
	err = s.commit(st, func(st *state, b *batch) error {
		if _, ok := st.Pending[id]; !ok {
			return model.Fail(op, KindConflict, "the proposal was already decided")
		}
		rev := b.NextRevision()
		decided := pr.Decided(StatusWithdrawn, b.Now)
		st.decide(b, &decided)
		b.Receipt(Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "allow", Records: []string{id}, Revision: rev})
		out = statusOf(&decided)
		return nil
	})
	return out, err
}
