package custodian

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

// The quarantine (docs/formats/bundle.md, docs/design.md §3): an imported bundle's
// records wait here, apart from every claim, until the owner adopts or
// rejects them. A quarantined record is not a claim: no read path, count,
// index or graph edge knows it, so it answers exactly like an absent one to
// everyone but the owner's quarantine view.

const (
	bucketQuarantine  = "quarantine"   // qrn_… → QuarantineRecord
	bucketBundlesSeen = "bundles_seen" // bnd_… → seenBundle
	// bucketHeldBodies holds each held record's body apart from its
	// description, so that the view (which holds the descriptions) stays
	// small whatever was imported: a body is read when it is adopted.
	bucketHeldBodies = "quarantine_bodies" // qrn_… → the record as imported
)

// Quarantine statuses.
const (
	StatusQuarantined = "quarantined"
	StatusBlocked     = "blocked" // an unknown mandatory restriction: no adopt until the owner removes it
)

// QuarantineRecord is one imported record held for the owner.
type QuarantineRecord struct {
	ID       string   `json:"id"`
	BundleID string   `json:"bundle_id"`
	Source   string   `json:"source"` // the exporting custodian
	Kind     string   `json:"kind"`   // claim | summary
	Record   string   `json:"record"` // its id at the source
	Key      string   `json:"key,omitempty"`
	Status   string   `json:"status"`
	Problems []string `json:"problems"`
	// Body is the record as imported (versions, personas). The view's
	// copy has none (it is in bucketHeldBodies) unless the record was
	// held before the bodies had a bucket of their own.
	Body       json.RawMessage `json:"body,omitempty"`
	ImportedAt time.Time       `json:"imported_at"`
	Revision   uint64          `json:"revision"`
}

type seenBundle struct {
	Source     string    `json:"source"`
	ImportedAt time.Time `json:"imported_at"`
}

// ImportReport is the answer of an import.
type ImportReport struct {
	BundleID   string             `json:"bundle_id"`
	Source     string             `json:"source"`
	Counts     map[string]int     `json:"counts"`
	LossReport []Loss             `json:"loss_report"` // the source's, then what the import dropped
	Records    []QuarantineRecord `json:"records"`     // without bodies
	Revision   uint64             `json:"revision"`
}

// rawRecords is a bundle's records before validation.
type rawRecords struct {
	Claims []struct {
		ID       string            `json:"id"`
		Personas []string          `json:"personas"`
		Versions []json.RawMessage `json:"versions"`
	} `json:"claims"`
	Personas   []json.RawMessage `json:"personas"`
	Entities   []json.RawMessage `json:"entities"`
	Summaries  []json.RawMessage `json:"summaries"`
	Identities []IdentityRef     `json:"identities"`
}

// ImportBundle opens a bundle made for this custodian by a pinned one, validates
// every record with the schema, refuses a bundle imported before, and holds
// every claim and summary in the quarantine (owner only). An unknown
// mandatory restriction makes a record blocked; an unknown advisory one is
// dropped and reported; a producer stays a foreign identity; a key that has
// an active claim here is reported as a conflict.
func (s *Service) ImportBundle(ctx context.Context, p Principal, raw []byte) (ImportReport, error) {
	const op = "import.bundle"
	if err := requireOwner(op, p); err != nil {
		return ImportReport{}, err
	}
	var rep ImportReport
	err := s.write(op, p, func(st *state, b *batch) error {
		m, payload, err := s.readManifest(st, op, raw)
		if err != nil {
			return err
		}
		if _, seen := st.bundlesSeen[m.BundleID]; seen {
			return fail(op, KindConflict, "this bundle was imported already ("+m.BundleID+")")
		}
		var recs rawRecords
		if err := strictJSON(payload, &recs); err != nil {
			return fail(op, KindInvalid, "the bundle's records are not in the bundle format 0.1")
		}
		foreign := map[string]string{} // source producer display → foreign identity
		for _, id := range recs.Identities {
			foreign[id.Display] = foreignID(m.Source.CustodianID, id.SourceID)
		}
		rep = ImportReport{BundleID: m.BundleID, Source: m.Source.CustodianID, LossReport: append([]Loss{}, m.LossReport...),
			Records: []QuarantineRecord{}, Counts: map[string]int{}}
		var held []*QuarantineRecord
		claimIDs := map[string]bool{}
		for i, c := range recs.Claims {
			q := &QuarantineRecord{Kind: "claim", Record: c.ID, Status: StatusQuarantined, Problems: []string{}}
			var versions []*Claim
			for j, v := range c.Versions {
				var cl Claim
				if err := s.decodeDoc(op, "claim", v, &cl); err != nil {
					if e, ok := err.(*Error); ok && e.Kind == KindSchema {
						for k := range e.Violations {
							e.Violations[k].Path = fmt.Sprintf("/claims/%d/versions/%d%s", i, j, e.Violations[k].Path)
						}
					}
					return err
				}
				versions = append(versions, &cl)
			}
			if len(versions) == 0 || !identity.ValidID(c.ID, "clm_") || claimIDs[c.ID] {
				return fail(op, KindInvalid, fmt.Sprintf("claim %d of the bundle has no versions, a malformed id or one another claim of it has", i))
			}
			claimIDs[c.ID] = true
			for j, v := range versions {
				if v.ID != c.ID || v.Version != j+1 {
					return fail(op, KindInvalid, fmt.Sprintf("claim %d of the bundle: version %d is not version %d of the claim", i, j+1, j+1))
				}
			}
			head := versions[len(versions)-1]
			q.Key = head.Key
			s.checkImported(st, q, versions, foreign, &rep.LossReport)
			body, err := json.Marshal(archivedClaim{Personas: c.Personas, Versions: versions})
			if err != nil {
				return wrap(op, KindInternal, err)
			}
			q.Body = body
			held = append(held, q)
		}
		for i, raw := range recs.Personas {
			var pe Persona
			if err := strictJSON(raw, &pe); err != nil || !validSegment(pe.ID) {
				return fail(op, KindInvalid, fmt.Sprintf("persona %d of the bundle is not a persona", i))
			}
			q := &QuarantineRecord{Kind: "persona", Record: pe.ID, Status: StatusQuarantined, Problems: []string{}, Body: raw}
			if st.personas[pe.ID] != nil {
				q.Problems = append(q.Problems, "a persona with this id exists here: adopting keeps the local one")
			}
			held = append(held, q)
		}
		for i, raw := range recs.Entities {
			var e Entity
			if err := strictJSON(raw, &e); err != nil || !identity.ValidID(e.ID, "ent_") || entityTypes[e.Type] == "" {
				return fail(op, KindInvalid, fmt.Sprintf("entity %d of the bundle is not an entity", i))
			}
			q := &QuarantineRecord{Kind: "entity", Record: e.ID, Status: StatusQuarantined, Problems: []string{}, Body: raw}
			if st.entities[e.ID] != nil {
				q.Problems = append(q.Problems, "this entity exists here already")
			}
			held = append(held, q)
		}
		for i, raw := range recs.Summaries {
			var sm Summary
			if err := strictJSON(raw, &sm); err != nil || sm.ID == "" {
				return fail(op, KindInvalid, fmt.Sprintf("summary %d of the bundle is not a summary", i))
			}
			q := &QuarantineRecord{Kind: "summary", Record: sm.ID, Status: StatusQuarantined, Problems: []string{}, Body: raw}
			for _, r := range sm.Restrictions {
				if !knownRestriction(r.Type) && r.Mandatory {
					q.Status = StatusBlocked
					q.Problems = append(q.Problems, "blocked: unknown mandatory restriction "+r.Type)
				}
			}
			held = append(held, q)
		}
		// Every id first: nothing may fail once the view changes.
		for _, q := range held {
			if q.ID, err = identity.NewID("qrn_"); err != nil {
				return wrap(op, KindInternal, err)
			}
		}
		rev := b.nextRevision()
		for _, q := range held {
			q.BundleID, q.Source, q.ImportedAt, q.Revision = m.BundleID, m.Source.CustodianID, b.now, rev
			held := st.hold(b, q)
			rep.Counts[q.Status]++
			rep.Records = append(rep.Records, *held)
		}
		st.bundlesSeen[m.BundleID] = true
		b.put(bucketBundlesSeen, m.BundleID, seenBundle{Source: m.Source.CustodianID, ImportedAt: b.now})
		rep.Revision = rev
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{m.BundleID, m.Source.CustodianID}, Revision: rev})
		return nil
	})
	return rep, err
}

// checkImported lists a claim's problems: unknown restrictions (mandatory:
// blocked; advisory: dropped and reported), foreign producers, and a key
// with an active claim here.
func (s *Service) checkImported(st *state, q *QuarantineRecord, versions []*Claim, foreign map[string]string, loss *[]Loss) {
	head := versions[len(versions)-1]
	kept := head.Restrictions[:0:0]
	for _, r := range head.Restrictions {
		switch {
		case knownRestriction(r.Type):
			kept = append(kept, r)
		case r.Mandatory:
			kept = append(kept, r)
			q.Status = StatusBlocked
			q.Problems = append(q.Problems, "blocked: unknown mandatory restriction "+r.Type)
		default:
			*loss = append(*loss, Loss{Record: head.ID, Dropped: "restriction " + r.Type, Reason: "unknown advisory restriction"})
		}
	}
	head.Restrictions = kept
	// An unknown mandatory restriction on an earlier version blocks too:
	// adoption keeps every version.
	for _, v := range versions[:len(versions)-1] {
		for _, r := range v.Restrictions {
			if !knownRestriction(r.Type) && r.Mandatory {
				q.Status = StatusBlocked
				q.Problems = append(q.Problems, fmt.Sprintf("blocked: unknown mandatory restriction %s (version %d)", r.Type, v.Version))
			}
		}
	}
	a := head.Producer.Authenticated
	if f, ok := foreign[a.Kind+":"+a.ID]; ok {
		q.Problems = append(q.Problems, "identity unmapped: "+f)
	}
	if r := st.fieldOf[head.Key]; r != nil && r.meta.Status == StatusActive {
		q.Problems = append(q.Problems, "conflicts with active claim "+r.meta.ID)
	}
}

// QuarantineQuery selects held records: by status, by a problem's text
// (a substring, such as "identity unmapped" or "conflicts"), a page at a
// time (Cursor is the NextCursor of the page before).
type QuarantineQuery struct {
	Status  string
	Problem string
	Limit   int // 1–1000; 0: 100
	Cursor  string
}

// QuarantinePage is a page of held records, oldest first, without bodies.
type QuarantinePage struct {
	Records    []QuarantineRecord `json:"records"`
	Total      int                `json:"total"` // records the query selects
	NextCursor string             `json:"next_cursor,omitempty"`
}

// ListQuarantine returns a page of the held records (owner only).
func (s *Service) ListQuarantine(ctx context.Context, p Principal, q QuarantineQuery) (QuarantinePage, error) {
	const op = "quarantine.list"
	if q.Status != "" && q.Status != StatusQuarantined && q.Status != StatusBlocked {
		return QuarantinePage{}, fail(op, KindInvalid, "status is quarantined or blocked")
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > 1000 || len(q.Problem) > 256 {
		return QuarantinePage{}, fail(op, KindInvalid, "limit is 1 to 1000; problem at most 256 bytes")
	}
	offset := 0
	if q.Cursor != "" {
		n, err := strconv.Atoi(q.Cursor)
		if err != nil || n < 0 {
			return QuarantinePage{}, fail(op, KindInvalid, "malformed cursor")
		}
		offset = n
	}
	return ownerRead(s, op, p, func(st *state) (QuarantinePage, error) {
		all := make([]QuarantineRecord, 0, len(st.quarantine))
		for _, r := range st.quarantine {
			if q.Status != "" && r.Status != q.Status {
				continue
			}
			if q.Problem != "" && !slices.ContainsFunc(r.Problems, func(pr string) bool { return strings.Contains(pr, q.Problem) }) {
				continue
			}
			c := *r
			c.Body = nil
			all = append(all, c)
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].Revision != all[j].Revision {
				return all[i].Revision < all[j].Revision
			}
			return all[i].ID < all[j].ID
		})
		out := QuarantinePage{Records: []QuarantineRecord{}, Total: len(all)}
		if offset < len(all) {
			end := min(len(all), offset+q.Limit)
			out.Records = all[offset:end]
			if end < len(all) {
				out.NextCursor = strconv.Itoa(end)
			}
		}
		return out, nil
	})
}

// RejectQuarantined drops held records (owner only): ids, or all of them.
func (s *Service) RejectQuarantined(ctx context.Context, p Principal, ids []string, all bool) (int, uint64, error) {
	const op = "quarantine.reject"
	if err := requireOwner(op, p); err != nil {
		return 0, 0, err
	}
	if !all && len(ids) == 0 {
		return 0, 0, fail(op, KindInvalid, "ids, or all, is required")
	}
	var n int
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		if all {
			ids = ids[:0]
			for id := range st.quarantine {
				ids = append(ids, id)
			}
			sort.Strings(ids)
		}
		for _, id := range ids {
			if st.quarantine[id] == nil {
				return notFound(op)
			}
		}
		for _, id := range ids {
			st.release(b, id)
		}
		n, rev = len(ids), b.nextRevision()
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: ids, Revision: rev})
		return nil
	})
	return n, rev, err
}

// AdoptInput is the body of an adopt: which held records (bulk form), the
// personas to put them in (default: those of the source that exist here),
// and foreign identities mapped to local ones ("foreign:cus_…/tutor" →
// "tutor", a consumer here, or "owner").
type AdoptInput struct {
	IDs        []string          `json:"ids,omitempty"`
	All        bool              `json:"all,omitempty"`
	Personas   []string          `json:"personas,omitempty"`
	Identities map[string]string `json:"identities,omitempty"`
}

// AdoptQuarantined makes held claims active claims here, in one revision,
// with every version and no grant at all (owner only). only, if not empty,
// is the one record of the single-record route; the body's ids and all
// select otherwise. A blocked record is refused (restriction_blocked), as
// is a claim whose id exists here already or whose subject does not, and a
// summary whose parents are neither here nor adopted with it; all passes
// over blocked records and such summaries (they stay held).
func (s *Service) AdoptQuarantined(ctx context.Context, p Principal, only string, raw []byte) (int, uint64, error) {
	const op = "quarantine.adopt"
	if err := requireOwner(op, p); err != nil {
		return 0, 0, err
	}
	var in AdoptInput
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeStrict(op, raw, &in); err != nil {
			return 0, 0, err
		}
	}
	if only != "" {
		if in.All || len(in.IDs) > 0 {
			return 0, 0, fail(op, KindInvalid, "ids and all belong to the bulk route, POST /phc/v1/quarantine/adopt")
		}
		in.IDs = []string{only}
	} else if !in.All && len(in.IDs) == 0 {
		return 0, 0, fail(op, KindInvalid, "ids, or all, is required")
	}
	copies, err := s.readHeld(op, p, in.IDs, in.All)
	if err != nil {
		return 0, 0, err
	}
	var n int
	var rev uint64
	err = s.write(op, p, func(st *state, b *batch) error {
		ids := in.IDs
		if in.All {
			// What was held when the bodies were read; a record held or
			// changed since stays for a later adopt.
			ids = ids[:0]
			for id, q := range st.quarantine {
				if c, ok := copies[id]; ok && c.rev == q.Revision && q.Status != StatusBlocked {
					ids = append(ids, id)
				}
			}
			sort.Strings(ids)
		}
		bodies := map[string]json.RawMessage{}
		for _, id := range ids {
			q := st.quarantine[id]
			if q == nil {
				return notFound(op)
			}
			c, ok := copies[id]
			if !ok || c.rev != q.Revision {
				return fail(op, KindConflict, "record "+id+" changed while it was being adopted: adopt it again")
			}
			bodies[id] = c.body
		}
		// Entities and personas first: the claims adopted with them may be
		// about those entities and in those personas.
		newEntities, newPersonas := map[string]*Entity{}, map[string]*Persona{}
		var dropped []*QuarantineRecord // adopted records that add nothing new
		var sums []*QuarantineRecord    // summaries, adopted after the claims
		rest := ids[:0:0]
		for _, id := range ids {
			q := st.quarantine[id]
			if q == nil {
				return notFound(op)
			}
			switch q.Kind {
			case "entity":
				var e Entity
				if err := json.Unmarshal(bodies[id], &e); err != nil {
					return wrap(op, KindInternal, err)
				}
				if st.entities[e.ID] == nil {
					newEntities[e.ID] = &e
				}
				dropped = append(dropped, q)
			case "persona":
				var pe Persona
				if err := json.Unmarshal(bodies[id], &pe); err != nil {
					return wrap(op, KindInternal, err)
				}
				if st.personas[pe.ID] == nil {
					newPersonas[pe.ID] = &pe
				}
				dropped = append(dropped, q)
			case "summary":
				sums = append(sums, q)
			default:
				rest = append(rest, id)
			}
		}
		ids = rest
		entityHere := func(n string) bool { return n == SubjectSelf || st.entities[n] != nil || newEntities[n] != nil }
		var personas []string
		if in.Personas != nil {
			var err error
			if personas, err = st.checkPersonas(op, in.Personas); err != nil {
				return err
			}
		}
		for foreignID, local := range in.Identities {
			if !strings.HasPrefix(foreignID, "foreign:cus_") && !strings.HasPrefix(foreignID, "foreign:"+archiveSource+"/") {
				return fail(op, KindInvalid, "identities maps foreign:cus_…/id (or foreign:archive/id) names")
			}
			if local != "owner" && st.consumers[local] == nil {
				return fail(op, KindInvalid, "identities maps to a consumer of this custodian, or owner")
			}
		}
		// Check every record before changing anything.
		type adoption struct {
			q        *QuarantineRecord
			versions []*Claim
			personas []string
		}
		var todo []adoption
		adopting := map[string]bool{}
		for _, id := range ids {
			q := st.quarantine[id]
			if q == nil {
				return notFound(op)
			}
			switch {
			case q.Status == StatusBlocked:
				return fail(op, KindRestrictionBlocked, "record "+id+" is blocked by an unknown mandatory restriction: remove it first")
			}
			body, err := heldClaim(op, id, bodies[id])
			if err != nil {
				return err
			}
			head := body.Versions[len(body.Versions)-1]
			if st.claims[head.ID] != nil || adopting[head.ID] {
				return fail(op, KindConflict, "record "+id+": claim "+head.ID+" exists here already, or is adopted twice")
			}
			adopting[head.ID] = true
			if !entityHere(head.Subject) {
				return fail(op, KindInvalid, "record "+id+" is about an entity that is neither here nor adopted with it")
			}
			if rel, ok := relationshipOf(head); head.Kind == KindRelationship && (!ok || !entityHere(rel.From) || !entityHere(rel.To)) {
				return fail(op, KindInvalid, "record "+id+" relates entities that are neither here nor adopted with it")
			}
			ps := personas
			if in.Personas == nil {
				ps = []string{}
				for _, pe := range body.Personas {
					if st.personas[pe] != nil || newPersonas[pe] != nil {
						ps = append(ps, pe)
					}
				}
			}
			todo = append(todo, adoption{q: q, versions: body.Versions, personas: ps})
		}
		// Summaries: each needs its parents here, or adopted with it
		// (claims of this adopt, or summaries before it). In an adopt of
		// all, one whose parents are not stays held.
		adoptedClaims := map[string][]*Claim{} // id → versions
		for _, a := range todo {
			adoptedClaims[a.versions[0].ID] = a.versions
		}
		sumByID := map[string]*Summary{}
		slices.SortFunc(sums, func(x, y *QuarantineRecord) int { return strings.Compare(x.Record, y.Record) })
		var summaries []*Summary
		var sumQs []*QuarantineRecord
		adoptedSums := map[string]int{}
		for progress := true; progress; {
			progress = false
			for i, q := range sums {
				if q == nil {
					continue
				}
				if q.Status == StatusBlocked {
					return fail(op, KindRestrictionBlocked, "record "+q.ID+" is blocked by an unknown mandatory restriction: remove it first")
				}
				var sm Summary
				if err := json.Unmarshal(bodies[q.ID], &sm); err != nil {
					return wrap(op, KindInternal, err)
				}
				if !identity.ValidID(sm.ID, "sum_") || sm.Version < 1 || len(sm.DerivedFrom) == 0 {
					return fail(op, KindInvalid, "record "+q.ID+" is not a well-formed summary")
				}
				if st.summaries[sm.ID] != nil || adoptedSums[sm.ID] > 0 {
					return fail(op, KindConflict, "record "+q.ID+": summary "+sm.ID+" exists here already, or is adopted twice")
				}
				// Its parents must come with it, in this adopt: a summary from
				// elsewhere never derives from what this custodian held
				// before. What it inherits is computed here, not taken as sent.
				ready := true
				restr := append([]Restriction{}, sm.Restrictions...)
				tier := tierRank[sm.Sensitivity]
				for _, ref := range sm.DerivedFrom {
					pid, v, ok := parseRef(ref)
					switch {
					case !ok || pid == sm.ID:
						ready = false
					case strings.HasPrefix(pid, "clm_"):
						vs := adoptedClaims[pid]
						if r := st.claims[pid]; vs == nil && r != nil && r.meta.Origin == q.BundleID {
							vs = r.versions() // adopted earlier from the same bundle
						}
						if len(vs) < v || v < 1 {
							ready = false
							break
						}
						restr = append(restr, vs[v-1].Restrictions...)
						tier = max(tier, tierRank[vs[v-1].Sensitivity])
					default:
						ps := sumByID[pid]
						if here := st.summaries[pid]; ps == nil && here != nil && here.Origin == q.BundleID {
							ps = here // adopted earlier from the same bundle
						}
						if ps == nil || ps.Version < v {
							ready = false
							break
						}
						restr = append(restr, ps.Restrictions...)
						tier = max(tier, tierRank[ps.Sensitivity])
					}
				}
				if !ready {
					continue
				}
				sm.Restrictions = dedupeRestrictions(restr)
				for name, rank := range tierRank {
					if rank == tier {
						sm.Sensitivity = name
					}
				}
				if sm.Status != SummaryCurrent && sm.Status != SummaryStale && sm.Status != SummaryIneligible {
					sm.Status = SummaryStale
				}
				sumByID[sm.ID] = &sm
				adoptedSums[sm.ID] = sm.Version
				summaries, sumQs = append(summaries, &sm), append(sumQs, q)
				sums[i], progress = nil, true
			}
		}
		if !in.All {
			for _, q := range sums {
				if q != nil {
					return fail(op, KindInvalid, "record "+q.ID+" is a summary whose parents are neither here nor adopted with it")
				}
			}
		}
		personaKeys := map[string]string{}
		for id := range newPersonas {
			key, err := identity.NewID("per_")
			if err != nil {
				return wrap(op, KindInternal, err)
			}
			personaKeys[id] = key
		}
		rev = b.nextRevision()
		refs := make([]string, 0, len(todo)+len(dropped)+len(summaries))
		for _, id := range slices.Sorted(maps.Keys(newEntities)) {
			e := newEntities[id]
			e.Revision = rev
			st.setEntity(e)
			b.put(bucketEntities, e.ID, e)
		}
		for _, id := range slices.Sorted(maps.Keys(newPersonas)) {
			pe := newPersonas[id]
			pe.Node, pe.Preferences, pe.Guardrails = personaKeys[id], orEmpty(pe.Preferences), orEmpty(pe.Guardrails)
			st.setPersona(pe)
			b.put(bucketPersonas, pe.Node, pe)
		}
		for _, q := range dropped {
			st.release(b, q.ID)
			refs = append(refs, q.ID)
		}
		for _, a := range todo {
			for i, v := range a.versions {
				v.Producer.Authenticated = localIdentity(a.q.Source, v.Producer.Authenticated, in.Identities)
				v.Revision, v.Personas, v.Status = rev, nil, StatusSuperseded
				if i == len(a.versions)-1 {
					v.Status = StatusActive
				}
				b.put(bucketClaims, versionKey(v.ID, v.Version), v)
			}
			head := a.versions[len(a.versions)-1]
			n := len(a.versions)
			r := st.newRecord(claimMeta{ID: head.ID, Head: n, Status: StatusActive, Personas: a.personas, Origin: a.q.BundleID}, head, a.versions[:n-1])
			st.setClaim(r)
			b.put(bucketClaimMeta, head.ID, r.meta)
			st.release(b, a.q.ID)
			refs = append(refs, a.q.ID, head.Ref())
		}
		for i, sm := range summaries {
			if sm.Producer != nil {
				local := localIdentity(sumQs[i].Source, *sm.Producer, in.Identities)
				sm.Producer = &local
			}
			sm.Revision, sm.Origin = rev, sumQs[i].BundleID
			st.setSummary(sm)
			b.put(bucketSummaries, sm.ID, sm)
			st.release(b, sumQs[i].ID)
			refs = append(refs, sumQs[i].ID, sm.Ref())
		}
		n = len(todo) + len(dropped) + len(summaries)
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: refs, Revision: rev})
		return nil
	})
	return n, rev, err
}

// localIdentity is the producer an adopted version keeps: the local
// identity the owner mapped its foreign one to, or the foreign one — the
// source custodian as issuer, the source's producer as id.
func localIdentity(source string, a Authenticated, mapped map[string]string) Authenticated {
	switch local := mapped[foreignID(source, a.ID)]; {
	case local == "owner":
		return ownerAuth
	case local != "":
		return Authenticated{Kind: "consumer", ID: local}
	}
	return Authenticated{Kind: "custodian", ID: a.Kind + ":" + a.ID, Issuer: source}
}

// UnblockInput is the body of an unblock: the unknown restriction types to
// remove from a blocked record.
type UnblockInput struct {
	Remove []string `json:"remove"`
}

// UnblockQuarantined removes, as its own receipted act, unknown mandatory
// restrictions from a held claim (owner only); with none left it is
// quarantined again and may be adopted. Only restrictions this custodian
// does not know can be removed here: a known one travels with the record.
func (s *Service) UnblockQuarantined(ctx context.Context, p Principal, id string, raw []byte) (QuarantineRecord, error) {
	const op = "quarantine.unblock"
	if err := requireOwner(op, p); err != nil {
		return QuarantineRecord{}, err
	}
	var in UnblockInput
	if err := decodeStrict(op, raw, &in); err != nil {
		return QuarantineRecord{}, err
	}
	if len(in.Remove) == 0 {
		return QuarantineRecord{}, fail(op, KindInvalid, "remove (the unknown restriction types to remove) is required")
	}
	copies, err := s.readHeld(op, p, []string{id}, false)
	if err != nil {
		return QuarantineRecord{}, err
	}
	var out QuarantineRecord
	err = s.write(op, p, func(st *state, b *batch) error {
		q := st.quarantine[id]
		if q == nil {
			return notFound(op)
		}
		if q.Kind != "claim" {
			return fail(op, KindInvalid, "only a held claim carries restrictions to remove here")
		}
		c, ok := copies[id]
		if !ok || c.rev != q.Revision {
			return fail(op, KindConflict, "record "+id+" changed meanwhile: try again")
		}
		body, err := heldClaim(op, id, c.body)
		if err != nil {
			return err
		}
		for _, t := range in.Remove {
			if knownRestriction(t) {
				return fail(op, KindInvalid, "restriction "+t+" is one this custodian knows: it travels with the record")
			}
			if !slices.ContainsFunc(body.Versions, func(v *Claim) bool {
				return slices.ContainsFunc(v.Restrictions, func(r Restriction) bool { return r.Type == t })
			}) {
				return fail(op, KindInvalid, "the record has no restriction "+t)
			}
		}
		for _, v := range body.Versions {
			v.Restrictions = slices.DeleteFunc(v.Restrictions, func(r Restriction) bool { return slices.Contains(in.Remove, r.Type) })
		}
		nb, err := json.Marshal(body)
		if err != nil {
			return wrap(op, KindInternal, err)
		}
		nq := *q
		nq.Body, nq.Revision = nb, b.nextRevision()
		nq.Problems = slices.DeleteFunc(slices.Clone(q.Problems), func(pr string) bool {
			for _, t := range in.Remove {
				if pr == "blocked: unknown mandatory restriction "+t || strings.HasPrefix(pr, "blocked: unknown mandatory restriction "+t+" (") {
					return true
				}
			}
			return false
		})
		nq.Status = StatusQuarantined
		for _, v := range body.Versions {
			for _, r := range v.Restrictions {
				if !knownRestriction(r.Type) && r.Mandatory {
					nq.Status = StatusBlocked
				}
			}
		}
		out = *st.hold(b, &nq)
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: append([]string{id}, in.Remove...), Revision: nq.Revision})
		return nil
	})
	return out, err
}

// dedupeRestrictions keeps the first restriction of each type.
func dedupeRestrictions(rs []Restriction) []Restriction {
	out := make([]Restriction, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Type] {
			seen[r.Type] = true
			out = append(out, r)
		}
	}
	return out
}

// strictJSON decodes one record of a signed bundle into v, refusing
// members v does not have. (A bundle is larger than the request limits of
// decodeStrict; each claim version is also checked against the schema.)
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// foreignID names a producer of another custodian (or of another vault's
// archive) until the owner maps it to a local identity.
func foreignID(source, id string) string { return "foreign:" + source + "/" + id }

// heldClaim decodes the body of held claim id: its personas at the source
// and every version.
func heldClaim(op, id string, raw json.RawMessage) (archivedClaim, error) {
	var body archivedClaim
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Versions) == 0 {
		return archivedClaim{}, wrap(op, KindInternal, fmt.Errorf("quarantine %s: %v", id, err))
	}
	return body, nil
}

// hold publishes held record q (with mu held for writing): its
// description in the view and the store, its body in the store only. It
// returns the view's copy.
func (st *state) hold(b *batch, q *QuarantineRecord) *QuarantineRecord {
	desc := *q
	desc.Body = nil
	st.quarantine[q.ID] = &desc
	b.put(bucketQuarantine, q.ID, &desc)
	b.put(bucketHeldBodies, q.ID, q.Body)
	return &desc
}

// release drops held record id, adopted or rejected (with mu held for
// writing).
func (st *state) release(b *batch, id string) {
	delete(st.quarantine, id)
	b.del(bucketQuarantine, id)
	b.del(bucketHeldBodies, id)
}

// heldCopy is a held record's body as read from the store, and the
// revision of the record it was read for.
type heldCopy struct {
	rev  uint64
	body json.RawMessage
}

// readHeld reads the bodies of held records ids, or of all of them, once
// what the view says of them is durable (so that the store holds them).
// A record the view does not hold is left out; the write that uses the
// copies checks that each record is still at the revision read.
func (s *Service) readHeld(op string, p Principal, ids []string, all bool) (map[string]heldCopy, error) {
	copies, err := ownerRead(s, op, p, func(st *state) (map[string]heldCopy, error) {
		out := map[string]heldCopy{}
		add := func(id string) {
			if q := st.quarantine[id]; q != nil {
				out[id] = heldCopy{rev: q.Revision, body: q.Body}
			}
		}
		if all {
			for id := range st.quarantine {
				add(id)
			}
		}
		for _, id := range ids {
			add(id)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	err = s.store.View(func(tx Tx) error {
		for id, c := range copies {
			if c.body != nil {
				continue // held before the bodies had a bucket
			}
			raw, ok, err := tx.Get(bucketHeldBodies, id)
			if err != nil {
				return err
			}
			if !ok {
				delete(copies, id) // released meanwhile
				continue
			}
			c.body = raw
			copies[id] = c
		}
		return nil
	})
	if err != nil {
		return nil, wrap(op, KindInternal, err)
	}
	return copies, nil
}
