package custodian

import (
	"context"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// maxBulk bounds the proposals one bulk review decision names.
const maxBulk = 1000

// ConfirmBulk confirms up to 1,000 pending proposals into the same
// personas, as one write: each as Confirm would, with one store commit for
// all. A proposal that cannot be confirmed (unknown, already decided, about
// an entity that does not exist) is reported in its item; the others are
// confirmed. Owner only.
func (s *Service) ConfirmBulk(ctx context.Context, p Principal, in BulkConfirmInput) (BulkDecision, error) {
	const op = "review.confirm"
	if err := p.RequireOwner(op); err != nil {
		return BulkDecision{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return BulkDecision{}, err
	}
	return s.decideBulk(op, p, in.IDs, func(st *state, b *batch, pr *Proposal) (BulkItem, error) {
		w, err := st.confirmIn(op, b, pr, ConfirmInput{Personas: in.Personas})
		return BulkItem{ClaimID: w.Claim.ID, Version: w.Claim.Version}, err
	})
}

// RejectBulk rejects up to 1,000 pending proposals with one reason, as one
// write. Owner only.
func (s *Service) RejectBulk(ctx context.Context, p Principal, in BulkRejectInput) (BulkDecision, error) {
	const op = "review.reject"
	if err := p.RequireOwner(op); err != nil {
		return BulkDecision{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return BulkDecision{}, err
	}
	if len(in.Reason) > 1024 {
		return BulkDecision{}, model.Fail(op, KindInvalid, "the reason is longer than 1024 bytes")
	}
	return s.decideBulk(op, p, in.IDs, func(st *state, b *batch, pr *Proposal) (BulkItem, error) {
		st.rejectIn(b, pr, in.Reason)
		return BulkItem{}, nil
	})
}

// decideBulk reads the proposals ids names and decides each pending one
// with decide, in one journal job.
func (s *Service) decideBulk(op string, p Principal, ids []string, decide func(*state, *batch, *Proposal) (BulkItem, error)) (BulkDecision, error) {
	if len(ids) == 0 || len(ids) > maxBulk {
		return BulkDecision{}, model.Fail(op, KindInvalid, "ids must name 1 to 1000 proposals")
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !identity.ValidID(id, "prp_") {
			return BulkDecision{}, model.Fail(op, KindInvalid, "malformed proposal id")
		}
		if seen[id] {
			return BulkDecision{}, model.Fail(op, KindInvalid, "a proposal id is named twice")
		}
		seen[id] = true
	}
	prs, errs, err := s.pendingProposals(op, p, ids)
	if err != nil {
		return BulkDecision{}, err
	}
	out := BulkDecision{Items: make([]BulkItem, len(ids))}
	err = s.write(op, p, func(st *state, b *batch) error {
		out.Decided = 0
		for i, id := range ids {
			err := errs[i]
			item := BulkItem{}
			if err == nil {
				if _, ok := st.Pending[id]; !ok {
					err = model.Fail(op, KindConflict, "the proposal was already decided")
				} else {
					item, err = decide(st, b, prs[i])
				}
			}
			item.ProposalID = id
			if err != nil {
				d := model.Describe(err)
				item = BulkItem{ProposalID: id, Constraint: d.Constraint, Error: d.Error}
			} else {
				out.Decided++
			}
			out.Items[i] = item
		}
		out.Revision = st.Revision
		return nil
	})
	if err != nil {
		return BulkDecision{}, err
	}
	return out, nil
}

// current is the active claim a proposal for key about subject would
// supersede, or nil (with st.mu held).
func (st *state) current(key, subject string) *claimRecord {
	if subject == SubjectSelf {
		return st.field(key)
	}
	var best *claimRecord
	for _, r := range st.BySubject[subject] {
		if r.Meta.Status == StatusActive && r.Meta.Key == key && (best == nil || r.Meta.HeadRev > best.Meta.HeadRev) {
			best = r
		}
	}
	return best
}
