package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/internal/pcp"
	"github.com/phc-project/phc/quarantine"
)

// State is the in-memory view of the canonical store, loaded at unlock and
// kept current by the journal. Objects reachable from it are never mutated
// in place once published: a change replaces the pointer, so a reader that
// copied a pointer under mu.RLock may keep using it.
type State struct {
	Mu       sync.RWMutex
	Broken   bool // a commit failed; nothing may be served
	Revision uint64
	Head     ChainHead
	// ReceiptFloor is the first receipt kept in full; those before it are
	// rolled into checkpoints.
	ReceiptFloor uint64
	Settings     model.Settings

	// Applied counts the journal's groups applied to the view (under mu);
	// dur tracks which of them are committed. Reads that are not
	// receipted wait for theirs (see AwaitDurable).
	Applied uint64
	Dur     *Durability
	// Refusals coalesces the receipts of refusals anyone may cause (see
	// Batch.Refuse); what it counts is written at the latest at a lock.
	Refusals limits.Coalescer[model.Receipt]

	Claims    map[string]*ClaimRecord // claim id → record
	Cache     *claimCache             // the resident head versions
	Pending   map[string]uint64       // pending proposal id → its revision
	PendingBy map[string]int          // app (consumer or OIDC subject) → its pending proposals
	BlindBy   map[string]int          // app → its pending blind proposals (Proposal.Blind), not in PendingBy
	Personas  map[string]*model.Persona
	Grants    map[string]*model.Grant
	GrantsBy  map[string]map[string]*model.Grant // recipient name → its grants
	Consumers map[string]*model.Consumer         // by name
	Tokens    map[[32]byte]*model.ServiceToken   // by token hash
	TokenByID map[string]*model.ServiceToken
	Requests  map[string]*model.ContextRequest
	Trust     map[string]*model.TrustedIssuer // iss_… → trusted OIDC issuer

	DecTrust map[string]*model.DECIssuer // issuer → pinned DEC keys
	// Quarantine indexes the held records; their descriptions and bodies
	// are in the store only (BucketQuarantine, and the migration's bucket
	// of bodies).
	Quarantine  *quarantine.Index
	BundlesSeen map[string]bool
	DecPolicies map[string]*model.DECPolicy // policy id → admission policy

	Presentations map[string]*model.Presentation // tok_… → the DEC document presented with it

	// BySubject indexes the active claims about entities (ent_…) by
	// subject, for deciding which nodes a recipient may see. Claims about
	// self are in active already; indexing them again would cost a map
	// entry per claim of the vault.
	BySubject map[string]map[string]*ClaimRecord

	Summaries map[string]*model.Summary // sum_… → summary
	Entities  map[string]*model.Entity  // ent_… → entity

	// Active, byPersona and byTier index the active claims by key (see
	// index.go); SetClaim keeps them current.
	Active    *ClaimIndex
	ByPersona map[string]*ClaimIndex
	ByTier    map[string]*ClaimIndex
	// FieldOf holds each key's field: of its active claims about the
	// owner, the one written last (see field).
	FieldOf map[string]*ClaimRecord
	// Categories counts the active claims per category (first key segment).
	Categories map[string]int

	// Upgrades is what a store from before an index or a field lacks
	// (bucketPending, bucketByApp, the claim metas' index fields), found by
	// the load; the unlock's commit writes it.
	Upgrades []Write
	// LoadNotes says what the load found and worked around (a snapshot
	// it could not read); the unlock logs them.
	LoadNotes []string
	// Snap is the claim metas snapshot and what was written since.
	// ignoreSnapshot makes the load read every meta (tests compare).
	Snap           snapState
	IgnoreSnapshot bool

	// Sets remembers the disclosed sets known to be stored (journal only).
	Sets *knownSets

	// Graph is the Service's graph, for reads on the view.
	Graph graph.Graph

	// Job is the journal's record of the write being applied (nil
	// outside the journal); see finishJob.
	Job *JobCtx
	// Lag says how far the graph has followed this view (see graphsync.go).
	Lag       *GraphLag
	GraphSync string // what the unlock did to the graph, for Check
	// ProjectionAt is the projectionVersion recorded in the store; the
	// first commit after the unlock (which rebuilt a graph of another)
	// records the current one.
	ProjectionAt int
}

// SetClaim publishes a new or replaced claim record (with mu held for
// writing).
func (st *State) SetClaim(r *ClaimRecord) {
	old := st.Claims[r.Meta.ID]
	if st.Job != nil {
		NoteOld(&st.Job.Claims, r.Meta.ID, old)
	}
	st.Claims[r.Meta.ID] = r
	r.cache = st.Cache
	r.Group = st.Applied + 1
	if c := r.Loaded(); c != nil {
		st.Cache.Admit(r, c)
	}
	if old != nil {
		st.unindexClaim(old)
	}
	st.indexClaim(r)
}

// SetMeta publishes r with edit applied to its meta — its status, personas
// or dispute, never its content: no new version (with mu held for
// writing). It returns the new record.
func (st *State) SetMeta(b *Batch, r *ClaimRecord, edit func(m *ClaimMeta)) *ClaimRecord {
	nr := r.withMeta(r.Meta)
	edit(&nr.Meta)
	st.SetClaim(nr)
	b.Put(BucketClaimMeta, nr.Meta.ID, nr.Meta)
	return nr
}

// indexSubject adds r to bySubject if it is active and about an entity.
func (st *State) indexSubject(r *ClaimRecord) {
	if r.Meta.Status != model.StatusActive || r.Meta.Subject == model.SubjectSelf {
		return
	}
	sub := r.Meta.Subject
	m := st.BySubject[sub]
	if m == nil {
		m = map[string]*ClaimRecord{}
		st.BySubject[sub] = m
	}
	m[r.Meta.ID] = r
}

// ClaimMeta is the mutable part of a claim (see [Meta]).
type ClaimMeta = Meta

type ClaimRecord struct {
	Meta  ClaimMeta
	cache *claimCache
	// Resident holds the versions in memory (see head and version) and
	// the journal group that published the record.
	Resident[model.Claim]

	// Served caches the JSON of the head as a recipient last received it,
	// and field the head as a PCP field. A record is replaced, never
	// changed, so the caches cannot go stale; the cache drops them with
	// the head (Evicted).
	Served atomic.Pointer[ServedClaim]
	Field  atomic.Pointer[pcp.Field]
}

// ServedClaim is a recipient view of a claim and its JSON encoding.
type ServedClaim struct {
	Personas string // the personas shown, joined; the cache key
	Claim    model.Claim
	Raw      json.RawMessage
}

// View returns a copy of version v (1-based) as it stands now: its status
// derived from the record, personas from the associations.
func (r *ClaimRecord) View(v int) model.Claim {
	c := *r.Version(v)
	c.Personas = append([]string{}, r.Meta.Personas...)
	switch {
	case r.Meta.Status != model.StatusActive:
		c.Status = r.Meta.Status
	case v < r.Meta.Head:
		c.Status = model.StatusSuperseded
	default:
		c.Status = model.StatusActive
	}
	if v == r.Meta.Head && r.Meta.DisputedAt != nil {
		c.Confirmation = model.Confirmation{Status: model.ConfirmationDisputed, By: "owner", At: r.Meta.DisputedAt}
	}
	return c
}

func (r *ClaimRecord) InPersona(id string) bool {
	for _, p := range r.Meta.Personas {
		if p == id {
			return true
		}
	}
	return false
}

// NewView returns an empty view.
func NewView() *State {
	st := &State{
		Claims:        make(map[string]*ClaimRecord),
		Pending:       make(map[string]uint64),
		PendingBy:     make(map[string]int),
		BlindBy:       make(map[string]int),
		Personas:      make(map[string]*model.Persona),
		Grants:        make(map[string]*model.Grant),
		GrantsBy:      make(map[string]map[string]*model.Grant),
		Consumers:     make(map[string]*model.Consumer),
		Tokens:        make(map[[32]byte]*model.ServiceToken),
		TokenByID:     make(map[string]*model.ServiceToken),
		Requests:      make(map[string]*model.ContextRequest),
		Trust:         make(map[string]*model.TrustedIssuer),
		DecTrust:      make(map[string]*model.DECIssuer),
		Quarantine:    quarantine.NewIndex(),
		BundlesSeen:   make(map[string]bool),
		DecPolicies:   make(map[string]*model.DECPolicy),
		Presentations: make(map[string]*model.Presentation),
		Summaries:     make(map[string]*model.Summary),
		BySubject:     make(map[string]map[string]*ClaimRecord),
		Entities:      make(map[string]*model.Entity),
		Settings:      defaultSettings(),
		ReceiptFloor:  1,
		Active:        newClaimIndex(),
		ByPersona:     make(map[string]*ClaimIndex),
		ByTier:        make(map[string]*ClaimIndex),
		Categories:    make(map[string]int),
		FieldOf:       make(map[string]*ClaimRecord),
		Sets:          newKnownSets(),
		Lag:           NewGraphLag(),
		Cache:         NewClaimCache(nil, 0),
	}
	st.Dur = NewDurability(nil)
	return st
}

// MarkDurable records that every group up to g is committed.
func (st *State) MarkDurable(g uint64) {
	st.Cache.SetDurable(g)
	st.Dur.MarkDurable(g)
}

// BreakView records that the view no longer matches the store (with mu
// held for writing): nothing may be served from it again, and every read
// waiting for a commit fails. The journal then locks the vault.
func (st *State) BreakView() {
	st.Broken = true
	st.MarkFailed()
}

// MarkFailed records that a commit failed: groups after the durable one
// never will be, and no read of the view may answer any more.
func (st *State) MarkFailed() { st.Dur.MarkFailed() }

// ReadLocked runs fn under st's read lock, released in a deferred call.
// A stored claim fn cannot read back (see unreadable) ends fn, and is
// returned as the error.
func (st *State) ReadLocked(fn func()) error {
	st.Mu.RLock()
	defer st.Mu.RUnlock()
	return Guarded(func() error { fn(); return nil })
}

// AwaitDurable waits until group g (a value of st.applied read under mu) is
// committed. The journal applies a group to the view before its fsync, so a
// read of the view may see a write that is not yet durable; a read that
// answers without a receipt of its own calls this before answering, so that
// it never discloses a write that a failed commit then loses. It fails if
// the commit of g failed, and once the view is broken (see breakView) even
// if g is durable: the view read may hold a failed job's half-made change.
func (st *State) AwaitDurable(op string, g uint64) error {
	if !st.Dur.Await(g) {
		return model.Internalf(op, "the view is broken (group %d)", g)
	}
	return nil
}

// LoadMetaJSON decodes the JSON stored under key in bucketMeta into v; ok
// is false, and v untouched, when there is none.
func LoadMetaJSON(tx Tx, key string, v any) (ok bool, err error) {
	raw, ok, err := tx.Get(BucketMeta, key)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("meta %s: %w", key, err)
	}
	return true, nil
}

func LoadEach[T any](tx Tx, bucket string, add func(*T)) error {
	return tx.ForEach(bucket, func(k string, v []byte) error {
		x := new(T)
		if err := json.Unmarshal(v, x); err != nil {
			return fmt.Errorf("%s %s: %w", bucket, k, err)
		}
		add(x)
		return nil
	})
}

func VersionKey(id string, v int) string { return fmt.Sprintf("%s@%08d", id, v) }

// FieldStats counts active claims, in all and per category (the first key
// segment).
func (st *State) FieldStats() (int, map[string]int) {
	return st.Active.Len(), maps.Clone(st.Categories)
}

// LoadPending reads which proposals are pending: from their index, or, in
// a store written before the index, from every proposal (the unlock's
// commit then writes the index; see upgrades).
func (st *State) LoadPending(tx Tx) error {
	if _, ok, err := tx.Get(BucketMeta, metaPendingIndex); err != nil {
		return err
	} else if ok {
		return tx.ForEach(BucketPending, func(id string, _ []byte) error {
			pr, err := LoadProposal(tx, id)
			if err != nil {
				return err
			}
			if pr == nil || pr.Status != model.StatusProposed {
				return fmt.Errorf("pending proposal %s: not pending in the store", id)
			}
			st.Pending[id] = pr.Revision
			st.CountPending(pr, 1)
			return nil
		})
	}
	st.Upgrades = append(st.Upgrades, Write{Bucket: BucketMeta, Key: metaPendingIndex, Value: []byte("true")})
	return LoadEach(tx, BucketProposals, func(p *model.Proposal) {
		if p.Status == model.StatusProposed {
			st.Pending[p.ID] = p.Revision
			st.CountPending(p, 1)
			st.Upgrades = append(st.Upgrades, Write{Bucket: BucketPending, Key: p.ID, Value: []byte("{}")})
		}
	})
}

// MergeJob adds a job's delta to the group's, and records the lineage it
// adds as pending until the graph has it.
func MergeJob(m *DeltaMerger, st *State, d *graph.Delta) {
	m.Merge(d)
	for _, e := range d.Add {
		if e.Predicate == graph.DerivedFrom {
			st.Lag.AddPending(e.Object, e.Subject)
		}
	}
}

// JobCtx records, for the write the journal is applying, each object's
// version before the write: at the end of the write the projection's delta
// and the invalidations are computed from before and after. Setters record
// the first version they replace; nil means the object is new.
type JobCtx struct {
	Claims    map[string]*ClaimRecord
	Summaries map[string]*model.Summary
	Entities  map[string]*model.Entity
	Personas  map[string]*model.Persona
	Grants    map[string]*model.Grant
}

// NewJobCtx returns an empty record; its maps are made on first use, as
// most jobs (receipted reads) change nothing.
func NewJobCtx() *JobCtx { return &JobCtx{} }

// Changed reports whether the job published any record.
func (j *JobCtx) Changed() bool {
	return j.Claims != nil || j.Summaries != nil || j.Entities != nil || j.Personas != nil || j.Grants != nil
}

func NoteOld[T any](m *map[string]*T, id string, old *T) {
	if *m == nil {
		*m = map[string]*T{}
	}
	if _, ok := (*m)[id]; !ok {
		(*m)[id] = old
	}
}

// Buckets of the records of access and of the rules' own records.
const (
	BucketTrust            = "trust"               // iss_… → TrustedIssuer
	BucketSummaries        = "summaries"           // sum_… → Summary
	BucketEntities         = "entities"            // ent_… → Entity
	BucketRequests         = "requests"            // req_… → ContextRequest
	BucketQuarantine       = quarantine.BucketHeld // qrn_… → QuarantineRecord (package quarantine keeps it)
	BucketBundlesSeen      = "bundles_seen"        // bnd_… → seenBundle
	BucketDECTrust         = "dec_trust"           // dis_<hash of issuer> → DECIssuer
	BucketDECPolicies      = "dec_policies"        // pol_<hash of id> → DECPolicy
	BucketDECPresentations = "dec_presentations"   // tok_… → Presentation
)
