package custodian

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// State is the in-memory view of the canonical store, loaded at unlock and
// kept current by the journal. Objects reachable from it are never mutated
// in place once published: a change replaces the pointer, so a reader that
// copied a pointer under mu.RLock may keep using it.
type State struct {
	mu       sync.RWMutex
	broken   bool // a commit failed; nothing may be served
	revision uint64
	head     chainHead
	// receiptFloor is the first receipt kept in full; those before it are
	// rolled into checkpoints.
	receiptFloor uint64
	settings     Settings

	// applied counts the journal's groups applied to the view (under mu);
	// dur tracks which of them are committed. Reads that are not
	// receipted wait for theirs (see awaitDurable).
	applied uint64
	dur     *engine.Durability

	claims    map[string]*claimRecord // claim id → record
	cache     *claimCache             // the resident head versions
	pending   map[string]uint64       // pending proposal id → its revision
	pendingBy map[string]int          // app (consumer or OIDC subject) → its pending proposals
	personas  map[string]*Persona
	grants    map[string]*Grant
	grantsBy  map[string]map[string]*Grant // recipient name → its grants
	consumers map[string]*Consumer         // by name
	tokens    map[[32]byte]*ServiceToken   // by token hash
	tokenByID map[string]*ServiceToken
	requests  map[string]*ContextRequest
	trust     map[string]*TrustedIssuer // iss_… → trusted OIDC issuer

	decTrust    map[string]*DECIssuer // issuer → pinned DEC keys
	quarantine  map[string]*QuarantineRecord
	bundlesSeen map[string]bool
	decPolicies map[string]*DECPolicy // policy id → admission policy

	presentations map[string]*Presentation // tok_… → the DEC document presented with it

	// bySubject indexes the active claims about entities (ent_…) by
	// subject, for deciding which nodes a recipient may see. Claims about
	// self are in active already; indexing them again would cost a map
	// entry per claim of the vault.
	bySubject map[string]map[string]*claimRecord

	summaries map[string]*Summary // sum_… → summary
	entities  map[string]*Entity  // ent_… → entity

	// active, byPersona and byTier index the active claims by key (see
	// index.go); setClaim keeps them current.
	active    *claimIndex
	byPersona map[string]*claimIndex
	byTier    map[string]*claimIndex
	// fieldOf holds each key's field: of its active claims about the
	// owner, the one written last (see field).
	fieldOf map[string]*claimRecord
	// categories counts the active claims per category (first key segment).
	categories map[string]int

	// upgrades is what a store from before an index or a field lacks
	// (bucketPending, bucketByApp, the claim metas' index fields), found by
	// the load; the unlock's commit writes it.
	upgrades []write
	// loadNotes says what the load found and worked around (a snapshot
	// it could not read); the unlock logs them.
	loadNotes []string
	// snap is the claim metas snapshot and what was written since.
	// ignoreSnapshot makes the load read every meta (tests compare).
	snap           snapState
	ignoreSnapshot bool

	// sets remembers the disclosed sets known to be stored (journal only).
	sets *knownSets

	// graph is the Service's graph, for reads on the view.
	graph graph.Graph

	// job is the journal's record of the write being applied (nil
	// outside the journal); see finishJob.
	job *jobCtx
	// lag says how far the graph has followed this view (see graphsync.go).
	lag       *graphLag
	graphSync string // what the unlock did to the graph, for Check
	// projectionAt is the projectionVersion recorded in the store; the
	// first commit after the unlock (which rebuilt a graph of another)
	// records the current one.
	projectionAt int
}

// state is the view as the rules see it: the engine's State, and what only
// the rules keep — the vault's card keys, the pinned custodians, the DEC
// verifier and its admission cache, the Client-Vault state.
type state struct {
	*State
	keys       *vaultKeys              // the vault's own card keys (nil until made)
	custodians map[string]*pinnedEntry // custodian_id → pin
	dec        DECVerifier             // the Service's, for admission on reads
	admMu      sync.Mutex              // guards admCache (readers share mu)
	admCache   map[admissionKey]admission
	// cv is the Client-Vault state: vault key bindings, each reader's
	// value references, the day's resolved values (clientvault.go).
	cv *clientVault
}

// setClaim publishes a new or replaced claim record (with mu held for
// writing).
func (st *State) setClaim(r *claimRecord) {
	old := st.claims[r.meta.ID]
	if st.job != nil {
		noteOld(&st.job.claims, r.meta.ID, old)
	}
	st.claims[r.meta.ID] = r
	r.cache = st.cache
	r.Group = st.applied + 1
	if c := r.Loaded(); c != nil {
		st.cache.Admit(r, c)
	}
	if old != nil {
		st.unindexClaim(old)
	}
	st.indexClaim(r)
}

// setMeta publishes r with edit applied to its meta — its status, personas
// or dispute, never its content: no new version (with mu held for
// writing). It returns the new record.
func (st *State) setMeta(b *batch, r *claimRecord, edit func(m *claimMeta)) *claimRecord {
	nr := r.withMeta(r.meta)
	edit(&nr.meta)
	st.setClaim(nr)
	b.put(bucketClaimMeta, nr.meta.ID, nr.meta)
	return nr
}

// indexSubject adds r to bySubject if it is active and about an entity.
func (st *State) indexSubject(r *claimRecord) {
	if r.meta.Status != StatusActive || r.meta.Subject == SubjectSelf {
		return
	}
	sub := r.meta.Subject
	m := st.bySubject[sub]
	if m == nil {
		m = map[string]*claimRecord{}
		st.bySubject[sub] = m
	}
	m[r.meta.ID] = r
}

// claimMeta is the mutable part of a claim (see [engine.Meta]).
type claimMeta = engine.Meta

type claimRecord struct {
	meta  claimMeta
	cache *claimCache
	// Resident holds the versions in memory (see head and version) and
	// the journal group that published the record.
	engine.Resident[Claim]

	// served caches the JSON of the head as a recipient last received it,
	// and field the head as a PCP field. A record is replaced, never
	// changed, so the caches cannot go stale; the cache drops them with
	// the head (Evicted).
	served atomic.Pointer[servedClaim]
	field  atomic.Pointer[Field]
}

// servedClaim is a recipient view of a claim and its JSON encoding.
type servedClaim struct {
	personas string // the personas shown, joined; the cache key
	claim    Claim
	raw      json.RawMessage
}

// view returns a copy of version v (1-based) as it stands now: its status
// derived from the record, personas from the associations.
func (r *claimRecord) view(v int) Claim {
	c := *r.version(v)
	c.Personas = append([]string{}, r.meta.Personas...)
	switch {
	case r.meta.Status != StatusActive:
		c.Status = r.meta.Status
	case v < r.meta.Head:
		c.Status = StatusSuperseded
	default:
		c.Status = StatusActive
	}
	if v == r.meta.Head && r.meta.DisputedAt != nil {
		c.Confirmation = Confirmation{Status: ConfirmationDisputed, By: "owner", At: r.meta.DisputedAt}
	}
	return c
}

func (r *claimRecord) inPersona(id string) bool {
	for _, p := range r.meta.Personas {
		if p == id {
			return true
		}
	}
	return false
}

func newState() *state {
	return &state{
		State:      newView(),
		custodians: make(map[string]*pinnedEntry),
		admCache:   make(map[admissionKey]admission),
		cv:         newClientVault(),
	}
}

// newView returns an empty view.
func newView() *State {
	st := &State{
		claims:        make(map[string]*claimRecord),
		pending:       make(map[string]uint64),
		pendingBy:     make(map[string]int),
		personas:      make(map[string]*Persona),
		grants:        make(map[string]*Grant),
		grantsBy:      make(map[string]map[string]*Grant),
		consumers:     make(map[string]*Consumer),
		tokens:        make(map[[32]byte]*ServiceToken),
		tokenByID:     make(map[string]*ServiceToken),
		requests:      make(map[string]*ContextRequest),
		trust:         make(map[string]*TrustedIssuer),
		decTrust:      make(map[string]*DECIssuer),
		quarantine:    make(map[string]*QuarantineRecord),
		bundlesSeen:   make(map[string]bool),
		decPolicies:   make(map[string]*DECPolicy),
		presentations: make(map[string]*Presentation),
		summaries:     make(map[string]*Summary),
		bySubject:     make(map[string]map[string]*claimRecord),
		entities:      make(map[string]*Entity),
		settings:      defaultSettings(),
		receiptFloor:  1,
		active:        newClaimIndex(),
		byPersona:     make(map[string]*claimIndex),
		byTier:        make(map[string]*claimIndex),
		categories:    make(map[string]int),
		fieldOf:       make(map[string]*claimRecord),
		sets:          newKnownSets(),
		lag:           newGraphLag(),
		cache:         newClaimCache(nil, 0),
	}
	st.dur = engine.NewDurability(nil)
	return st
}

// markDurable records that every group up to g is committed.
func (st *State) markDurable(g uint64) {
	st.cache.SetDurable(g)
	st.dur.MarkDurable(g)
}

// breakView records that the view no longer matches the store (with mu
// held for writing): nothing may be served from it again, and every read
// waiting for a commit fails. The journal then locks the vault.
func (st *State) breakView() {
	st.broken = true
	st.markFailed()
}

// markFailed records that a commit failed: groups after the durable one
// never will be, and no read of the view may answer any more.
func (st *State) markFailed() { st.dur.MarkFailed() }

// ownerRead runs an owner-only read: fn runs on the current view, and its
// result is returned once what it saw is durable.
func ownerRead[T any](s *Service, op string, p Principal, fn func(st *state) (T, error)) (T, error) {
	var zero T
	if err := requireOwner(op, p); err != nil {
		return zero, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return zero, err
	}
	defer release()
	return readSettled(op, st, func() (T, error) { return fn(st) })
}

// readLocked runs fn under st's read lock, released in a deferred call.
// A stored claim fn cannot read back (see unreadable) ends fn, and is
// returned as the error.
func (st *State) readLocked(fn func()) error {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return guarded(func() error { fn(); return nil })
}

// readSettled runs fn under st's read lock and returns its result once
// what fn saw is durable (see awaitDurable). An error from fn is returned at
// once: it discloses nothing.
func readSettled[T any](op string, st *state, fn func() (T, error)) (T, error) {
	var g uint64
	var v T
	var err error
	if uerr := st.readLocked(func() {
		g = st.applied
		v, err = fn()
	}); uerr != nil {
		var zero T
		return zero, uerr
	}
	if err != nil {
		return v, err
	}
	if err := st.awaitDurable(op, g); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// awaitDurable waits until group g (a value of st.applied read under mu) is
// committed. The journal applies a group to the view before its fsync, so a
// read of the view may see a write that is not yet durable; a read that
// answers without a receipt of its own calls this before answering, so that
// it never discloses a write that a failed commit then loses. It fails if
// the commit of g failed, and once the view is broken (see breakView) even
// if g is durable: the view read may hold a failed job's half-made change.
func (st *State) awaitDurable(op string, g uint64) error {
	if !st.dur.Await(g) {
		return model.Internalf(op, "the view is broken (group %d)", g)
	}
	return nil
}

// loadState reads the whole canonical store (receipts aside) into memory.
func loadState(store Store, cacheBytes int64, ignoreSnapshot bool) (*state, error) {
	st := newState()
	st.ignoreSnapshot = ignoreSnapshot
	st.cache = newClaimCache(store, cacheBytes)
	err := engine.WithoutGC(func() error {
		return store.View(func(tx Tx) error {
			if _, err := loadMetaJSON(tx, metaRevision, &st.revision); err != nil {
				return err
			}
			var err error
			if st.settings, err = loadSettings(tx); err != nil {
				return err
			}
			if _, err := loadMetaJSON(tx, metaReceiptFloor, &st.receiptFloor); err != nil {
				return err
			}
			if _, err := loadMetaJSON(tx, metaHead, &st.head); err != nil {
				return err
			}
			if err := st.loadClaims(tx); err != nil {
				return err
			}
			if err := st.loadPending(tx); err != nil {
				return err
			}
			if err := tx.ForEach(bucketPersonas, func(k string, v []byte) error {
				p := &Persona{}
				if err := json.Unmarshal(v, p); err != nil {
					return fmt.Errorf("persona %s: %w", k, err)
				}
				p.Node = k
				st.personas[p.ID] = p
				return nil
			}); err != nil {
				return err
			}
			if err := loadEach(tx, bucketSummaries, func(s *Summary) { st.summaries[s.ID] = s }); err != nil {
				return err
			}
			// Invalidations, in the order they were made.
			if err := loadEach(tx, bucketInvalidations, func(inv *invalidation) { inv.apply(st.State) }); err != nil {
				return err
			}
			if err := loadEach(tx, bucketEntities, func(e *Entity) { st.entities[e.ID] = e }); err != nil {
				return err
			}
			st.projectionAt = 1 // a store from before the record
			if _, err := loadMetaJSON(tx, metaGraphProjection, &st.projectionAt); err != nil {
				return err
			}
			var floor uint64
			if ok, err := loadMetaJSON(tx, metaGraphFloor, &floor); err != nil {
				return err
			} else if ok {
				st.lag.SetFloor(floor)
			}
			return st.loadAccess(tx)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return st, nil
}

// loadAccess reads who may do what (grants, consumers, tokens, trusted
// issuers and DEC keys and policies), the requests and quarantine, and the
// Client-Vault state into st.
func (st *state) loadAccess(tx Tx) error {
	if err := loadEach(tx, bucketGrants, func(g *Grant) { st.grants[g.ID] = g; st.indexGrant(g) }); err != nil {
		return err
	}
	if err := loadEach(tx, bucketConsumers, func(c *Consumer) { st.consumers[c.Name] = c }); err != nil {
		return err
	}
	if err := st.loadAppIndex(tx); err != nil {
		return err
	}
	if err := loadEach(tx, bucketRequests, func(r *ContextRequest) { st.requests[r.ID] = r }); err != nil {
		return err
	}
	if err := loadEach(tx, bucketTrust, func(t *TrustedIssuer) { st.trust[t.ID] = t }); err != nil {
		return err
	}
	if raw, ok, err := tx.Get(bucketKeys, keysSelf); err != nil {
		return err
	} else if ok {
		st.keys = &vaultKeys{}
		if err := json.Unmarshal(raw, st.keys); err != nil {
			return fmt.Errorf("custodian keys: %w", err)
		}
	}
	if err := loadEach(tx, bucketQuarantine, func(q *QuarantineRecord) { st.quarantine[q.ID] = q }); err != nil {
		return err
	}
	if err := tx.ForEach(bucketBundlesSeen, func(k string, _ []byte) error {
		st.bundlesSeen[k] = true
		return nil
	}); err != nil {
		return err
	}
	if err := tx.ForEach(bucketCustodians, func(k string, v []byte) error {
		pc := &pinnedEntry{key: k}
		if err := json.Unmarshal(v, &pc.PinnedCustodian); err != nil {
			return fmt.Errorf("custodian %s: %w", k, err)
		}
		st.custodians[pc.CustodianID] = pc
		return nil
	}); err != nil {
		return err
	}
	if err := loadEach(tx, bucketDECTrust, func(d *DECIssuer) { st.decTrust[d.Issuer] = d }); err != nil {
		return err
	}
	if err := loadEach(tx, bucketDECPolicies, func(d *DECPolicy) { st.decPolicies[d.ID] = d }); err != nil {
		return err
	}
	if err := st.loadClientVault(tx); err != nil {
		return err
	}
	if err := loadEach(tx, bucketDECPresentations, func(pr *Presentation) { st.presentations[pr.Token] = pr }); err != nil {
		return err
	}
	return loadEach(tx, bucketTokens, func(t *ServiceToken) {
		var h [32]byte
		copy(h[:], t.Hash)
		st.tokens[h] = t
		st.tokenByID[t.ID] = t
	})
}

// loadMetaJSON decodes the JSON stored under key in bucketMeta into v; ok
// is false, and v untouched, when there is none.
func loadMetaJSON(tx Tx, key string, v any) (ok bool, err error) {
	raw, ok, err := tx.Get(bucketMeta, key)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("meta %s: %w", key, err)
	}
	return true, nil
}

func loadEach[T any](tx Tx, bucket string, add func(*T)) error {
	return tx.ForEach(bucket, func(k string, v []byte) error {
		x := new(T)
		if err := json.Unmarshal(v, x); err != nil {
			return fmt.Errorf("%s %s: %w", bucket, k, err)
		}
		add(x)
		return nil
	})
}

func versionKey(id string, v int) string { return fmt.Sprintf("%s@%08d", id, v) }

// fieldStats counts active claims, in all and per category (the first key
// segment).
func (st *State) fieldStats() (int, map[string]int) {
	return st.active.Len(), maps.Clone(st.categories)
}

// loadPending reads which proposals are pending: from their index, or, in
// a store written before the index, from every proposal (the unlock's
// commit then writes the index; see upgrades).
func (st *State) loadPending(tx Tx) error {
	if _, ok, err := tx.Get(bucketMeta, metaPendingIndex); err != nil {
		return err
	} else if ok {
		return tx.ForEach(bucketPending, func(id string, _ []byte) error {
			pr, err := loadProposal(tx, id)
			if err != nil {
				return err
			}
			if pr == nil || pr.Status != StatusProposed {
				return fmt.Errorf("pending proposal %s: not pending in the store", id)
			}
			st.pending[id] = pr.Revision
			st.countPending(pr, 1)
			return nil
		})
	}
	st.upgrades = append(st.upgrades, write{bucket: bucketMeta, key: metaPendingIndex, value: []byte("true")})
	return loadEach(tx, bucketProposals, func(p *Proposal) {
		if p.Status == StatusProposed {
			st.pending[p.ID] = p.Revision
			st.countPending(p, 1)
			st.upgrades = append(st.upgrades, write{bucket: bucketPending, key: p.ID, value: []byte("{}")})
		}
	})
}
