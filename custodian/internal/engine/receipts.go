package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
)

// Receipt retention. Receipts are an append-only log in the store, keyed
// by sequence number. Those older than the owner's retention (a year by
// default) are rolled, oldest first, into checkpoints: one record per
// rolled range that keeps what the chain needs — the range, its first
// receipt's link to the one before, its last receipt's hash, a digest over
// every hash in it, and the counts of allow and deny decisions — under a
// MAC with a key derived from the vault's keys. The rolled receipts, and the
// disclosed sets of months no kept receipt names, are then deleted in the
// same commit. Verification walks the checkpoints, then the receipts kept
// in full, as one chain.

const (
	BucketCheckpoints = "receipt_checkpoints" // %016x last seq → Checkpoint
	MetaReceiptFloor  = "receipt_floor"       // the first seq kept in full
	// rollBatch bounds the receipts one roll reads and deletes.
	rollBatch = 50_000
	// rollEvery is how often the custodian looks for receipts to roll.
	rollEvery = time.Hour
	// macLabel names the key checkpoints are MAC'ed under.
	macLabel = "receipt_checkpoints"
)

// Checkpoint stands for the receipts From to To, rolled out of the log.
type Checkpoint struct {
	From    uint64    `json:"from_seq"`
	To      uint64    `json:"to_seq"`
	FirstAt time.Time `json:"first_at"`
	LastAt  time.Time `json:"last_at"`
	Allow   uint64    `json:"allow"`
	Deny    uint64    `json:"deny"`
	Prev    string    `json:"prev"`   // the Prev of receipt From
	Head    string    `json:"head"`   // the Hash of receipt To
	Digest  string    `json:"digest"` // SHA-256 over each receipt's Hash and a newline, in order
	MadeAt  time.Time `json:"made_at"`
	MAC     string    `json:"mac"` // HMAC-SHA256 over this JSON with an empty mac
}

// KeyDeriver is an optional capability of a [Vault]: a key for a purpose
// other than sealing values, derived from the vault's keys (nil error only
// while unlocked). Checkpoints are MAC'ed with one when the vault has it.
type KeyDeriver interface {
	DeriveKey(category string) ([]byte, error)
}

// CheckpointMAC returns the MAC of cp (its mac member ignored), or "" when
// the vault derives no keys.
func (s *Engine) CheckpointMAC(cp Checkpoint) (string, error) {
	kd := s.Keys
	if kd == nil {
		return "", nil
	}
	key, err := kd.DeriveKey(macLabel)
	if err != nil {
		return "", err
	}
	defer clear(key)
	cp.MAC = ""
	raw, err := json.Marshal(cp)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write(raw)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil)), nil
}

// errRollDone stops a scan that has found what it needs.
var errRollDone = errors.New("done")

// RollReceipts rolls the receipts older than the retention into a
// checkpoint, at most rollBatch of them, and reports how many it rolled.
// It does nothing while the vault is locked.
func (s *Engine) RollReceipts() (n uint64, err error) {
	s.rollMu.Lock()
	defer s.rollMu.Unlock()
	err = s.WithView(func(st *State) error {
		if st == nil {
			return nil
		}
		n, err = s.rollIn(st)
		return err
	})
	return n, err
}

// rollIn is RollReceipts on the open view st.
func (s *Engine) rollIn(st *State) (uint64, error) {
	const op = "receipts.roll"
	now := s.Clock.Now()
	st.Mu.RLock()
	floor, head, g := st.ReceiptFloor, st.Head.Seq, st.Applied
	cutoff := now.Add(-st.Settings.Retention())
	st.Mu.RUnlock()
	if err := st.AwaitDurable(op, g); err != nil {
		return 0, err
	}
	// The newest receipt stays in full: the chain always ends in one.
	if head <= floor {
		return 0, nil
	}
	cp := Checkpoint{From: floor, MadeAt: now}
	digest := sha256.New()
	reached := false // every receipt before the cutoff is in cp
	var sets []string
	err := s.Store.View(func(tx Tx) error {
		for seq := floor; seq < head; seq++ {
			if seq-floor == rollBatch {
				return nil
			}
			r, err := LoadReceipt(tx, seq)
			if err != nil {
				return err
			}
			if !r.At.Before(cutoff) {
				reached = true
				return nil
			}
			if seq == floor {
				cp.Prev, cp.FirstAt = r.Prev, r.At
			}
			cp.To, cp.LastAt, cp.Head = seq, r.At, r.Hash
			if r.Decision == "deny" {
				cp.Deny++
			} else {
				cp.Allow++
			}
			digest.Write([]byte(r.Hash))
			digest.Write([]byte{'\n'})
		}
		reached = true
		return nil
	})
	if err != nil {
		return 0, model.Wrap(op, model.KindInternal, err)
	}
	if cp.To == 0 {
		return 0, nil
	}
	cp.Digest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
	if reached {
		// Every kept receipt was made in the cutoff's month or later: the
		// sets of earlier months are named by rolled receipts only.
		month := cutoff.UTC().Format(SetMonth)
		err := s.Store.View(func(tx Tx) error {
			err := tx.ForEach(BucketSets, func(k string, _ []byte) error {
				if k >= month {
					return errRollDone
				}
				sets = append(sets, k)
				return nil
			})
			if errors.Is(err, errRollDone) {
				return nil
			}
			return err
		})
		if err != nil {
			return 0, model.Wrap(op, model.KindInternal, err)
		}
	}
	if cp.MAC, err = s.CheckpointMAC(cp); err != nil {
		return 0, model.Wrap(op, model.KindInternal, err)
	}
	err = s.Queue(&Job{St: st, Apply: func(b *Batch) error {
		if st.ReceiptFloor != floor {
			return model.Fail(op, model.KindConflict, "receipts were rolled meanwhile")
		}
		b.Put(BucketCheckpoints, ReceiptKey(cp.To), cp)
		for seq := cp.From; seq <= cp.To; seq++ {
			b.Del(BucketReceipts, ReceiptKey(seq))
		}
		for _, k := range sets {
			b.Del(BucketSets, k)
			st.Sets.Forget(k)
		}
		st.ReceiptFloor = cp.To + 1
		b.Put(BucketMeta, MetaReceiptFloor, st.ReceiptFloor)
		b.Receipt(model.Receipt{Actor: "custodian", Operation: op, Decision: "allow",
			Records: []string{fmt.Sprintf("receipts:%d-%d", cp.From, cp.To)}})
		return nil
	}})
	if err != nil {
		return 0, err
	}
	n := cp.To - cp.From + 1
	s.Log.Info("receipts rolled into a checkpoint", "from", cp.From, "to", cp.To, "sets", len(sets))
	return n, nil
}

// maintain rolls receipts now and then while the Engine runs.
func (s *Engine) maintain() {
	defer s.Wg.Done()
	t := time.NewTicker(rollEvery)
	defer t.Stop()
	for {
		select {
		case <-s.Stop:
			return
		case <-t.C:
			s.RollAll()
		}
	}
}

// RollAll rolls every receipt past the retention, a batch at a time.
func (s *Engine) RollAll() {
	for {
		n, err := s.RollReceipts()
		if err != nil {
			s.Log.Error("rolling receipts failed", "err", err)
			return
		}
		if n < rollBatch {
			return
		}
	}
}

// verifyCheckpoints checks the checkpoints in order: each begins where the
// one before ended and links to its head, and its MAC verifies (when mac
// is non-nil). It returns the first seq they leave to the log, the hash
// the log's first receipt must link to, the receipts they stand for and
// how many checkpoints there are.
func verifyCheckpoints(tx Tx, mac func(Checkpoint) (string, error), problem func(string, ...any)) (floor uint64, prev string, rolled uint64, n int, err error) {
	floor = 1
	err = tx.ForEach(BucketCheckpoints, func(k string, v []byte) error {
		n++
		var cp Checkpoint
		if err := json.Unmarshal(v, &cp); err != nil {
			problem("checkpoint %s: malformed", k)
			return nil
		}
		switch {
		case cp.From != floor || cp.To < cp.From || k != ReceiptKey(cp.To):
			problem("checkpoint %s: covers %d to %d, after receipt %d", k, cp.From, cp.To, floor-1)
		case cp.Prev != prev:
			problem("checkpoint %s: does not link to what precedes it", k)
		case cp.Allow+cp.Deny != cp.To-cp.From+1:
			problem("checkpoint %s: counts do not match its range", k)
		}
		if mac != nil {
			want, err := mac(cp)
			if err != nil {
				return err
			}
			if want != "" && !hmac.Equal([]byte(want), []byte(cp.MAC)) {
				problem("checkpoint %s: MAC does not verify (altered, or made under other keys)", k)
			}
		}
		floor, prev, rolled = cp.To+1, cp.Head, rolled+cp.To-cp.From+1
		return nil
	})
	return floor, prev, rolled, n, err
}

// LoadReceipt reads receipt seq as stored (a set's records not filled in).
func LoadReceipt(tx Tx, seq uint64) (model.Receipt, error) {
	var r model.Receipt
	raw, ok, err := tx.Get(BucketReceipts, ReceiptKey(seq))
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

// VerifyChain checks the checkpoints, then the receipts kept in full, as
// one chain ending at head; mac recomputes a checkpoint's MAC (nil: MACs
// are not checked).
func VerifyChain(store Store, head ChainHead, mac func(Checkpoint) (string, error)) model.Verification {
	var v model.Verification
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
			raw, ok, err := tx.Get(BucketReceipts, ReceiptKey(seq))
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
			var r model.Receipt
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
			if ReceiptHash(&r) != r.Hash {
				problem("receipt %d: hash does not match its content", seq)
			}
			if r.Set != "" {
				if refs, err := LoadSet(tx, &r); err != nil {
					problem("receipt %d: its disclosed set is missing or altered", seq)
				} else if len(refs) != r.Count || len(r.Records) != 0 {
					problem("receipt %d: its disclosed set does not match its count", seq)
				}
			}
			prev = r.Hash
		}
		// Nothing may follow the recorded head, nor precede the floor.
		return tx.ForEach(BucketReceipts, func(k string, _ []byte) error {
			if k > ReceiptKey(head.Seq) {
				problem("receipt %s: beyond the recorded head", k)
			}
			if k < ReceiptKey(floor) {
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
