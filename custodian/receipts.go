package custodian

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// denyReceipt is the receipt of a refused request of p.
func denyReceipt(p Principal, operation string, err *Error) Receipt {
	return Receipt{Actor: p.actor(), Operation: operation, Recipient: p.Consumer,
		Decision: "deny", Constraint: err.Kind.Row().Constraint}
}

// refuse records that p's request was refused with err, and returns err
// (or the journal's error, if the receipt could not be recorded).
func (s *Service) refuse(st *state, p Principal, operation string, err *Error) error {
	if cerr := s.commit(st, func(st *state, b *batch) error {
		b.Receipt(denyReceipt(p, operation, err))
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
	if err := requireOwner(op, p); err != nil {
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
			r, err := loadReceipt(tx, seq)
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

// loadReceipt reads receipt seq as stored (a set's records not filled in).
func loadReceipt(tx Tx, seq uint64) (Receipt, error) {
	var r Receipt
	raw, ok, err := tx.Get(engine.BucketReceipts, engine.ReceiptKey(seq))
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("receipt %d missing", seq)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("receipt %d: %w", seq, err)
	}
	return r, nil
}

// Verification is the result of checking the receipt chain.
type Verification struct {
	OK    bool   `json:"ok"`
	Count uint64 `json:"count"` // receipts kept in full, checked one by one
	// Rolled counts the receipts that checkpoints stand for; Checkpoints
	// counts the checkpoints.
	Rolled      uint64   `json:"rolled,omitempty"`
	Checkpoints int      `json:"checkpoints,omitempty"`
	Problems    []string `json:"problems,omitempty"`
}

// VerifyReceipts checks the whole receipt chain: every receipt decrypts and
// parses, sequence numbers run from 1 without gaps, each links to its
// predecessor's hash, each hash recomputes, and the chain ends at the head
// the store records. Owner only. A broken chain is a result, not an error.
func (s *Service) VerifyReceipts(ctx context.Context, p Principal) (Verification, error) {
	const op = "receipts.verify"
	if err := requireOwner(op, p); err != nil {
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
	v := verifyChain(s.eng.Store, head, s.checkpointMAC)
	return v, nil
}

// verifyChain checks the checkpoints, then the receipts kept in full, as
// one chain ending at head; mac recomputes a checkpoint's MAC (nil: MACs
// are not checked).
func verifyChain(store Store, head chainHead, mac func(Checkpoint) (string, error)) Verification {
	var v Verification
	problem := func(format string, args ...any) {
		if len(v.Problems) < 20 {
			v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
		}
	}
	prev := ""
	var seq uint64
	err := store.View(func(tx Tx) error {
		floor, last, rolled, n, err := verifyCheckpoints(tx, mac, problem)
		if err != nil {
			return err
		}
		v.Rolled, v.Checkpoints, prev = rolled, n, last
		for seq = floor; seq <= head.Seq; seq++ {
			raw, ok, err := tx.Get(engine.BucketReceipts, engine.ReceiptKey(seq))
			if err != nil {
				problem("receipt %d: unreadable (corrupt or tampered)", seq)
				prev = ""
				continue
			}
			if !ok {
				problem("receipt %d: missing", seq)
				prev = ""
				continue
			}
			v.Count++
			var r Receipt
			if err := json.Unmarshal(raw, &r); err != nil {
				problem("receipt %d: malformed", seq)
				prev = ""
				continue
			}
			if r.Seq != seq {
				problem("receipt %d: holds sequence number %d", seq, r.Seq)
			}
			if (seq > 1 && prev != "" || seq == floor) && r.Prev != prev {
				problem("receipt %d: does not link to its predecessor", seq)
			}
			if engine.ReceiptHash(&r) != r.Hash {
				problem("receipt %d: hash does not match its content", seq)
			}
			if r.Set != "" {
				if refs, err := engine.LoadSet(tx, &r); err != nil {
					problem("receipt %d: its disclosed set is missing or altered", seq)
				} else if len(refs) != r.Count || len(r.Records) != 0 {
					problem("receipt %d: its disclosed set does not match its count", seq)
				}
			}
			prev = r.Hash
		}
		// Nothing may follow the recorded head, nor precede the floor.
		return tx.ForEach(engine.BucketReceipts, func(k string, _ []byte) error {
			if k > engine.ReceiptKey(head.Seq) {
				problem("receipt %s: beyond the recorded head", k)
			}
			if k < engine.ReceiptKey(floor) {
				problem("receipt %s: rolled into a checkpoint, yet still stored", k)
			}
			return nil
		})
	})
	if err != nil {
		problem("receipts: %v", err)
	}
	if head.Seq > 0 && prev != head.Hash {
		problem("the chain does not end at the recorded head")
	}
	v.OK = len(v.Problems) == 0
	return v
}

// limitOrDefault is a listing's limit: 0 means 100.
func limitOrDefault(limit int) int {
	if limit == 0 {
		return 100
	}
	return limit
}
