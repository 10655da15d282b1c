package custodian

import (
	"context"
	"fmt"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// refuse records that p's request was refused with err, and returns err
// (or the journal's error, if the receipt could not be recorded).
func (s *Service) refuse(st *state, p Principal, operation string, err *Error) error {
	if cerr := s.commit(st, func(st *state, b *batch) error {
		b.Receipt(model.DenyReceipt(p, operation, err))
		return nil
	}); cerr != nil {
		return cerr
	}
	return err
}

// Receipts returns the newest receipts, newest first, at most limit of them
// (1–1000; 0 means 100). Owner only.
func (s *Service) Receipts(ctx context.Context, p Principal, limit int) ([]Receipt, error) {
	const op = "receipts"
	if err := p.RequireOwner(op); err != nil {
		return nil, err
	}
	limit = limitOrDefault(limit)
	if limit < 0 || limit > 1000 {
		return nil, model.Fail(op, KindInvalid, "limit must be between 1 and 1000")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return nil, err
	}
	defer release()
	st.Mu.RLock()
	head, floor, g := st.Head.Seq, st.ReceiptFloor, st.Applied
	st.Mu.RUnlock()
	if err := st.AwaitDurable(op, g); err != nil {
		return nil, err
	}
	out := make([]Receipt, 0, min(uint64(limit), head))
	err = s.eng.Store.View(func(tx Tx) error {
		// Receipts before the floor live on as checkpoints only.
		for seq := head; seq >= floor && seq >= 1 && len(out) < limit; seq-- {
			r, err := engine.LoadReceipt(tx, seq)
			if err != nil {
				return err
			}
			if r.Set != "" {
				if r.Records, err = engine.LoadSet(tx, &r); err != nil {
					return fmt.Errorf("receipt %d: %w", seq, err)
				}
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, model.Wrap(op, KindInternal, err)
	}
	return out, nil
}

// VerifyReceipts checks the whole receipt chain: every receipt decrypts and
// parses, sequence numbers run from 1 without gaps, each links to its
// predecessor's hash, each hash recomputes, and the chain ends at the head
// the store records. Owner only. A broken chain is a result, not an error.
func (s *Service) VerifyReceipts(ctx context.Context, p Principal) (Verification, error) {
	const op = "receipts.verify"
	if err := p.RequireOwner(op); err != nil {
		return Verification{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return Verification{}, err
	}
	defer release()
	st.Mu.RLock()
	head, g := st.Head, st.Applied
	st.Mu.RUnlock()
	if err := st.AwaitDurable(op, g); err != nil {
		return Verification{}, err
	}
	v := engine.VerifyChain(s.eng.Store, head, s.eng.CheckpointMAC)
	return v, nil
}

// limitOrDefault is a listing's limit: 0 means 100.
func limitOrDefault(limit int) int {
	if limit == 0 {
		return 100
	}
	return limit
}
