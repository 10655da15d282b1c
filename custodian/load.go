package custodian

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	// segmentio's decoder is encoding/json's, without its separate
	// validating pass and with far fewer allocations: loading the view is
	// mostly decoding, and it halves that.
	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/engine"
)

// Loading the view at unlock. The store hands values over one by one in key
// order (decrypting them); decoding them is the larger cost, and runs on
// every core, in batches, while the store goes on reading.

// decodeEach decodes every value of bucket as a T on all cores and calls
// add for each, in key order, from one goroutine (engine.DecodeWhere).
func decodeEach[T any](tx Tx, bucket string, add func(key string, v *T) error) error {
	return decodeWhere(tx, bucket, nil, add)
}

// decodeWhere is decodeEach for the keys keep accepts (nil: all); the
// values of the others are neither opened nor decoded.
func decodeWhere[T any](tx Tx, bucket string, keep func(key string) bool, add func(key string, v *T) error) error {
	return engine.DecodeWhere(tx, bucket, keep, decodeValue[T], add)
}

// decodeValue decodes raw into v with segmentio's decoder. A claim's
// reported producer information goes into scratch (a worker's, already
// there), then into a map of its size: the decoder would make one with
// room for 64 entries.
func decodeValue[T any](raw []byte, v *T, scratch map[string]string) error {
	c, isClaim := any(v).(*Claim)
	if isClaim {
		c.Producer.Reported = scratch
	}
	err := fastjson.Unmarshal(raw, v)
	if isClaim {
		c.Producer.Reported = nil
		if len(scratch) > 0 {
			m := make(map[string]string, len(scratch)) // maps.Clone would keep scratch's room
			maps.Copy(m, scratch)
			c.Producer.Reported = m
			clear(scratch)
		}
	}
	return err
}

// intern is [engine.Intern].
func intern(s string) string { return engine.Intern(s) }

// internClaim makes c's repeated strings share one copy each, and its
// reported producer information one map with every claim that reports the
// same (reported holds those maps, by content; claims never change them).
func internClaim(c *Claim, reported map[string]map[string]string) {
	c.Subject, c.Kind, c.Assertion = intern(c.Subject), intern(c.Kind), intern(c.Assertion)
	c.Sensitivity, c.Status, c.WrittenBy = intern(c.Sensitivity), intern(c.Status), intern(c.WrittenBy)
	c.Confirmation.Status, c.Confirmation.By = intern(c.Confirmation.Status), intern(c.Confirmation.By)
	a := &c.Producer.Authenticated
	a.Kind, a.ID, a.Issuer = intern(a.Kind), intern(a.ID), intern(a.Issuer)
	for i := range c.Restrictions {
		if p := c.Restrictions[i].Params; p != nil {
			m := make(map[string]any, len(p)) // sized to fit (see below); maps.Clone keeps the room
			for k, v := range p {
				m[k] = v
			}
			c.Restrictions[i].Params = m
		}
		c.Restrictions[i].Type = intern(c.Restrictions[i].Type)
	}
	// An app reports the same few things again and again: claims that
	// report the same share one map.
	if r := c.Producer.Reported; r != nil && reported != nil {
		keys := slices.Sorted(maps.Keys(r))
		var id strings.Builder
		for _, k := range keys {
			id.WriteString(strconv.Quote(k))
			id.WriteString(strconv.Quote(r[k]))
		}
		m, ok := reported[id.String()]
		if !ok {
			m = r // decodeEach made it to fit
			reported[id.String()] = m
		}
		c.Producer.Reported = m
	}
}

// loadClaims reads every claim's metadata into st and indexes the active
// ones: from the snapshot and the metas written since (see snapshot.go),
// or, without a snapshot, from every meta. Claims' content stays in the
// store until a read or write needs it, but for a store whose metas predate
// their index fields: those claims' heads are read (and the metas upgraded
// by the unlock's commit).
func (st *State) loadClaims(tx Tx) error {
	records, active, ok, err := st.loadSnapshot(tx)
	if err != nil {
		return err
	}
	if !ok {
		if records, err = st.loadMetas(tx); err != nil {
			return err
		}
		active = nil
	}
	// The map made at its final size: growing it moves every entry again
	// at each doubling.
	st.claims = make(map[string]*claimRecord, len(records))
	var stale []string // metas from before their index fields
	for _, r := range records {
		st.claims[r.meta.ID] = r
		if r.meta.HeadRev == 0 {
			stale = append(stale, r.meta.ID)
		}
	}
	if len(stale) > 0 {
		if err := st.upgradeMetas(tx, stale); err != nil {
			return err
		}
		active = nil // their keys were not known
	}
	if active == nil {
		active = records[:0] // records is not used again
		for _, r := range records {
			if r.meta.Status == StatusActive {
				active = append(active, r)
			}
		}
		sortRecords(active)
	}
	st.indexAll(active)
	return nil
}

// loadMetas reads every claim meta of the store.
func (st *State) loadMetas(tx Tx) ([]*claimRecord, error) {
	var records []*claimRecord
	err := decodeEach(tx, bucketClaimMeta, func(k string, m *claimMeta) error {
		m.ID = k
		engine.InternMeta(m)
		records = append(records, &claimRecord{meta: *m, cache: st.cache})
		return nil
	})
	return records, err
}

// upgradeMetas fills the index fields of the metas of claims ids from
// their heads, and notes the upgraded metas in st.upgrades.
func (st *State) upgradeMetas(tx Tx, ids []string) error {
	todo := make(map[string]*claimRecord, len(ids))
	for _, id := range ids {
		r := st.claims[id]
		todo[versionKey(id, r.meta.Head)] = r
	}
	if err := decodeWhere(tx, bucketClaims, func(k string) bool { return todo[k] != nil }, func(k string, c *Claim) error {
		r := todo[k]
		if c.ID != r.meta.ID || c.Version != r.meta.Head {
			return fmt.Errorf("claim %s: out of sequence", k)
		}
		internClaim(c, nil)
		r.fill(c)
		return nil
	}); err != nil {
		return err
	}
	// (keep reads todo while add runs: add leaves it alone.)
	for k, r := range todo {
		if r.meta.HeadRev == 0 {
			return fmt.Errorf("claim version %s missing", k)
		}
		raw, err := json.Marshal(r.meta)
		if err != nil {
			return fmt.Errorf("encode claim meta %s: %w", r.meta.ID, err)
		}
		st.upgrades = append(st.upgrades, write{bucket: bucketClaimMeta, key: r.meta.ID, value: raw})
	}
	return nil
}

// keyPrefix is the eight bytes of k from off as a big-endian integer,
// zero-padded: prefixes of two keys that differ order them as the keys.
func keyPrefix(k string, off int) uint64 {
	var b [8]byte
	if off < len(k) {
		copy(b[:], k[off:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// sortRecords sorts records by key, then id (the indexes' order).
func sortRecords(records []*claimRecord) {
	// Sort on keys copied out of the records (comparing through each
	// record misses the cache at every step), and on their first sixteen
	// bytes as integers: most comparisons end there.
	type sortKey struct {
		p0, p1 uint64
		r      *claimRecord
	}
	keys := make([]sortKey, len(records))
	for i, r := range records {
		keys[i] = sortKey{keyPrefix(r.meta.Key, 0), keyPrefix(r.meta.Key, 8), r}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if a.p0 != b.p0 {
			return cmp.Compare(a.p0, b.p0)
		}
		if a.p1 != b.p1 {
			return cmp.Compare(a.p1, b.p1)
		}
		return recordCmp(a.r, b.r)
	})
	for i := range keys {
		records[i] = keys[i].r
	}
}

// indexAll indexes active (the active records, sorted by sortRecords)
// into st's empty indexes, building them side by side.
func (st *State) indexAll(active []*claimRecord) {
	// The records come sorted: each index appends them (Load) rather than
	// searching for their places; the maps are made at their final size.
	st.fieldOf = make(map[string]*claimRecord, len(active))
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, r := range active {
			st.active.Load(r)
		}
	})
	wg.Go(func() {
		for _, r := range active {
			indexUnder(st.byTier, r.meta.Tier).Load(r)
		}
		for _, r := range active {
			for _, p := range r.meta.Personas {
				indexUnder(st.byPersona, p).Load(r)
			}
		}
	})
	for _, r := range active {
		st.categories[category(r.meta.Key)]++
		if best := betterField(st.fieldOf[r.meta.Key], r); best != nil {
			st.fieldOf[r.meta.Key] = best
		}
		st.indexSubject(r)
	}
	wg.Wait()
}
