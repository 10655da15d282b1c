package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/jsondiff"
	"github.com/phc-project/phc/quarantine"
	"github.com/phc-project/phc/quarantine/importer"
)

// The quarantine: an imported bundle's records (read and judged by package
// quarantine, which has the format) wait here, apart from every claim, until the owner adopts or
// rejects them. A quarantined record is not a claim: no read path, count,
// index or graph edge knows it, so it answers exactly like an absent one to
// everyone but the owner's quarantine view.

type seenBundle struct {
	Source     string    `json:"source"`
	ImportedAt time.Time `json:"imported_at"`
}

// ImportBundleInput is the input of an import of a migration bundle: the
// bundle as its source sealed it (the body of POST /phc/v1/import). It is
// bytes, not a typed envelope nor an [Input] for [Service.Decode], on
// purpose: a bundle is encrypted for this custodian and signed by its
// source, and nothing of it may be decoded before the codec has opened it
// and verified the signature with a pinned card; quarantine.Open then
// reads what was signed.
type ImportBundleInput struct {
	Bundle []byte
}

// ImportBundle opens a bundle made for this custodian by a pinned one, validates
// every record with the schema, refuses a bundle imported before, and holds
// every claim and summary in the quarantine (owner only). An unknown
// mandatory restriction makes a record blocked; an unknown advisory one is
// dropped and reported; a producer stays a foreign identity; a key that has
// an active claim here is reported as a conflict.
func (m *Migration) ImportBundle(ctx context.Context, p model.Principal, in ImportBundleInput) (model.ImportReport, error) {
	const op = "import.bundle"
	if err := p.RequireOwner(op); err != nil {
		return model.ImportReport{}, err
	}
	var rep model.ImportReport
	err := m.write(op, p, func(st *state, b *engine.Batch) error {
		man, payload, err := m.readManifest(st, op, in.Bundle)
		if err != nil {
			return err
		}
		if _, seen := st.BundlesSeen[man.BundleID]; seen {
			return model.Fail(op, model.KindConflict, "this bundle was imported already ("+man.BundleID+")")
		}
		rep = model.ImportReport{BundleID: man.BundleID, Source: man.Source.CustodianID, LossReport: append([]model.Loss{}, man.LossReport...),
			Records: []model.QuarantineRecord{}, Counts: map[string]int{}}
		rev, err := m.holdBundle(st, op, b, man, payload, &rep, -1)
		if err != nil {
			return err
		}
		st.BundlesSeen[man.BundleID] = true
		b.Put(engine.BucketBundlesSeen, man.BundleID, seenBundle{Source: man.Source.CustodianID, ImportedAt: b.Now})
		rep.Revision = rev
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{man.BundleID, man.Source.CustodianID}, Revision: rev})
		return nil
	})
	return rep, m.refusedImport(p, op, err)
}

// ImportPartsInput is an import of a bundle in parts: the zip archive of
// its parts (part-NNNN.jwe), as [Migration.ExportBundleParts] wrote it.
type ImportPartsInput struct {
	Parts io.ReaderAt
	Size  int64
}

// maxPartsReport bounds the held records an import in parts lists in its
// report (phc quarantine lists them all).
const maxPartsReport = 1000

// ImportBundleParts imports a bundle in parts (owner only): every part is
// opened and checked first — each signed by the same pinned custodian for
// this one, all of one bundle, each index once, none missing, the bundle
// not imported before — so that a bundle with a part missing, replayed or
// foreign is refused whole with nothing held; then each part is held in a
// write of its own, as [Migration.ImportBundle] holds a bundle. One part
// at a time is in memory.
func (m *Migration) ImportBundleParts(ctx context.Context, p model.Principal, in ImportPartsInput) (model.ImportReport, error) {
	const op = "import.bundle"
	if err := p.RequireOwner(op); err != nil {
		return model.ImportReport{}, err
	}
	lim := importer.DefaultLimits
	lim.MaxBytes, lim.MaxEntries, lim.MaxEntryBytes, lim.MaxRatio = 1<<40, quarantine.MaxParts, 256<<20, 2
	z, err := importer.OpenZip(&importer.Input{Name: "bundle", R: in.Parts, Size: in.Size, Limits: lim})
	if err != nil {
		return model.ImportReport{}, m.refusedImport(p, op, model.Fail(op, model.KindInvalid, err.Error()))
	}
	names := z.Files()
	man, err := m.checkParts(op, p, z, names)
	if err != nil {
		return model.ImportReport{}, m.refusedImport(p, op, err)
	}
	rep := model.ImportReport{BundleID: man.BundleID, Source: man.Source.CustodianID, LossReport: append([]model.Loss{}, man.LossReport...),
		Records: []model.QuarantineRecord{}, Counts: map[string]int{}}
	for i, name := range names {
		raw, err := readPart(z, name)
		if err != nil {
			return rep, err
		}
		err = m.write(op, p, func(st *state, b *engine.Batch) error {
			if _, seen := st.BundlesSeen[man.BundleID]; seen && i == 0 {
				return model.Fail(op, model.KindConflict, "this bundle was imported already ("+man.BundleID+")")
			}
			_, _, payload, err := m.openPart(st, op, raw)
			if err != nil {
				return err
			}
			rev, err := m.holdBundle(st, op, b, man, payload, &rep, maxPartsReport)
			if err != nil {
				return err
			}
			if i == 0 {
				st.BundlesSeen[man.BundleID] = true
				b.Put(engine.BucketBundlesSeen, man.BundleID, seenBundle{Source: man.Source.CustodianID, ImportedAt: b.Now})
			}
			rep.Revision = rev
			b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev,
				Records: []string{man.BundleID, man.Source.CustodianID, fmt.Sprintf("part:%d/%d", i+1, len(names))}})
			return nil
		})
		if err != nil {
			return rep, m.refusedImport(p, op, err)
		}
	}
	return rep, nil
}

// checkParts opens every part of z and checks that they make one whole
// bundle for this custodian, not imported before; it returns the bundle's
// manifest.
func (m *Migration) checkParts(op string, p model.Principal, z *importer.Zip, names []string) (model.BundleManifest, error) {
	if len(names) == 0 {
		return model.BundleManifest{}, model.Fail(op, model.KindInvalid, "the archive holds no parts")
	}
	var first model.BundleManifest
	var firstPart quarantine.Part
	seen := map[int]bool{}
	for i, name := range names {
		raw, err := readPart(z, name)
		if err != nil {
			return first, err
		}
		op2, err := ownerRead(m, op, p, func(st *state) (openedPart, error) {
			man, part, _, err := m.openPart(st, op, raw)
			if err == nil && st.BundlesSeen[man.BundleID] {
				err = model.Fail(op, model.KindConflict, "this bundle was imported already ("+man.BundleID+")")
			}
			return openedPart{man, part}, err
		})
		man, part := op2.man, op2.part
		if err != nil {
			return first, err
		}
		if part == nil {
			return first, model.Fail(op, model.KindInvalid, "part "+name+" is a whole bundle, not a part: import it alone")
		}
		if i == 0 {
			first, firstPart = man, *part
		} else if err := quarantine.SamePart(first, man, firstPart, *part); err != nil {
			return first, model.Fail(op, model.KindInvalid, err.Error())
		}
		if seen[part.Index] {
			return first, model.Fail(op, model.KindInvalid, fmt.Sprintf("part %d of the bundle is there twice", part.Index))
		}
		seen[part.Index] = true
	}
	if len(seen) != firstPart.Count {
		return first, model.Fail(op, model.KindInvalid, fmt.Sprintf("the bundle has %d parts; %d are here: import them all together", firstPart.Count, len(seen)))
	}
	return first, nil
}

// openedPart is a part's manifest and place, once opened.
type openedPart struct {
	man  model.BundleManifest
	part *quarantine.Part
}

// readPart reads part name of z.
func readPart(z *importer.Zip, name string) ([]byte, error) {
	f, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ImportMemoriesInput is one batch of an import from another memory
// system (package quarantine/importer reads the export): candidate claims
// in the binding, produced by the importing owner.
type ImportMemoriesInput struct {
	// ImportID names the import (imp_…); every batch of one import has
	// the same, so that the owner can tell them apart and adopt them
	// together.
	ImportID string
	// Source is the memory system's name (mem0, chatgpt, …).
	Source  string
	Records quarantine.Records
}

// ImportMemories holds a batch of memories imported from another system
// in the quarantine (owner only), each checked as a bundle's claims are:
// validated with the schema, its tier raised to this custodian's default
// for its key, a key that has an active claim here reported as a conflict.
// It returns how many it holds and the revision.
func (m *Migration) ImportMemories(ctx context.Context, p model.Principal, in ImportMemoriesInput) (int, uint64, error) {
	const op = "import.memories"
	if err := p.RequireOwner(op); err != nil {
		return 0, 0, err
	}
	if !identity.ValidID(in.ImportID, "imp_") || !model.ValidSegment(in.Source) {
		return 0, 0, model.Fail(op, model.KindInvalid, "an import names its id (imp_…) and its source")
	}
	if len(in.Records.Personas)+len(in.Records.Entities)+len(in.Records.Summaries) > 0 {
		return 0, 0, model.Fail(op, model.KindInvalid, "an import of memories holds claims only")
	}
	var n int
	var rev uint64
	err := m.write(op, p, func(st *state, b *engine.Batch) error {
		var loss []model.Loss
		held, err := m.heldRecords(st, op, in.Source, in.Records, &loss)
		if err != nil {
			return err
		}
		if rev, err = st.holdAll(op, b, held, in.ImportID, in.Source); err != nil {
			return err
		}
		n = len(held)
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev,
			Records: []string{in.ImportID, in.Source, fmt.Sprintf("held:%d", n)}})
		return nil
	})
	return n, rev, m.refusedImport(p, op, err)
}

// ImportExportInput is an import of another memory system's export:
// its source (from; "" detects it), its file name, the export itself and
// a key map.
type ImportExportInput struct {
	From   string
	Name   string
	Export io.ReaderAt
	Size   int64
	Map    importer.Map
}

// importBatch is how many memories one write of an import holds.
const importBatch = 500

// ImportExport reads another memory system's export with its source's
// reader (package quarantine/importer) and holds its memories in the
// quarantine, in batches under one import id (owner only): checked whole
// first, so that a hostile or malformed export is refused with nothing
// held. A refusal leaves a deny receipt.
func (m *Migration) ImportExport(ctx context.Context, p model.Principal, in ImportExportInput) (importer.Result, error) {
	const op = "import.memories"
	if err := p.RequireOwner(op); err != nil {
		return importer.Result{}, err
	}
	started := time.Now() // a duration for the answer, not the clock's time
	exp := &importer.Input{Name: in.Name, R: in.Export, Size: in.Size, Limits: importer.DefaultLimits}
	src, err := importer.Lookup(in.From, exp)
	if err != nil {
		return importer.Result{}, m.refusedImport(p, op, model.Fail(op, model.KindInvalid, err.Error()))
	}
	id, err := identity.NewID("imp_")
	if err != nil {
		return importer.Result{}, model.Wrap(op, model.KindInternal, err)
	}
	sum, err := importer.Run(ctx, src, exp, in.Map, m.clock.Now(), importBatch, func(recs quarantine.Records) error {
		_, _, err := m.ImportMemories(ctx, p, ImportMemoriesInput{ImportID: id, Source: src.Name(), Records: recs})
		return err
	}, nil)
	if errors.Is(err, importer.ErrRefused) {
		return importer.Result{}, m.refusedImport(p, op, model.Fail(op, model.KindInvalid, err.Error()))
	}
	if err != nil {
		return importer.Result{}, err
	}
	return importer.Result{ImportID: id, Summary: sum, TookMS: time.Since(started).Milliseconds()}, nil
}

// holdBundle holds the records of a bundle (or of one part of it) with
// manifest man, and adds them to rep: their counts, and the records
// themselves up to max in all (-1: every one). It returns the revision.
func (m *Migration) holdBundle(st *state, op string, b *engine.Batch, man model.BundleManifest, payload []byte, rep *model.ImportReport, max int) (uint64, error) {
	recs, err := quarantine.ParseRecords(payload)
	if err != nil {
		return 0, model.Fail(op, model.KindInvalid, err.Error())
	}
	held, err := m.heldRecords(st, op, man.Source.CustodianID, recs, &rep.LossReport)
	if err != nil {
		return 0, err
	}
	rev, err := st.holdAll(op, b, held, man.BundleID, man.Source.CustodianID)
	if err != nil {
		return 0, err
	}
	for _, q := range held {
		rep.Counts[q.Status]++
		if max < 0 || len(rep.Records) < max {
			desc := *q
			desc.Body = nil
			rep.Records = append(rep.Records, desc)
		}
	}
	return rev, nil
}

// refusedImport records, when err refuses an owner's import (a bundle or
// an archive that is not one, damaged, replayed or malformed, or wrong
// credentials), a deny receipt with its constraint — never any of the
// import's content — and returns err. A failure of this custodian's own
// (internal, locked) leaves none.
func (m *Migration) refusedImport(p model.Principal, op string, err error) error {
	e, ok := err.(*model.Error)
	if !ok || e.Kind == model.KindInternal || e.Kind == model.KindLocked || e.Kind == model.KindSessionRequired {
		return err
	}
	_ = m.write(op, p, func(st *state, b *engine.Batch) error {
		b.Receipt(model.DenyReceipt(p, op, e))
		return nil
	})
	return err
}

// heldRecords validates the records of an import from source and returns
// what the quarantine is to hold of them, each with its problems (without
// ids yet); what the import drops is added to loss.
func (m *Migration) heldRecords(st *state, op, source string, recs quarantine.Records, loss *[]model.Loss) ([]*model.QuarantineRecord, error) {
	foreign := quarantine.MapIdentities(source, recs.Identities)
	var held []*model.QuarantineRecord
	claimIDs := map[string]bool{}
	for i, c := range recs.Claims {
		q := &model.QuarantineRecord{Kind: "claim", Record: c.ID, Status: model.StatusQuarantined, Problems: []string{}}
		versions, err := m.importedVersions(op, i, c)
		if err != nil {
			return nil, err
		}
		if len(versions) == 0 || !identity.ValidID(c.ID, "clm_") || claimIDs[c.ID] {
			return nil, model.Fail(op, model.KindInvalid, fmt.Sprintf("claim %d of the bundle has no versions, a malformed id or one another claim of it has", i))
		}
		claimIDs[c.ID] = true
		for j, v := range versions {
			if v.ID != c.ID || v.Version != j+1 {
				return nil, model.Fail(op, model.KindInvalid, fmt.Sprintf("claim %d of the bundle: version %d is not version %d of the claim", i, j+1, j+1))
			}
		}
		q.Key = versions[len(versions)-1].Key
		m.checkImported(st, q, versions, foreign, loss)
		body, err := json.Marshal(archivedClaim{Personas: c.Personas, Versions: versions})
		if err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
		q.Body = body
		held = append(held, q)
	}
	for i, raw := range recs.Personas {
		var pe model.Persona
		if err := quarantine.Strict(raw, &pe); err != nil || !model.ValidSegment(pe.ID) {
			return nil, model.Fail(op, model.KindInvalid, fmt.Sprintf("persona %d of the bundle is not a persona", i))
		}
		q := &model.QuarantineRecord{Kind: "persona", Record: pe.ID, Status: model.StatusQuarantined, Problems: []string{}, Body: raw}
		if st.Personas[pe.ID] != nil {
			q.Problems = append(q.Problems, "a persona with this id exists here: adopting keeps the local one")
		}
		held = append(held, q)
	}
	for i, raw := range recs.Entities {
		var e model.Entity
		if err := quarantine.Strict(raw, &e); err != nil || !identity.ValidID(e.ID, "ent_") || model.EntityTypes[e.Type] == "" {
			return nil, model.Fail(op, model.KindInvalid, fmt.Sprintf("entity %d of the bundle is not an entity", i))
		}
		q := &model.QuarantineRecord{Kind: "entity", Record: e.ID, Status: model.StatusQuarantined, Problems: []string{}, Body: raw}
		if st.Entities[e.ID] != nil {
			q.Problems = append(q.Problems, "this entity exists here already")
		}
		held = append(held, q)
	}
	for i, raw := range recs.Summaries {
		var sm model.Summary
		if err := quarantine.Strict(raw, &sm); err != nil || sm.ID == "" {
			return nil, model.Fail(op, model.KindInvalid, fmt.Sprintf("summary %d of the bundle is not a summary", i))
		}
		held = append(held, heldSummary(sm, raw))
	}
	return held, nil
}

// heldSummary is the held record of summary sm, as raw holds it: blocked
// by an unknown mandatory restriction, or by one that should have kept it
// with its source.
func heldSummary(sm model.Summary, raw json.RawMessage) *model.QuarantineRecord {
	q := &model.QuarantineRecord{Kind: "summary", Record: sm.ID, Status: model.StatusQuarantined, Problems: []string{}, Body: raw,
		Sensitivity: sm.Sensitivity, Restrictions: restrictionTypes(sm.Restrictions)}
	problems := quarantine.Blocking(judged(sm.Restrictions), model.KnownRestriction)
	problems = append(problems, quarantine.NeverSent([]quarantine.Version{{Version: sm.Version, Restrictions: judged(sm.Restrictions)}}, staysWithSource)...)
	if len(problems) > 0 {
		q.Status = model.StatusBlocked
		q.Problems = append(q.Problems, problems...)
	}
	return q
}

// importedVersions validates each version of claim i of an import with the
// schema; a violation's path names it in the bundle's records.
func (m *Migration) importedVersions(op string, i int, c quarantine.Claim) ([]*model.Claim, error) {
	var versions []*model.Claim
	for j, v := range c.Versions {
		var cl model.Claim
		if err := model.DecodeDoc(m.schema, op, "claim", v, &cl); err != nil {
			if e, ok := err.(*model.Error); ok && e.Kind == model.KindSchema {
				for k := range e.Violations {
					e.Violations[k].Path = fmt.Sprintf("/claims/%d/versions/%d%s", i, j, e.Violations[k].Path)
				}
			}
			return nil, err
		}
		versions = append(versions, &cl)
	}
	return versions, nil
}

// judged is what the quarantine judges of restrictions rs.
func judged(rs []model.Restriction) []quarantine.Restriction {
	out := make([]quarantine.Restriction, len(rs))
	for i, r := range rs {
		out[i] = quarantine.Restriction{Type: r.Type, Mandatory: r.Mandatory}
	}
	return out
}

// checkImported lists a claim's problems and sets what it would be adopted
// with: every version carries the union of the restrictions of all of
// them (a later version never lowers what an earlier one carried), less
// the unknown advisory ones, which are dropped and reported; every
// version's tier is at least its key's default here. Its problems: unknown
// mandatory restrictions (blocked), restrictions that keep a record with
// its source (blocked: it should never have been sent), foreign producers,
// and a key with an active claim here.
func (m *Migration) checkImported(st *state, q *model.QuarantineRecord, versions []*model.Claim, foreign quarantine.Identities, loss *[]model.Loss) {
	head := versions[len(versions)-1]
	vs := judgedVersions(versions)
	verdict := quarantine.JudgeClaim(head.ID, vs, model.KnownRestriction)
	never := quarantine.NeverSent(vs, staysWithSource)
	sent := head.Sensitivity
	protectImported(versions, verdict.Drop, m.defaultTier)
	if head.Sensitivity != sent {
		q.Problems = append(q.Problems, "tier raised from "+sent+" to "+head.Sensitivity+", this custodian's default for the key")
	}
	*loss = append(*loss, verdict.Loss...)
	if verdict.Blocked || len(never) > 0 {
		q.Status = model.StatusBlocked
	}
	q.Problems = append(q.Problems, verdict.Problems...)
	q.Problems = append(q.Problems, never...)
	q.Sensitivity, q.Restrictions = head.Sensitivity, restrictionTypes(head.Restrictions)
	if head.Confirmation.Status == model.ConfirmationDisputed {
		q.Problems = append(q.Problems, "disputed at its source: it is adopted disputed")
	}
	a := head.Producer.Authenticated
	if pr := foreign.Problem(a.Kind + ":" + a.ID); pr != "" {
		q.Problems = append(q.Problems, pr)
	}
	if r := st.FieldOf[head.Key]; r != nil && r.Meta.Status == model.StatusActive {
		q.Problems = append(q.Problems, "conflicts with active claim "+r.Meta.ID)
	}
}

// judgedVersions is what the quarantine judges of a claim's versions.
func judgedVersions(versions []*model.Claim) []quarantine.Version {
	vs := make([]quarantine.Version, len(versions))
	for i, v := range versions {
		vs[i] = quarantine.Version{Version: v.Version, Restrictions: judged(v.Restrictions)}
	}
	return vs
}

// protectImported gives every version of an imported claim the union of
// the restrictions of all its versions, less the advisory ones of the
// types drop names, and a tier at least its key's default here: a bundle
// never lowers the protection this custodian gives a key, nor a later
// version what an earlier one carried.
func protectImported(versions []*model.Claim, drop map[string]bool, defaultTier func(string) string) {
	var union []model.Restriction
	for _, v := range versions {
		union = model.MergeRestrictions(union, v.Restrictions)
	}
	union = slices.DeleteFunc(union, func(r model.Restriction) bool { return !r.Mandatory && drop[r.Type] })
	for _, v := range versions {
		v.Restrictions = slices.Clone(union)
		v.Sensitivity = model.RaiseTier(v.Sensitivity, defaultTier(v.Key))
	}
}

// staysWithSource reports whether a restriction of type t keeps a record
// with the custodian that holds it (see mustStay).
func staysWithSource(t string) bool {
	return mustStay([]model.Restriction{{Type: t}}) != ""
}

// restrictionTypes lists the types of rs, each once.
func restrictionTypes(rs []model.Restriction) []string {
	out := []string{}
	for _, r := range rs {
		if !slices.Contains(out, r.Type) {
			out = append(out, r.Type)
		}
	}
	return out
}

// ListQuarantine returns a page of the held records (owner only): the
// view's index selects it, the store holds what it shows.
func (m *Migration) ListQuarantine(ctx context.Context, p model.Principal, q model.QuarantineQuery) (model.QuarantinePage, error) {
	const op = "quarantine.list"
	if err := q.Check(); err != nil {
		return model.QuarantinePage{}, model.Fail(op, model.KindInvalid, err.Error())
	}
	sel, err := ownerRead(m, op, p, func(st *state) (quarantine.Selection, error) {
		return st.Quarantine.Select(q), nil
	})
	if err != nil {
		return model.QuarantinePage{}, err
	}
	page := model.QuarantinePage{Records: make([]model.QuarantineRecord, 0, len(sel.IDs)), Total: sel.Total, NextCursor: sel.NextCursor}
	copies, err := m.readCopies(op, sel.IDs)
	if err != nil {
		return page, err
	}
	for _, id := range sel.IDs {
		// Released since, or changed so that the query no longer selects
		// it (unblocked, say): left out.
		if c, ok := copies[id]; ok && q.Selects(c.Held) {
			// A body that does not read shows no value: the owner still
			// sees the record, to reject it.
			if c.Held.Kind == "claim" {
				if body, err := heldClaim(op, id, c.Body); err == nil {
					c.Held.Value = body.Versions[len(body.Versions)-1].Value
				}
			}
			page.Records = append(page.Records, *c.Held)
		}
	}
	// What each held claim's key holds here now, for the owner to compare.
	_, err = ownerRead(m, op, p, func(st *state) (struct{}, error) {
		for i := range page.Records {
			q := &page.Records[i]
			if r := st.FieldOf[q.Key]; q.Kind == "claim" && r != nil && r.Meta.Status == model.StatusActive {
				here := r.Head().Value
				q.Here = &quarantine.Here{Claim: r.Meta.ID, Value: here, Diff: jsondiff.Values(here, q.Value)}
			}
		}
		return struct{}{}, nil
	})
	return page, err
}

// RejectQuarantined drops held records (owner only): ids, or all of them.
func (m *Migration) RejectQuarantined(ctx context.Context, p model.Principal, ids []string, all bool) (int, uint64, error) {
	const op = "quarantine.reject"
	if err := p.RequireOwner(op); err != nil {
		return 0, 0, err
	}
	if !all && len(ids) == 0 {
		return 0, 0, model.Fail(op, model.KindInvalid, "ids, or all, is required")
	}
	var n int
	var rev uint64
	err := m.write(op, p, func(st *state, b *engine.Batch) error {
		released, err := quarantine.Reject(st.Quarantine, b, ids, all)
		if err != nil {
			return model.NotFound(op)
		}
		n, rev = len(released), b.NextRevision()
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: released, Revision: rev})
		return nil
	})
	return n, rev, err
}

// AdoptQuarantined makes held claims active claims here, with every
// version and no grant at all (owner only): the records ids names in one
// revision, all of them (package quarantine's Adopt) a batch a revision.
// only, if not empty, is the one record of the single-record route; in's
// ids and all select otherwise. A blocked record is refused (restriction_blocked), as is a
// claim whose id exists here already or whose subject does not, and a
// summary whose parents are neither here nor adopted with it; all passes
// over blocked records and such summaries (they stay held).
func (m *Migration) AdoptQuarantined(ctx context.Context, p model.Principal, only string, in model.AdoptInput) (model.Adopted, error) {
	const op = "quarantine.adopt"
	if err := p.RequireOwner(op); err != nil {
		return model.Adopted{}, err
	}
	if err := model.AcceptInput(m.schema, op, &in); err != nil {
		return model.Adopted{}, err
	}
	if only != "" {
		if in.All || len(in.IDs) > 0 {
			return model.Adopted{}, model.Fail(op, model.KindInvalid, "ids and all belong to the bulk route, POST /phc/v1/quarantine/adopt")
		}
		in.IDs = []string{only}
	} else if !in.All && len(in.IDs) == 0 {
		return model.Adopted{}, model.Fail(op, model.KindInvalid, "ids, or all, is required")
	}
	out := model.Adopted{ReadBy: map[string]int{}}
	err := quarantine.Adopt(adoptVault{m, op, p, in}, in.IDs, in.All, adoptBatch, func(_ []string, copies map[string]quarantine.Copy) error {
		return m.adoptChunk(op, p, in, copies, &out)
	})
	return out, err
}

// adoptBatch is how many held records one write of an adopt of all takes:
// the bodies it reads and the claims it writes stay bounded, whatever the
// quarantine holds.
const adoptBatch = 2000

// adoptVault is the vault as an adopt of the quarantine's uses it.
type adoptVault struct {
	m  *Migration
	op string
	p  model.Principal
	in model.AdoptInput
}

// Index runs fn on the held records' index, owner only, once the adopt's
// personas and mappings are checked: an adopt of all of an empty
// quarantine refuses them as any adopt does.
func (v adoptVault) Index(fn func(x *quarantine.Index) error) error {
	_, err := ownerRead(v.m, v.op, v.p, func(st *state) (struct{}, error) {
		if _, err := st.checkAdoptionInput(v.op, v.in); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, fn(st.Quarantine)
	})
	return err
}

func (v adoptVault) View(fn func(r quarantine.Reader) error) error {
	if err := v.m.store.View(func(tx engine.Tx) error { return fn(tx) }); err != nil {
		return model.Wrap(v.op, model.KindInternal, err)
	}
	return nil
}

// adoptChunk adopts, in one revision, the held records of copies as read
// (with in.All, those of them still held as read and not blocked, passing
// over summaries whose parents are neither here nor adopted with them),
// and adds to out what it adopted, its revision and who reads the adopted
// claims now.
func (m *Migration) adoptChunk(op string, p model.Principal, in model.AdoptInput, copies map[string]quarantine.Copy, out *model.Adopted) error {
	return m.write(op, p, func(st *state, b *engine.Batch) error {
		ids, err := st.adoptedIDs(op, in, copies)
		if err != nil {
			return err
		}
		a, err := st.planAdoption(op, in, ids, copies)
		if err != nil {
			return err
		}
		n, rev, err := st.adopt(op, b, a, in.Identities)
		if err != nil {
			return err
		}
		out.Adopted, out.Revision = out.Adopted+n, rev
		claims := make([]*engine.ClaimRecord, 0, len(a.claims))
		for _, c := range a.claims {
			claims = append(claims, st.Claims[c.versions[0].ID])
		}
		for app, k := range st.core.Readers(claims, b.Now) {
			out.ReadBy[app] += k
		}
		return nil
	})
}

// adoptedIDs returns the records an adopt takes, each of copies still
// held as it was read: every record in.IDs names, or with in.All every
// record of copies still held as it was read and not blocked (a record
// held or changed since stays for a later adopt).
func (st *state) adoptedIDs(op string, in model.AdoptInput, copies map[string]quarantine.Copy) ([]string, error) {
	ids := in.IDs
	if in.All {
		ids = ids[:0]
		for id, c := range copies {
			if e, ok := st.Quarantine.Get(id); ok && c.Revision == e.Revision && !e.Blocked {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
	}
	for _, id := range ids {
		e, ok := st.Quarantine.Get(id)
		if !ok {
			return nil, model.NotFound(op)
		}
		if c, ok := copies[id]; !ok || c.Revision != e.Revision {
			return nil, model.Fail(op, model.KindConflict, "record "+id+" changed while it was being adopted: adopt it again")
		}
	}
	return ids, nil
}

// adoption is what an adopt changes, every record checked: entities and
// personas that are new here, held records that add nothing new, claims
// with their versions and personas, and summaries.
type adoption struct {
	newEntities map[string]*model.Entity
	newPersonas map[string]*model.Persona
	dropped     []*model.QuarantineRecord
	claims      []adoptedClaim
	summaries   []*model.Summary
	sumQs       []*model.QuarantineRecord // the held record of each summary
}

type adoptedClaim struct {
	q        *model.QuarantineRecord
	versions []*model.Claim
	personas []string
	status   string // the claim's: active, or retracted (as an archive held it)
}

// planAdoption checks every record of an adopt before anything changes.
// Entities and personas come first: the claims adopted with them may be
// about those entities and in those personas; summaries last, after the
// claims they derive from.
func (st *state) planAdoption(op string, in model.AdoptInput, ids []string, copies map[string]quarantine.Copy) (*adoption, error) {
	a := &adoption{newEntities: map[string]*model.Entity{}, newPersonas: map[string]*model.Persona{}}
	var claims, sums []*model.QuarantineRecord
	bodies := make(map[string]json.RawMessage, len(ids))
	for _, id := range ids {
		q := copies[id].Held
		bodies[id] = copies[id].Body
		switch q.Kind {
		case "entity":
			var e model.Entity
			if err := json.Unmarshal(bodies[id], &e); err != nil {
				return nil, model.Wrap(op, model.KindInternal, err)
			}
			if st.Entities[e.ID] == nil {
				a.newEntities[e.ID] = &e
			}
			a.dropped = append(a.dropped, q)
		case "persona":
			var pe model.Persona
			if err := json.Unmarshal(bodies[id], &pe); err != nil {
				return nil, model.Wrap(op, model.KindInternal, err)
			}
			if st.Personas[pe.ID] == nil {
				a.newPersonas[pe.ID] = &pe
			}
			a.dropped = append(a.dropped, q)
		case "summary":
			sums = append(sums, q)
		default:
			claims = append(claims, q)
		}
	}
	personas, err := st.checkAdoptionInput(op, in)
	if err != nil {
		return nil, err
	}
	if err := st.planClaims(op, personas, a, claims, bodies); err != nil {
		return nil, err
	}
	if err := st.planSummaries(op, in.All, a, sums, bodies); err != nil {
		return nil, err
	}
	return a, nil
}

// checkAdoptionInput checks the personas and identity mappings of an
// adopt; it returns the personas (nil: those of the source that exist
// here).
func (st *state) checkAdoptionInput(op string, in model.AdoptInput) ([]string, error) {
	var personas []string
	if in.Personas != nil {
		var err error
		if personas, err = st.checkPersonas(op, in.Personas); err != nil {
			return nil, err
		}
	}
	for foreignID, local := range in.Identities {
		if !strings.HasPrefix(foreignID, "foreign:cus_") && !strings.HasPrefix(foreignID, "foreign:"+archiveSource+"/") {
			return nil, model.Fail(op, model.KindInvalid, "identities maps foreign:cus_…/id (or foreign:archive/id) names")
		}
		if local != "owner" && st.Consumers[local] == nil {
			return nil, model.Fail(op, model.KindInvalid, "identities maps to a consumer of this custodian, or owner")
		}
	}
	return personas, nil
}

// planClaims checks each held claim of an adopt: not blocked, its id not
// here nor adopted twice, its subject (and a relationship's ends) here or
// adopted with it. Each goes into personas, or with nil into those of the
// source that exist here.
func (st *state) planClaims(op string, personas []string, a *adoption, held []*model.QuarantineRecord, bodies map[string]json.RawMessage) error {
	entityHere := func(n string) bool { return n == model.SubjectSelf || st.Entities[n] != nil || a.newEntities[n] != nil }
	adopting := map[string]bool{}
	for _, q := range held {
		id := q.ID
		if q.Status == model.StatusBlocked {
			return blockedFail(op, q)
		}
		body, err := heldClaim(op, id, bodies[id])
		if err != nil {
			return err
		}
		// Held before these rules, a record may not carry them yet: the
		// protection it is adopted with never depends on when it came.
		protectImported(body.Versions, nil, st.defaultTier)
		if never := quarantine.NeverSent(judgedVersions(body.Versions), staysWithSource); len(never) > 0 {
			return model.Fail(op, model.KindRestrictionBlocked, "record "+id+" should never have left its source: reject it")
		}
		head := body.Versions[len(body.Versions)-1]
		if st.Claims[head.ID] != nil || adopting[head.ID] {
			return model.Fail(op, model.KindConflict, "record "+id+": claim "+head.ID+" exists here already, or is adopted twice")
		}
		adopting[head.ID] = true
		if !entityHere(head.Subject) {
			return model.Fail(op, model.KindInvalid, "record "+id+" is about an entity that is neither here nor adopted with it")
		}
		if rel, ok := model.RelationshipOf(head); head.Kind == model.KindRelationship && (!ok || !entityHere(rel.From) || !entityHere(rel.To)) {
			return model.Fail(op, model.KindInvalid, "record "+id+" relates entities that are neither here nor adopted with it")
		}
		ps := personas
		if personas == nil {
			ps = []string{}
			for _, pe := range body.Personas {
				if st.Personas[pe] != nil || a.newPersonas[pe] != nil {
					ps = append(ps, pe)
				}
			}
		}
		status := model.StatusActive
		if body.Status == model.StatusRetracted {
			status = body.Status
		}
		a.claims = append(a.claims, adoptedClaim{q: q, versions: body.Versions, personas: ps, status: status})
	}
	return nil
}

// planSummaries checks the held summaries of an adopt: each needs its
// parents here, or adopted with it (claims of this adopt, or summaries
// before it). In an adopt of all, one whose parents are not stays held.
func (st *state) planSummaries(op string, all bool, a *adoption, sums []*model.QuarantineRecord, bodies map[string]json.RawMessage) error {
	adoptedClaims := map[string][]*model.Claim{} // id → versions
	for _, c := range a.claims {
		adoptedClaims[c.versions[0].ID] = c.versions
	}
	sumByID := map[string]*model.Summary{}
	slices.SortFunc(sums, func(x, y *model.QuarantineRecord) int { return strings.Compare(x.Record, y.Record) })
	adoptedSums := map[string]int{}
	for progress := true; progress; {
		progress = false
		for i, q := range sums {
			if q == nil {
				continue
			}
			if q.Status == model.StatusBlocked {
				return blockedFail(op, q)
			}
			var sm model.Summary
			if err := json.Unmarshal(bodies[q.ID], &sm); err != nil {
				return model.Wrap(op, model.KindInternal, err)
			}
			if !identity.ValidID(sm.ID, "sum_") || sm.Version < 1 || len(sm.DerivedFrom) == 0 {
				return model.Fail(op, model.KindInvalid, "record "+q.ID+" is not a well-formed summary")
			}
			if st.Summaries[sm.ID] != nil || adoptedSums[sm.ID] > 0 {
				return model.Fail(op, model.KindConflict, "record "+q.ID+": summary "+sm.ID+" exists here already, or is adopted twice")
			}
			if !st.inheritAdopted(&sm, q.BundleID, adoptedClaims, sumByID) {
				continue
			}
			if mustStay(sm.Restrictions) != "" {
				return model.Fail(op, model.KindRestrictionBlocked, "record "+q.ID+" should never have left its source: reject it")
			}
			sumByID[sm.ID] = &sm
			adoptedSums[sm.ID] = sm.Version
			a.summaries, a.sumQs = append(a.summaries, &sm), append(a.sumQs, q)
			sums[i], progress = nil, true
		}
	}
	if !all {
		for _, q := range sums {
			if q != nil {
				return model.Fail(op, model.KindInvalid, "record "+q.ID+" is a summary whose parents are neither here nor adopted with it")
			}
		}
	}
	return nil
}

// blockedFail is the refusal to adopt blocked record q, saying what
// settles it: removing an unknown mandatory restriction, or, for a record
// that should never have been sent, rejecting it.
func blockedFail(op string, q *model.QuarantineRecord) error {
	for _, pr := range q.Problems {
		if strings.Contains(pr, "should never have left its source") {
			return model.Fail(op, model.KindRestrictionBlocked, "record "+q.ID+" should never have left its source: reject it")
		}
	}
	return model.Fail(op, model.KindRestrictionBlocked, "record "+q.ID+" is blocked by an unknown mandatory restriction: remove it first")
}

// inheritAdopted reports whether every parent of summary sm, held from
// bundle, comes with it in this adopt (or came earlier from the same
// bundle), and if so sets what sm inherits from them: a summary from
// elsewhere never derives from what this custodian held before, and what
// it inherits is computed here, not taken as sent.
func (st *state) inheritAdopted(sm *model.Summary, bundle string, adoptedClaims map[string][]*model.Claim, sumByID map[string]*model.Summary) bool {
	restr := append([]model.Restriction{}, sm.Restrictions...)
	tier := model.TierRank[sm.Sensitivity]
	for _, ref := range sm.DerivedFrom {
		pid, v, ok := model.ParseRef(ref)
		switch {
		case !ok || pid == sm.ID:
			return false
		case strings.HasPrefix(pid, "clm_"):
			vs := adoptedClaims[pid]
			if r := st.Claims[pid]; vs == nil && r != nil && bundle != "" && r.Meta.Origin == bundle {
				vs = r.Versions() // adopted earlier from the same bundle
			}
			if len(vs) < v || v < 1 {
				return false
			}
			restr = append(restr, vs[v-1].Restrictions...)
			tier = max(tier, model.TierRank[vs[v-1].Sensitivity])
		default:
			ps := sumByID[pid]
			if here := st.Summaries[pid]; ps == nil && here != nil && bundle != "" && here.Origin == bundle {
				ps = here // adopted earlier from the same bundle
			}
			if ps == nil || ps.Version < v {
				return false
			}
			restr = append(restr, ps.Restrictions...)
			tier = max(tier, model.TierRank[ps.Sensitivity])
		}
	}
	sm.Restrictions = dedupeRestrictions(restr)
	for name, rank := range model.TierRank {
		if rank == tier {
			sm.Sensitivity = name
		}
	}
	if sm.Status != model.SummaryCurrent && sm.Status != model.SummaryStale && sm.Status != model.SummaryIneligible {
		sm.Status = model.SummaryStale
	}
	return true
}

// adopt applies adoption a in one revision (with mu held for writing),
// producers mapped as identities says, and returns the number of records
// adopted and the revision.
func (st *state) adopt(op string, b *engine.Batch, a *adoption, identities map[string]string) (int, uint64, error) {
	personaKeys := map[string]string{}
	for id := range a.newPersonas {
		key, err := identity.NewID("per_")
		if err != nil {
			return 0, 0, model.Wrap(op, model.KindInternal, err)
		}
		personaKeys[id] = key
	}
	rev := b.NextRevision()
	refs := make([]string, 0, len(a.claims)+len(a.dropped)+len(a.summaries))
	for _, id := range slices.Sorted(maps.Keys(a.newEntities)) {
		e := a.newEntities[id]
		e.Revision = rev
		st.SetEntity(e)
		b.Put(engine.BucketEntities, e.ID, e)
	}
	for _, id := range slices.Sorted(maps.Keys(a.newPersonas)) {
		pe := a.newPersonas[id]
		pe.Node, pe.Preferences, pe.Guardrails = personaKeys[id], model.OrEmpty(pe.Preferences), model.OrEmpty(pe.Guardrails)
		st.SetPersona(pe)
		b.Put(engine.BucketPersonas, pe.Node, pe)
	}
	for _, q := range a.dropped {
		quarantine.Drop(st.Quarantine, b, q.ID)
		refs = append(refs, q.ID)
	}
	for _, c := range a.claims {
		var disputedAt *time.Time
		if h := c.versions[len(c.versions)-1]; h.Confirmation.Status == model.ConfirmationDisputed {
			// Disputed at its source, it is disputed here. The dispute is
			// the meta's, as for any claim here; what the source's owner
			// had confirmed before is not known.
			at := b.Now
			if h.Confirmation.At != nil {
				at = h.Confirmation.At.UTC()
			}
			disputedAt = &at
			h.Confirmation = model.Confirmation{Status: model.ConfirmationUnconfirmed}
		}
		for i, v := range c.versions {
			if !importedMemory(c.q) {
				v.Producer.Authenticated = localIdentity(c.q.Source, v.Producer.Authenticated, identities)
				v.WrittenBy = localWriter(c.q.Source, v.WrittenBy, identities)
			} else if v.WrittenBy == "" {
				v.WrittenBy = model.WrittenByUser // held before imports said so: the owner imported it
			}
			v.Revision, v.Personas, v.Status = rev, nil, model.StatusSuperseded
			if i == len(c.versions)-1 {
				v.Status = model.StatusActive
			}
			b.Put(engine.BucketClaims, engine.VersionKey(v.ID, v.Version), v)
		}
		head := c.versions[len(c.versions)-1]
		n := len(c.versions)
		meta := engine.ClaimMeta{ID: head.ID, Head: n, Status: c.status, Personas: c.personas, Origin: c.q.BundleID, DisputedAt: disputedAt}
		r := st.NewRecord(meta, head, c.versions[:n-1])
		st.SetClaim(r)
		b.Put(engine.BucketClaimMeta, head.ID, r.Meta)
		quarantine.Drop(st.Quarantine, b, c.q.ID)
		refs = append(refs, c.q.ID, head.Ref())
	}
	for i, sm := range a.summaries {
		if sm.Producer != nil {
			local := localIdentity(a.sumQs[i].Source, *sm.Producer, identities)
			sm.Producer = &local
		}
		sm.Revision, sm.Origin = rev, a.sumQs[i].BundleID
		st.SetSummary(sm)
		b.Put(engine.BucketSummaries, sm.ID, sm)
		quarantine.Drop(st.Quarantine, b, a.sumQs[i].ID)
		refs = append(refs, a.sumQs[i].ID, sm.Ref())
	}
	b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: refs, Revision: rev})
	return len(a.claims) + len(a.dropped) + len(a.summaries), rev, nil
}

// importedMemory reports whether q was imported from another memory
// system by this vault's owner (an import's id is imp_…): its producer is
// the owner here already, and stays so.
func importedMemory(q *model.QuarantineRecord) bool { return strings.HasPrefix(q.BundleID, "imp_") }

// localIdentity is the producer an adopted version keeps: the local
// identity the owner mapped its foreign one to, or the foreign one — the
// source custodian as issuer, the source's producer as id.
func localIdentity(source string, a model.Authenticated, mapped map[string]string) model.Authenticated {
	switch local := mapped[quarantine.ForeignID(source, a.ID)]; {
	case local == "owner":
		return model.OwnerAuth
	case local != "":
		return model.Authenticated{Kind: "consumer", ID: local}
	}
	return model.Authenticated{Kind: "custodian", ID: a.Kind + ":" + a.ID, Issuer: source}
}

// localWriter is the written_by an adopted version keeps, mapped as its
// producer is: "user" (the source's owner) or a consumer of the source
// becomes the local identity the owner mapped it to ("user" for owner, or
// the consumer's name), or stays foreign (foreign:SOURCE/ID) — never the
// owner here by default.
func localWriter(source, writtenBy string, mapped map[string]string) string {
	id := writtenBy
	if id == model.WrittenByUser {
		id = "owner"
	}
	if id == "" {
		return ""
	}
	switch local := mapped[quarantine.ForeignID(source, id)]; {
	case local == "owner":
		return model.WrittenByUser
	case local != "":
		return local
	}
	return quarantine.ForeignID(source, id)
}

// UnblockQuarantined removes, as its own receipted act, unknown mandatory
// restrictions from a held claim (owner only); with none left it is
// quarantined again and may be adopted. Only restrictions this custodian
// does not know can be removed here: a known one travels with the record.
func (m *Migration) UnblockQuarantined(ctx context.Context, p model.Principal, id string, in model.UnblockInput) (model.QuarantineRecord, error) {
	const op = "quarantine.unblock"
	if err := p.RequireOwner(op); err != nil {
		return model.QuarantineRecord{}, err
	}
	if err := model.AcceptInput(m.schema, op, &in); err != nil {
		return model.QuarantineRecord{}, err
	}
	if len(in.Remove) == 0 {
		return model.QuarantineRecord{}, model.Fail(op, model.KindInvalid, "remove (the unknown restriction types to remove) is required")
	}
	copies, err := m.readHeld(op, p, id)
	if err != nil {
		return model.QuarantineRecord{}, err
	}
	var out model.QuarantineRecord
	err = m.write(op, p, func(st *state, b *engine.Batch) error {
		e, held := st.Quarantine.Get(id)
		if !held {
			return model.NotFound(op)
		}
		if e.Kind != "claim" {
			return model.Fail(op, model.KindInvalid, "only a held claim carries restrictions to remove here")
		}
		c, ok := copies[id]
		if !ok || c.Revision != e.Revision {
			return model.Fail(op, model.KindConflict, "record "+id+" changed meanwhile: try again")
		}
		q := c.Held
		body, err := heldClaim(op, id, c.Body)
		if err != nil {
			return err
		}
		for _, t := range in.Remove {
			if model.KnownRestriction(t) {
				return model.Fail(op, model.KindInvalid, "restriction "+t+" is one this custodian knows: it travels with the record")
			}
			if !slices.ContainsFunc(body.Versions, func(v *model.Claim) bool {
				return slices.ContainsFunc(v.Restrictions, func(r model.Restriction) bool { return r.Type == t })
			}) {
				return model.Fail(op, model.KindInvalid, "the record has no restriction "+t)
			}
		}
		for _, v := range body.Versions {
			v.Restrictions = slices.DeleteFunc(v.Restrictions, func(r model.Restriction) bool { return slices.Contains(in.Remove, r.Type) })
		}
		nb, err := json.Marshal(body)
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		nq := *q
		nq.Body, nq.Revision = nb, b.NextRevision()
		nq.Problems = quarantine.Unblocked(q.Problems, in.Remove)
		nq.Status = model.StatusQuarantined
		for _, v := range body.Versions {
			if len(quarantine.Blocking(judged(v.Restrictions), model.KnownRestriction)) > 0 {
				nq.Status = model.StatusBlocked
			}
		}
		if len(quarantine.NeverSent(judgedVersions(body.Versions), staysWithSource)) > 0 {
			nq.Status = model.StatusBlocked
		}
		nq.Restrictions = restrictionTypes(body.Versions[len(body.Versions)-1].Restrictions)
		out = *quarantine.Put(st.Quarantine, b, &nq)
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: append([]string{id}, in.Remove...), Revision: nq.Revision})
		return nil
	})
	return out, err
}

// dedupeRestrictions keeps the first restriction of each type.
func dedupeRestrictions(rs []model.Restriction) []model.Restriction {
	out := make([]model.Restriction, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Type] {
			seen[r.Type] = true
			out = append(out, r)
		}
	}
	return out
}

// heldClaim decodes the body of held claim id: its personas at the source
// and every version.
func heldClaim(op, id string, raw json.RawMessage) (archivedClaim, error) {
	var body archivedClaim
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Versions) == 0 {
		return archivedClaim{}, model.Wrap(op, model.KindInternal, fmt.Errorf("quarantine %s: %v", id, err))
	}
	return body, nil
}

// holdAll holds records held in one revision, from import (a bundle's,
// an archive's or an import's id) and source, and returns the revision.
func (st *state) holdAll(op string, b *engine.Batch, held []*model.QuarantineRecord, from, source string) (uint64, error) {
	rev, err := quarantine.Hold(st.Quarantine, b, held, from, source, b.Now, b.NextRevision)
	if err != nil {
		return 0, model.Wrap(op, model.KindInternal, err)
	}
	return rev, nil
}

// readHeld reads held record id, with its body, once what the view says
// of it is durable (so that the store holds it); the write that uses it
// checks that it is still at the revision read.
func (m *Migration) readHeld(op string, p model.Principal, id string) (map[string]quarantine.Copy, error) {
	if _, err := ownerRead(m, op, p, func(st *state) (struct{}, error) { return struct{}{}, nil }); err != nil {
		return nil, err
	}
	return m.readCopies(op, []string{id})
}

// readCopies reads held records ids, with their bodies, from the store; a
// record released meanwhile is left out.
func (m *Migration) readCopies(op string, ids []string) (map[string]quarantine.Copy, error) {
	var copies map[string]quarantine.Copy
	err := m.store.View(func(tx engine.Tx) (err error) {
		copies, err = quarantine.Read(tx, ids, true)
		return err
	})
	if err != nil {
		return nil, model.Wrap(op, model.KindInternal, err)
	}
	return copies, nil
}

// readManifest opens a bundle made for this custodian by a pinned one and
// checks its manifest against what it holds (quarantine.Open); it returns
// the manifest and the records' JSON. Every refusal is KindInvalid and
// says what to do.
func (m *Migration) readManifest(st *state, op string, raw []byte) (model.BundleManifest, []byte, error) {
	man, part, records, err := m.openPart(st, op, raw)
	if err == nil && part != nil {
		err = model.Fail(op, model.KindInvalid, "this is one part of a bundle in parts: import all its parts together (the zip of them)")
	}
	return man, records, err
}

// openPart opens a bundle, or one part of a bundle in parts, made for
// this custodian by a pinned one and checks its manifest
// (quarantine.OpenPart); it returns the manifest, the part (nil for a
// whole bundle) and the records' JSON.
func (m *Migration) openPart(st *state, op string, raw []byte) (model.BundleManifest, *quarantine.Part, []byte, error) {
	if m.cards == nil || st.core.Keys() == nil {
		return model.BundleManifest{}, nil, nil, model.Fail(op, model.KindInvalid, "this custodian cannot read bundles")
	}
	own, err := st.core.Card(op)
	if err != nil {
		return model.BundleManifest{}, nil, nil, err
	}
	source, payload, err := m.cards.Open(st.core.Keys(), raw, st.core.Pinned)
	if err != nil {
		return model.BundleManifest{}, nil, nil, model.Fail(op, model.KindInvalid, err.Error())
	}
	// Signed by a pinned custodian, but still checked: strict members,
	// the manifest first.
	man, part, records, err := quarantine.OpenPart(payload, source, own.CustodianID)
	if err != nil {
		return man, nil, nil, model.Fail(op, model.KindInvalid, err.Error())
	}
	return man, part, records, nil
}

// ReadBundle opens a bundle made for this custodian as ImportBundle does,
// and decodes its records, holding nothing (owner only).
func (m *Migration) ReadBundle(p model.Principal, raw []byte) (model.BundleManifest, model.BundleRecords, error) {
	const op = "import"
	type out struct {
		m model.BundleManifest
		r model.BundleRecords
	}
	o, err := ownerRead(m, op, p, func(st *state) (out, error) {
		man, body, err := m.readManifest(st, op, raw)
		if err != nil {
			return out{m: man}, err
		}
		var recs model.BundleRecords
		if err := quarantine.Strict(body, &recs); err != nil {
			return out{m: man}, model.Fail(op, model.KindInvalid, "the bundle's records are not in the bundle format 0.1")
		}
		return out{man, recs}, nil
	})
	return o.m, o.r, err
}
