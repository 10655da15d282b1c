package cayley

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	cgraph "github.com/cayleygraph/cayley/graph"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/quad"
	"github.com/hidal-go/hidalgo/kv"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	bolt "go.etcd.io/bbolt"
)

// The watermark is kept in a bucket of this package's own in the bolt
// file, beside Cayley's (meta, log, sp, ops and the v… and n… value
// buckets), as 8 bytes big-endian; and in memory, read once at open.
//
// It used to be a quad (watermarkNode -watermarkPred-> n), replaced by
// every Apply. Cayley's kv layer never forgets a quad: a deleted one stays
// in its log, and in the list of quad ids its index keeps under
// (watermarkNode, watermarkPred) — which every Apply read back, walked and
// rewrote, so that a write cost O(writes before it). A file written so is
// migrated when opened (see loadWatermark).
var (
	wmBucket = []byte("phc.projection")
	wmKey    = []byte("watermark")
)

// boltKV is hidalgo's kv over the graph's bolt file, Cayley's storage, with
// one addition: while joined is set, every read-write transaction Cayley
// opens is that one, and Cayley's commit or rollback of it does nothing —
// its owner, commit below, ends it. So several calls of Cayley's
// ApplyDeltas and the watermark are written in one transaction: all of it
// is committed, or none.
type boltKV struct {
	*hbolt.DB
	joined kv.Tx
}

var _ kv.KV = (*boltKV)(nil)

func (b *boltKV) Tx(ctx context.Context, rw bool) (kv.Tx, error) {
	if rw && b.joined != nil {
		return joinedTx{b.joined}, nil
	}
	return b.DB.Tx(ctx, rw)
}

func (b *boltKV) View(ctx context.Context, fn func(tx kv.Tx) error) error {
	return kv.View(ctx, b, fn)
}

func (b *boltKV) Update(ctx context.Context, fn func(tx kv.Tx) error) error {
	return kv.Update(ctx, b, fn)
}

// joinedTx is the joined transaction as Cayley sees it.
type joinedTx struct{ kv.Tx }

func (joinedTx) Commit(context.Context) error { return nil }
func (joinedTx) Close() error                 { return nil }

func encodeWatermark(w uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), w)
}

// readWatermark reads the watermark's bucket; found is false if it holds
// none (a new file, or one written before the bucket existed).
func readWatermark(db *bolt.DB) (w uint64, found bool, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(wmBucket)
		if b == nil {
			return nil
		}
		v := b.Get(wmKey)
		if v == nil {
			return nil
		}
		if len(v) != 8 {
			return fmt.Errorf("graph: the watermark is %d bytes long, not 8", len(v))
		}
		w, found = binary.BigEndian.Uint64(v), true
		return nil
	})
	return w, found, err
}

// commit applies changes to Cayley and sets the watermark to w, in one
// transaction on bolt. changes holds each quad once. The caller holds g.mu.
func (g *Graph) commit(changes []cgraph.Delta, w uint64) error {
	ignore := cgraph.IgnoreOpts{IgnoreDup: true, IgnoreMissing: true}
	if g.kv == nil { // the memstore, which applies deltas one by one
		if len(changes) > 0 {
			if err := g.qs.ApplyDeltas(changes, ignore); err != nil {
				return fmt.Errorf("graph: apply: %w", err)
			}
		}
		g.wm = w
		return nil
	}
	// Cayley's kv layer is given the additions and the removals apart:
	// given both at once, it counts each value's references up and down
	// over the whole call, and adds a quad with a value whose count went
	// down overall without that value — the quad is lost (a claim losing
	// two persona edges and gaining one loses the one). Apart, in the one
	// transaction, neither can happen.
	var adds, dels []cgraph.Delta
	for _, c := range changes {
		if c.Action == cgraph.Add {
			adds = append(adds, c)
		} else {
			dels = append(dels, c)
		}
	}
	ctx := context.Background()
	dels, err := g.knownOnly(ctx, dels)
	if err != nil {
		return fmt.Errorf("graph: apply: %w", err)
	}
	tx, err := g.kv.DB.Tx(ctx, true)
	if err != nil {
		return fmt.Errorf("graph: apply: %w", err)
	}
	g.kv.joined = tx
	for _, part := range [][]cgraph.Delta{adds, dels} {
		if len(part) > 0 && err == nil {
			err = g.qs.ApplyDeltas(part, ignore)
		}
	}
	g.kv.joined = nil
	if err == nil {
		err = tx.Put(ctx, kv.Key{wmBucket, wmKey}, encodeWatermark(w))
	}
	if err == nil {
		err = tx.Commit(ctx)
	} else {
		tx.Close()
	}
	if err != nil {
		// Bolt rolled the transaction back (if it failed while syncing,
		// what the file holds is not certain: read it again). Cayley
		// keeps what it wrote in memory — its value ids, its unflushed
		// index entries: open it again.
		g.reloadWatermark()
		if qs, rerr := ckv.New(g.kv, kvOptions); rerr == nil {
			g.qs = qs
		} else {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("graph: apply: %w", err)
	}
	g.wm, g.wmStale = w, false
	return nil
}

// knownOnly drops from dels the removals of quads that name a value the
// store does not hold — such a quad is not there — because Cayley's kv
// layer takes an unknown value as none: told to remove (a, p, b) labelled
// with a label it has never seen, it removes (a, p, b) unlabelled.
func (g *Graph) knownOnly(ctx context.Context, dels []cgraph.Delta) ([]cgraph.Delta, error) {
	if len(dels) == 0 {
		return dels, nil
	}
	index := map[quad.Value]int{}
	var vals []quad.Value
	for _, d := range dels {
		for _, dir := range quad.Directions {
			if v := d.Quad.Get(dir); v != nil {
				if _, ok := index[v]; !ok {
					index[v] = len(vals)
					vals = append(vals, v)
				}
			}
		}
	}
	ids, err := g.qs.(*ckv.QuadStore).RefsOf(ctx, vals)
	if err != nil {
		return nil, err
	}
	known := func(v quad.Value) bool {
		id := ids[index[v]]
		return id != nil && id != ckv.Int64Value(0)
	}
	kept := dels[:0]
	for _, d := range dels {
		ok := true
		for _, dir := range quad.Directions {
			if v := d.Quad.Get(dir); v != nil && !known(v) {
				ok = false
			}
		}
		if ok {
			kept = append(kept, d)
		}
	}
	return kept, nil
}

// reloadWatermark rereads the watermark from the file after a failed
// write; if that fails too, watermark reads the file until a write
// succeeds. The caller holds g.mu for writing.
func (g *Graph) reloadWatermark() {
	w, _, err := readWatermark(g.db)
	g.wm, g.wmStale = w, err != nil
}

// watermark is the graph's watermark. The caller holds g.mu.
func (g *Graph) watermark() (uint64, error) {
	if !g.wmStale {
		return g.wm, nil
	}
	w, _, err := readWatermark(g.db)
	if err != nil {
		return 0, fmt.Errorf("graph: %w", err)
	}
	return w, nil
}

// loadWatermark reads the watermark of a graph just opened or reset. A
// file from before the watermark's bucket keeps it as a quad: that is read
// (this once, at the cost of every watermark ever written) and moved to the
// bucket, the quad deleted in the same transaction. The caller holds g.mu
// or owns g alone.
func (g *Graph) loadWatermark() error {
	g.wm, g.wmStale = 0, false
	if g.db == nil {
		return nil
	}
	w, found, err := readWatermark(g.db)
	if err != nil || found {
		g.wm = w
		return err
	}
	// A file written before the watermark had its bucket keeps it as
	// quads. Such a file is not migrated but reported at watermark 0, so
	// that the custodian rebuilds it from the store: the Cayley kv bugs the
	// older code did not work around (see commit) may have lost edges in
	// it, and the rebuild also moves it to the current index layout and
	// drops the watermark's dead history.
	return nil
}
