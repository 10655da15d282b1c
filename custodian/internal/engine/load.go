package engine

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/model"
)

// Loading the view at unlock. The store hands values over one by one in key
// order (decrypting them); decoding them is the larger cost, and runs on
// every core, in batches, while the store goes on reading.
//
// segmentio's decoder is encoding/json's, without its separate
// validating pass and with far fewer allocations: loading the view is
// mostly decoding, and it halves that.

// loadBatch is how many values a decoding worker takes at once.
const loadBatch = 256

// DecodeWhere decodes the values of bucket whose keys keep accepts (nil:
// all) as T on all cores, with decode (given a scratch map of its worker's
// to reuse), and calls add for each, in key order, from one goroutine. The
// values of the keys keep refuses are neither opened nor decoded. The
// store hands values over one by one in key order (decrypting them, on the
// workers when the Tx is a LazyRanger); decoding them is the larger cost,
// and runs while the store goes on reading.
func DecodeWhere[T any](tx Tx, bucket string, keep func(key string) bool, decode func(raw []byte, v *T, scratch map[string]string) error, add func(key string, v *T) error) error {
	type item struct {
		key  string
		raw  []byte
		lazy func() ([]byte, error) // opens raw, when the store defers it
		v    *T
		err  error
	}
	type batch struct {
		items []item
		done  chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *batch, workers*2)
	ready := make(chan *batch, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// decode may fill a map already there instead of making one.
			scratch := make(map[string]string, 8)
			for b := range todo {
				for i := range b.items {
					it := &b.items[i]
					if it.lazy != nil {
						if it.raw, it.err = it.lazy(); it.err != nil {
							it.lazy = nil
							continue
						}
						it.lazy = nil
					}
					it.v = new(T)
					if err := decode(it.raw, it.v, scratch); err != nil {
						it.err = fmt.Errorf("%s %s: %w", bucket, it.key, err)
					}
					it.raw = nil
				}
				close(b.done)
			}
		})
	}
	// The consumer applies batches in order as they are decoded.
	var addErr error
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for b := range ready {
			<-b.done
			for _, it := range b.items {
				if addErr != nil {
					break
				}
				if it.err != nil {
					addErr = it.err
					break
				}
				addErr = add(it.key, it.v)
			}
		}
	}()
	cur := &batch{done: make(chan struct{})}
	flush := func() {
		if len(cur.items) == 0 {
			return
		}
		ready <- cur
		todo <- cur
		cur = &batch{done: make(chan struct{})}
	}
	queue := func(it item) error {
		if keep != nil && !keep(it.key) {
			return nil
		}
		cur.items = append(cur.items, it)
		if len(cur.items) == loadBatch {
			flush()
		}
		return nil
	}
	var err error
	if lr, ok := tx.(LazyRanger); ok {
		// Opening (decrypting) runs on the workers too.
		err = lr.ForEachLazy(bucket, func(k string, v func() ([]byte, error)) error { return queue(item{key: k, lazy: v}) })
	} else {
		err = tx.ForEach(bucket, func(k string, v []byte) error { return queue(item{key: k, raw: v}) })
	}
	flush()
	close(todo)
	close(ready)
	wg.Wait()
	<-consumed
	if err != nil {
		return err
	}
	return addErr
}

// decodeEach decodes every value of bucket as a T on all cores and calls
// add for each, in key order, from one goroutine (DecodeWhere).
func decodeEach[T any](tx Tx, bucket string, add func(key string, v *T) error) error {
	return decodeWhere(tx, bucket, nil, add)
}

// decodeWhere is decodeEach for the keys keep accepts (nil: all); the
// values of the others are neither opened nor decoded.
func decodeWhere[T any](tx Tx, bucket string, keep func(key string) bool, add func(key string, v *T) error) error {
	return DecodeWhere(tx, bucket, keep, decodeValue[T], add)
}

// decodeValue decodes raw into v with segmentio's decoder. A claim's
// reported producer information goes into scratch (a worker's, already
// there), then into a map of its size: the decoder would make one with
// room for 64 entries.
func decodeValue[T any](raw []byte, v *T, scratch map[string]string) error {
	c, isClaim := any(v).(*model.Claim)
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

// intern is [Intern].
func intern(s string) string { return Intern(s) }

// internClaim makes c's repeated strings share one copy each, and its
// reported producer information one map with every claim that reports the
// same (reported holds those maps, by content; claims never change them).
func internClaim(c *model.Claim, reported map[string]map[string]string) {
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

// LoadClaims reads every claim's metadata into st and indexes the active
// ones: from the snapshot and the metas written since (see snapshot.go),
// or, without a snapshot, from every meta. Claims' content stays in the
// store until a read or write needs it, but for a store whose metas predate
// their index fields: those claims' heads are read (and the metas upgraded
// by the unlock's commit).
func (st *State) LoadClaims(tx Tx) error {
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
	st.Claims = make(map[string]*ClaimRecord, len(records))
	var stale []string // metas from before their index fields
	for _, r := range records {
		st.Claims[r.Meta.ID] = r
		if r.Meta.HeadRev == 0 {
			stale = append(stale, r.Meta.ID)
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
			if r.Meta.Status == model.StatusActive {
				active = append(active, r)
			}
		}
		sortRecords(active)
	}
	st.indexAll(active)
	return nil
}

// loadMetas reads every claim meta of the store.
func (st *State) loadMetas(tx Tx) ([]*ClaimRecord, error) {
	var records []*ClaimRecord
	err := decodeEach(tx, BucketClaimMeta, func(k string, m *ClaimMeta) error {
		m.ID = k
		InternMeta(m)
		records = append(records, &ClaimRecord{Meta: *m, cache: st.Cache})
		return nil
	})
	return records, err
}

// upgradeMetas fills the index fields of the metas of claims ids from
// their heads, and notes the upgraded metas in st.upgrades.
func (st *State) upgradeMetas(tx Tx, ids []string) error {
	todo := make(map[string]*ClaimRecord, len(ids))
	for _, id := range ids {
		r := st.Claims[id]
		todo[VersionKey(id, r.Meta.Head)] = r
	}
	if err := decodeWhere(tx, BucketClaims, func(k string) bool { return todo[k] != nil }, func(k string, c *model.Claim) error {
		r := todo[k]
		if c.ID != r.Meta.ID || c.Version != r.Meta.Head {
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
		if r.Meta.HeadRev == 0 {
			return fmt.Errorf("claim version %s missing", k)
		}
		raw, err := json.Marshal(r.Meta)
		if err != nil {
			return fmt.Errorf("encode claim meta %s: %w", r.Meta.ID, err)
		}
		st.Upgrades = append(st.Upgrades, Write{Bucket: BucketClaimMeta, Key: r.Meta.ID, Value: raw})
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
func sortRecords(records []*ClaimRecord) {
	// Sort on keys copied out of the records (comparing through each
	// record misses the cache at every step), and on their first sixteen
	// bytes as integers: most comparisons end there.
	type sortKey struct {
		p0, p1 uint64
		r      *ClaimRecord
	}
	keys := make([]sortKey, len(records))
	for i, r := range records {
		keys[i] = sortKey{keyPrefix(r.Meta.Key, 0), keyPrefix(r.Meta.Key, 8), r}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if a.p0 != b.p0 {
			return cmp.Compare(a.p0, b.p0)
		}
		if a.p1 != b.p1 {
			return cmp.Compare(a.p1, b.p1)
		}
		return RecordCmp(a.r, b.r)
	})
	for i := range keys {
		records[i] = keys[i].r
	}
}

// indexAll indexes active (the active records, sorted by sortRecords)
// into st's empty indexes, building them side by side.
func (st *State) indexAll(active []*ClaimRecord) {
	// The records come sorted: each index appends them (Load) rather than
	// searching for their places; the maps are made at their final size.
	st.FieldOf = make(map[string]*ClaimRecord, len(active))
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, r := range active {
			st.Active.Load(r)
		}
	})
	wg.Go(func() {
		for _, r := range active {
			indexUnder(st.ByTier, r.Meta.Tier).Load(r)
		}
		for _, r := range active {
			for _, p := range r.Meta.Personas {
				indexUnder(st.ByPersona, p).Load(r)
			}
		}
	})
	for _, r := range active {
		st.Categories[category(r.Meta.Key)]++
		if best := betterField(st.FieldOf[r.Meta.Key], r); best != nil {
			st.FieldOf[r.Meta.Key] = best
		}
		st.indexSubject(r)
	}
	wg.Wait()
}

// Pending proposals. The store holds every proposal (bucketProposals) and
// an index of the pending ones (bucketPending); the view holds only the
// pending ones' ids and revisions, so that neither the drafts waiting for
// review nor the history of decided proposals take memory.
const (
	BucketPending    = "proposals_pending" // prp_… → {} while the proposal waits
	metaPendingIndex = "pending_index"     // set once bucketPending is complete

	// BucketByApp indexes every proposal an app made by its consumer
	// record: "con_…/prp_…" → {}. An app asking how its proposals stand
	// reads its own, never every proposal; an app that takes a removed
	// app's name has another record, and inherits none.
	BucketByApp    = "proposals_by_app"
	MetaByAppIndex = "proposals_by_app_index" // set once bucketByApp is complete
)

// CountPending adds n to the pending proposals of pr's app (its blind
// ones apart, in BlindBy); the owner's own proposals are not counted (with
// st.mu held for writing).
func (st *State) CountPending(pr *model.Proposal, n int) {
	a := pr.Producer.Authenticated
	if a.Kind == "owner" {
		return
	}
	by := st.PendingBy
	if pr.Blind {
		by = st.BlindBy
	}
	if by[a.ID] += n; by[a.ID] <= 0 {
		delete(by, a.ID)
	}
}

// LoadProposal reads proposal id from the store (nil if there is none).
func LoadProposal(tx Tx, id string) (*model.Proposal, error) {
	raw, ok, err := tx.Get(BucketProposals, id)
	if err != nil || !ok {
		return nil, err
	}
	pr := &model.Proposal{}
	if err := json.Unmarshal(raw, pr); err != nil {
		return nil, fmt.Errorf("proposal %s: %w", id, err)
	}
	return pr, nil
}

const MetaSettings = "settings"

func defaultSettings() model.Settings { return model.Settings{AutoGrant: model.SensitivityPublic} }

func LoadSettings(tx Tx) (model.Settings, error) {
	set := defaultSettings()
	raw, ok, err := tx.Get(BucketMeta, MetaSettings)
	if err != nil || !ok {
		return set, err
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return set, fmt.Errorf("settings: %w", err)
	}
	return set, nil
}

// Load reads the whole canonical store (receipts aside) into st, a new
// view (NewView); more reads, in the same transaction, what the rules keep
// beside the view. The daemon holds the collector off around it (see
// custodian.Config.LoadGC).
func Load(st *State, store Store, cacheBytes int64, more func(tx Tx) error) error {
	st.Cache = NewClaimCache(store, cacheBytes)
	return store.View(func(tx Tx) error {
		if _, err := LoadMetaJSON(tx, MetaRevision, &st.Revision); err != nil {
			return err
		}
		var err error
		if st.Settings, err = LoadSettings(tx); err != nil {
			return err
		}
		if _, err := LoadMetaJSON(tx, MetaReceiptFloor, &st.ReceiptFloor); err != nil {
			return err
		}
		if _, err := LoadMetaJSON(tx, MetaHead, &st.Head); err != nil {
			return err
		}
		if err := st.LoadClaims(tx); err != nil {
			return err
		}
		if err := st.LoadPending(tx); err != nil {
			return err
		}
		if err := tx.ForEach(BucketPersonas, func(k string, v []byte) error {
			p := &model.Persona{}
			if err := json.Unmarshal(v, p); err != nil {
				return fmt.Errorf("persona %s: %w", k, err)
			}
			p.Node = k
			st.Personas[p.ID] = p
			return nil
		}); err != nil {
			return err
		}
		if err := LoadEach(tx, BucketSummaries, func(s *model.Summary) { st.Summaries[s.ID] = s }); err != nil {
			return err
		}
		// Invalidations, in the order they were made.
		if err := LoadEach(tx, BucketInvalidations, func(inv *Invalidation) { inv.Apply(st) }); err != nil {
			return err
		}
		if err := LoadEach(tx, BucketEntities, func(e *model.Entity) { st.Entities[e.ID] = e }); err != nil {
			return err
		}
		st.ProjectionAt = 1 // a store from before the record
		if _, err := LoadMetaJSON(tx, MetaGraphProjection, &st.ProjectionAt); err != nil {
			return err
		}
		var floor uint64
		if ok, err := LoadMetaJSON(tx, MetaGraphFloor, &floor); err != nil {
			return err
		} else if ok {
			st.Lag.SetFloor(floor)
		}
		if err := st.loadAccess(tx); err != nil {
			return err
		}
		return more(tx)
	})
}

// loadAccess reads who may do what (grants, consumers, tokens, trusted
// issuers and DEC keys and policies, presentations), the requests and the
// quarantine into st.
func (st *State) loadAccess(tx Tx) error {
	if err := LoadEach(tx, BucketGrants, func(g *model.Grant) { st.Grants[g.ID] = g; st.IndexGrant(g) }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketConsumers, func(c *model.Consumer) { st.Consumers[c.Name] = c }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketRequests, func(r *model.ContextRequest) { st.Requests[r.ID] = r }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketTrust, func(t *model.TrustedIssuer) { st.Trust[t.ID] = t }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketQuarantine, func(q *model.QuarantineRecord) { st.Quarantine.Add(q) }); err != nil {
		return err
	}
	st.Quarantine.Sort()
	if err := tx.ForEach(BucketBundlesSeen, func(k string, _ []byte) error {
		st.BundlesSeen[k] = true
		return nil
	}); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketDECTrust, func(d *model.DECIssuer) { st.DecTrust[d.Issuer] = d }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketDECPolicies, func(d *model.DECPolicy) { st.DecPolicies[d.ID] = d }); err != nil {
		return err
	}
	if err := LoadEach(tx, BucketDECPresentations, func(pr *model.Presentation) { st.Presentations[pr.Token] = pr }); err != nil {
		return err
	}
	return LoadEach(tx, BucketTokens, func(t *model.ServiceToken) {
		var h [32]byte
		copy(h[:], t.Hash)
		st.Tokens[h] = t
		st.TokenByID[t.ID] = t
	})
}
