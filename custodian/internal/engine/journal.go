package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// Journal is the single writer's queue: jobs are queued by any goroutine
// and taken in order by one (Run), which hands them to commit a group at a
// time — as many as are queued, up to max — so that a group shares one
// store commit and its fsync. A job for which alone is true is a group of
// its own: every job before it is committed before it runs, and none after
// it shares its group.
type Journal[J any] struct {
	jobs   chan J
	queued atomic.Int64 // queued, not yet taken
	max    int
	alone  func(J) bool
	commit func(group []J)
	// onQueue, if set (tests), runs after each job is counted queued.
	onQueue func()
}

// NewJournal returns a journal of groups of at most max jobs that commit
// commits; onQueue (nil: none) runs when a job is queued (tests).
func NewJournal[J any](max int, alone func(J) bool, commit func(group []J), onQueue func()) *Journal[J] {
	return &Journal[J]{jobs: make(chan J, max), max: max, alone: alone, commit: commit, onQueue: onQueue}
}

// Queue hands j to the journal; it blocks while max jobs are queued.
func (jl *Journal[J]) Queue(j J) {
	jl.queued.Add(1)
	if jl.onQueue != nil {
		jl.onQueue()
	}
	jl.jobs <- j
}

// Queued is how many jobs are queued and not yet taken (behind a commit
// in progress, say).
func (jl *Journal[J]) Queued() int { return int(jl.queued.Load()) }

// Run takes the queued jobs and commits them in groups until stop is
// closed. One goroutine runs it; commit runs on it.
func (jl *Journal[J]) Run(stop <-chan struct{}) {
	var carry []J
	var next J
	hasNext := false // an alone job met while draining: the next group
	for {
		switch {
		case hasNext:
			carry, hasNext = append(carry, next), false
		case len(carry) == 0:
			select {
			case <-stop:
				return
			case j := <-jl.jobs:
				jl.queued.Add(-1)
				carry = append(carry, j)
			}
		}
	drain:
		for len(carry) < jl.max && !jl.alone(carry[0]) {
			select {
			case j := <-jl.jobs:
				jl.queued.Add(-1)
				if jl.alone(j) {
					next, hasNext = j, true
					break drain
				}
				carry = append(carry, j)
			default:
				break drain
			}
		}
		jl.commit(carry)
		clear(carry)
		carry = carry[:0]
	}
}

// Write is one store operation of a group.
type Write struct {
	Bucket, Key string
	Value       []byte // nil: delete
	IfAbsent    bool   // put only if the key is absent (content-addressed values)
	Append      bool   // the key sorts after every key of the bucket (see Appender)
}

// Apply performs w in tx, through its Appender for an append if it has
// one.
func Apply(tx Tx, w Write) error {
	switch {
	case w.Value == nil:
		return tx.Delete(w.Bucket, w.Key)
	case w.Append:
		if a, ok := tx.(Appender); ok {
			return a.Append(w.Bucket, w.Key, w.Value)
		}
	case w.IfAbsent:
		if _, ok, err := tx.Get(w.Bucket, w.Key); err != nil || ok {
			return err
		}
	}
	return tx.Put(w.Bucket, w.Key, w.Value)
}

// Buckets of the canonical store. Keys are opaque ids, never names or values.
const (
	BucketMeta      = "meta"
	BucketClaims    = "claims"     // id@version → Claim (immutable, or a tombstone after delete)
	BucketClaimMeta = "claim_meta" // id → claimMeta
	BucketProposals = "proposals"  // prp_… → Proposal
	BucketPersonas  = "personas"   // per_… → Persona
	BucketGrants    = "grants"     // grt_… → Grant
	BucketConsumers = "consumers"  // con_… → Consumer
	BucketTokens    = "tokens"     // tok_… → ServiceToken
	BucketReceipts  = "receipts"   // %016x seq → Receipt

	MetaRevision = "revision"
	MetaHead     = "receipt_head"
)

// Batch collects what one job stages: store writes and receipts.
type Batch struct {
	Now      time.Time
	St       *State
	Writes   []Write
	Receipts []model.Receipt
	Graph    graph.Delta // the projection's change, computed by finishJob
	Err      error
}

// Put stages v, JSON-encoded, under bucket/key.
func (b *Batch) Put(bucket, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Err = errors.Join(b.Err, fmt.Errorf("encode %s/%s: %w", bucket, key, err))
		return
	}
	b.Writes = append(b.Writes, Write{Bucket: bucket, Key: key, Value: raw})
}

// Del stages the removal of bucket/key.
func (b *Batch) Del(bucket, key string) {
	b.Writes = append(b.Writes, Write{Bucket: bucket, Key: key})
}

// Receipt stages a receipt; the journal assigns its seq, prev and hash.
func (b *Batch) Receipt(r model.Receipt) {
	b.Receipts = append(b.Receipts, r)
}

// NextRevision assigns the next revision to a write.
func (b *Batch) NextRevision() uint64 {
	b.St.Revision++
	return b.St.Revision
}

type ChainHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

func ReceiptKey(seq uint64) string { return fmt.Sprintf("%016x", seq) }

// EncodeReceipt sets r.Hash and returns r's JSON, encoding it once: the
// hash covers the JSON with an empty hash field, which is the last field, so
// the stored form is that JSON with the hash filled in.
func EncodeReceipt(r *model.Receipt) []byte {
	r.Hash = ""
	raw, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode receipt: %v", err))
	}
	sum := sha256.Sum256(raw)
	r.Hash = "sha256:" + hex.EncodeToString(sum[:])
	const tail = `"hash":""}`
	if !bytes.HasSuffix(raw, []byte(tail)) {
		panic("custodian: receipt JSON does not end with its hash field")
	}
	out := make([]byte, 0, len(raw)+len(r.Hash))
	out = append(out, raw[:len(raw)-len(tail)]...)
	out = append(out, `"hash":"`...)
	out = append(out, r.Hash...)
	return append(out, `"}`...)
}

// ReceiptHash is SHA-256 over the receipt's JSON with an empty hash field.
func ReceiptHash(r *model.Receipt) string {
	c := *r
	c.Hash = ""
	raw, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("custodian: encode receipt: %v", err))
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
