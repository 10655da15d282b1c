package migration

import (
	"archive/zip"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/quarantine"
)

// Migration bundles (docs/formats/bundle.md): what one custodian hands another. The
// payload is {"manifest", "records"}; the codec signs and encrypts it.

// ExportBundle makes a bundle of this vault's context for the custodian
// whose card is in.To (owner only): every version of every active claim
// (of the personas named, if any), personas, entities, summaries whose
// parents all travel, and the producers' identities. A claim restricted
// no_export, source_controlled or third_party stays behind, and so does a
// summary of it; the manifest's loss report lists each by id and reason.
func (m *Migration) ExportBundle(ctx context.Context, p model.Principal, in model.ExportInput) ([]byte, model.BundleManifest, error) {
	const op = "export.bundle"
	to, id, err := m.exportStart(op, p, &in)
	if err != nil {
		return nil, model.BundleManifest{}, err
	}
	if in.PartClaims != 0 {
		return nil, model.BundleManifest{}, model.Fail(op, model.KindInvalid, "part_claims asks for a bundle in parts: use the parts export")
	}
	var keys []byte
	var man model.BundleManifest
	var recs model.BundleRecords
	err = m.write(op, p, func(st *state, b *engine.Batch) error {
		own, err := st.exportChecks(op, to, in.Personas)
		if err != nil {
			return err
		}
		if recs, man.LossReport, err = st.bundleRecords(op, in.Personas); err != nil {
			return err
		}
		man.BundleVersion, man.BundleID, man.CreatedAt = model.BundleVersion, id, b.Now.UTC()
		man.Source.CustodianID, man.Recipient.CustodianID = own.CustodianID, to.CustodianID
		versions := 0
		for _, c := range recs.Claims {
			versions += len(c.Versions)
		}
		man.Counts = map[string]int{"claims": len(recs.Claims), "versions": versions, "personas": len(recs.Personas),
			"entities": len(recs.Entities), "summaries": len(recs.Summaries), "identities": len(recs.Identities), "lost": len(man.LossReport)}
		keys = st.core.Keys()
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id, to.CustodianID}, Revision: st.Revision})
		return nil
	})
	if err != nil {
		return nil, model.BundleManifest{}, err
	}
	body, err := json.Marshal(recs)
	if err != nil {
		return nil, model.BundleManifest{}, model.Wrap(op, model.KindInternal, err)
	}
	man.RecordsDigest = quarantine.Digest(body)
	payload, err := json.Marshal(quarantine.Payload{Manifest: man, Records: body})
	if err != nil {
		return nil, model.BundleManifest{}, model.Wrap(op, model.KindInternal, err)
	}
	sealed, err := m.cards.Seal(keys, to, payload)
	if err != nil {
		return nil, model.BundleManifest{}, model.Wrap(op, model.KindInternal, err)
	}
	return sealed, man, nil
}

// exportStart checks an export's caller and input, and returns the
// recipient's card and the new bundle's id.
func (m *Migration) exportStart(op string, p model.Principal, in *model.ExportInput) (model.Card, string, error) {
	if err := p.RequireOwner(op); err != nil {
		return model.Card{}, "", err
	}
	if m.cards == nil {
		return model.Card{}, "", model.Fail(op, model.KindInvalid, "this custodian cannot make bundles")
	}
	if err := model.AcceptInput(m.schema, op, in); err != nil {
		return model.Card{}, "", err
	}
	if len(in.To) == 0 {
		return model.Card{}, "", model.Fail(op, model.KindInvalid, "to (the recipient custodian's card) is required")
	}
	if in.PartClaims < 0 || in.PartClaims > 1_000_000 {
		return model.Card{}, "", model.Fail(op, model.KindInvalid, "part_claims is 1 to 1,000,000")
	}
	to, err := m.cards.ParseCard(in.To)
	if err != nil {
		return model.Card{}, "", model.Fail(op, model.KindInvalid, err.Error())
	}
	id, err := identity.NewID("bnd_")
	if err != nil {
		return model.Card{}, "", model.Wrap(op, model.KindInternal, err)
	}
	return to, id, nil
}

// exportChecks returns this custodian's own card for an export to to of
// personas (all, if none), once it checked that to is another custodian
// and that each persona exists.
func (st *state) exportChecks(op string, to model.Card, personas []string) (model.Card, error) {
	own, err := st.core.Card(op)
	if err != nil {
		return own, err
	}
	if own.CustodianID == to.CustodianID {
		return own, model.Fail(op, model.KindInvalid, "to is this custodian's own card: export to the custodian that is to import")
	}
	for _, pe := range personas {
		if st.Personas[pe] == nil {
			return own, model.Fail(op, model.KindInvalid, "unknown persona "+pe)
		}
	}
	return own, nil
}

// ExportBundleParts makes a bundle in parts (format 0.2) for the custodian
// whose card is in.To (owner only): what [Migration.ExportBundle] would
// hold, at most in.PartClaims claims a part (5,000 if 0), the other
// records in the last part, each part signed and sealed on its own and
// written to w as the entry part-NNNN.jwe of a zip archive. It holds the
// journal only to take its cut of the view (exportCut): reads and writes
// go on while it plans and writes the parts, one at a time in memory. A
// claim erased meanwhile fails the export (export again): what the owner
// erased never leaves after the erasure.
func (m *Migration) ExportBundleParts(ctx context.Context, p model.Principal, in model.ExportInput, w io.Writer) (model.BundleManifest, error) {
	const op = "export.bundle"
	to, id, err := m.exportStart(op, p, &in)
	if err != nil {
		return model.BundleManifest{}, err
	}
	per := cmp.Or(in.PartClaims, 5_000)
	var man model.BundleManifest
	var cut *exportCut
	var keys []byte
	err = m.write(op, p, func(st *state, b *engine.Batch) error {
		own, err := st.exportChecks(op, to, in.Personas)
		if err != nil {
			return err
		}
		cut, keys = st.cutExport(in.Personas), st.core.Keys()
		man = model.BundleManifest{BundleVersion: quarantine.PartsVersion, BundleID: id, CreatedAt: b.Now.UTC()}
		man.Source.CustodianID, man.Recipient.CustodianID = own.CustodianID, to.CustodianID
		return nil
	})
	if err != nil {
		return man, err
	}
	if m.afterCut != nil {
		m.afterCut()
	}
	plan, err := cut.plan()
	if err != nil {
		return man, m.cutReadFailed(op, p, cut.claims, err, exportAgain)
	}
	count := max(1, (len(plan.claims)+per-1)/per)
	if count > quarantine.MaxParts {
		return man, model.Fail(op, model.KindInvalid, "that many parts (over 10,000): ask for more claims a part")
	}
	man.LossReport = plan.loss
	man.Counts = map[string]int{"claims": len(plan.claims), "versions": plan.versions, "personas": len(plan.recs.Personas), "parts": count,
		"entities": len(plan.recs.Entities), "summaries": len(plan.recs.Summaries), "identities": len(plan.recs.Identities), "lost": len(plan.loss)}
	if err := m.writeParts(op, p, keys, w, plan, in.Personas, per, count, man, to); err != nil {
		return man, err
	}
	return man, m.write(op, p, func(st *state, b *engine.Batch) error {
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id, to.CustodianID, fmt.Sprintf("parts:%d", count)}, Revision: st.Revision})
		return nil
	})
}

// writeParts seals plan in count parts of per claims and writes them to w
// as a zip archive. Once a part's claims are read, it checks that none of
// them was erased meanwhile (see exportErased).
func (m *Migration) writeParts(op string, p model.Principal, keys []byte, w io.Writer, plan bundlePlan, personas []string, per, count int, man model.BundleManifest, to model.Card) error {
	zw := zip.NewWriter(w)
	for i := range count {
		part := plan.claims[min(i*per, len(plan.claims)):min((i+1)*per, len(plan.claims))]
		claims, err := bundleClaims(part, personas)
		if err == nil {
			err = m.exportErased(op, p, part)
		}
		if err != nil {
			return m.cutReadFailed(op, p, part, err, exportAgain)
		}
		recs := model.BundleRecords{Claims: claims, Personas: []model.Persona{}, Entities: []model.Entity{}, Summaries: []model.Summary{}, Identities: plan.recs.Identities}
		if i == count-1 {
			recs.Personas, recs.Entities, recs.Summaries = plan.recs.Personas, plan.recs.Entities, plan.recs.Summaries
		}
		body, err := json.Marshal(recs)
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		man.RecordsDigest = quarantine.Digest(body)
		payload, err := json.Marshal(quarantine.Payload{Manifest: man, Part: &quarantine.Part{Index: i + 1, Count: count}, Records: body})
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		sealed, err := m.cards.Seal(keys, to, payload)
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("part-%04d.jwe", i+1), Method: zip.Store})
		if err == nil {
			_, err = f.Write(sealed)
		}
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
	}
	if err := zw.Close(); err != nil {
		return model.Wrap(op, model.KindInternal, err)
	}
	return nil
}

// exportAgain is what a bundle's export says when a claim of its cut was
// erased while it was made.
const exportAgain = "the bundle was made: export again"

// errErased is why an export stops: a claim of its cut was erased while
// it was made.
var errErased = errors.New("erased")

// exportErased returns errErased when one of records, whose versions were
// just read, has been erased since the cut. The view records an erasure
// before the store replaces the versions, so a claim the view still holds
// unerased was read as it was at the cut.
func (m *Migration) exportErased(op string, p model.Principal, records []*engine.ClaimRecord) error {
	_, err := ownerRead(m, op, p, func(st *state) (struct{}, error) {
		for _, r := range records {
			if now := st.Claims[r.Meta.ID]; now == nil || now.Meta.Status == model.StatusDeleted {
				return struct{}{}, errErased
			}
		}
		return struct{}{}, nil
	})
	return err
}

// cutReadFailed is the error of an export or a backup that failed to read
// records of its cut, or found one erased since: a conflict when one of
// them was erased since the cut (a read of its versions may fail, or find
// the tombstones), saying what happened while (while "the bundle was made:
// export again"); else err, as the core said it (a vault locked
// meanwhile) or as an internal error.
func (m *Migration) cutReadFailed(op string, p model.Principal, records []*engine.ClaimRecord, err error, while string) error {
	if errors.Is(err, errErased) || errors.Is(m.exportErased(op, p, records), errErased) {
		return model.Fail(op, model.KindConflict, "a claim was deleted while "+while)
	}
	if _, ok := err.(*model.Error); ok {
		return err
	}
	return model.Wrap(op, model.KindInternal, err)
}

// mustStay says why a record with these restrictions may not leave this
// custodian, or "".
func mustStay(rs []model.Restriction) string {
	for _, r := range rs {
		switch r.Type {
		case model.RestrictNoExport:
			return "no_export"
		case model.RestrictSourceControlled:
			return "source_controlled: its holder is not the person"
		case model.RestrictThirdParty:
			return "third_party: it is about someone else"
		}
	}
	return ""
}

// bundleRecords collects what a bundle of personas (all, if none) holds,
// and what stays behind (in the journal: the view does not change).
func (st *state) bundleRecords(op string, personas []string) (model.BundleRecords, []model.Loss, error) {
	cut := st.cutExport(personas)
	plan, err := cut.plan()
	if err != nil {
		return model.BundleRecords{}, nil, model.Wrap(op, model.KindInternal, err)
	}
	if plan.recs.Claims, err = bundleClaims(plan.claims, personas); err != nil {
		return model.BundleRecords{}, nil, model.Wrap(op, model.KindInternal, err)
	}
	return plan.recs, plan.loss, nil
}

// exportCut is what an export takes of the view at one moment: the
// records of the active claims of its personas (all, if none), by id —
// a record is never changed once published, and the versions it names
// never change in the store but by an erasure —, what stays behind, and
// copies of the personas, entities and summaries. An export plans and
// reads its claims from it without holding the view.
type exportCut struct {
	only   []string // the personas exported (all, if none)
	claims []*engine.ClaimRecord
	left   []model.Loss // retracted and deleted claims: they stay behind, listed
	cutRecords
}

// cutRecords is what a cut copies of the view besides its claims: the
// personas and entities, by id, and the summaries in order of creation, so
// that a summary of summaries comes after its parents.
type cutRecords struct {
	personas  []model.Persona
	entities  []model.Entity
	summaries []model.Summary
}

// copyRecords copies the view's personas, entities and summaries for a
// cut, with the view held.
func (st *state) copyRecords() cutRecords {
	c := cutRecords{personas: []model.Persona{}, entities: []model.Entity{}, summaries: []model.Summary{}}
	for _, pe := range st.Personas {
		c.personas = append(c.personas, *pe)
	}
	slices.SortFunc(c.personas, func(a, b model.Persona) int { return strings.Compare(a.ID, b.ID) })
	for _, e := range st.Entities {
		c.entities = append(c.entities, *e)
	}
	slices.SortFunc(c.entities, func(a, b model.Entity) int { return strings.Compare(a.ID, b.ID) })
	for _, sm := range st.Summaries {
		c.summaries = append(c.summaries, *sm)
	}
	slices.SortFunc(c.summaries, func(a, b model.Summary) int { return cmp.Compare(a.Revision, b.Revision) })
	return c
}

// cutExport takes the cut of an export of personas (all, if none), with
// the view held.
func (st *state) cutExport(personas []string) *exportCut {
	c := &exportCut{only: personas, claims: make([]*engine.ClaimRecord, 0, st.Active.Len()), cutRecords: st.copyRecords()}
	for _, r := range st.Claims {
		inPersonas := len(personas) == 0 || slices.ContainsFunc(r.Meta.Personas, func(pe string) bool { return slices.Contains(personas, pe) })
		switch {
		case !inPersonas: // a deleted claim is in no persona: listed only when all travel
		case r.Meta.Status == model.StatusActive:
			c.claims = append(c.claims, r)
		case r.Meta.Status == model.StatusRetracted || r.Meta.Status == model.StatusDeleted:
			c.left = append(c.left, model.Loss{Record: r.Meta.ID, Dropped: "claim", Reason: r.Meta.Status})
		}
	}
	slices.SortFunc(c.claims, func(a, b *engine.ClaimRecord) int { return strings.Compare(a.Meta.ID, b.Meta.ID) })
	slices.SortFunc(c.left, func(a, b model.Loss) int { return strings.Compare(a.Record, b.Record) })
	return c
}

// bundlePlan is what a bundle holds without its claims' versions: the
// records of the claims that travel, by id, with their count of versions,
// and its other records whole (personas, entities, summaries and
// identities are few beside the claims).
type bundlePlan struct {
	claims   []*engine.ClaimRecord
	versions int
	recs     model.BundleRecords // Claims empty
	loss     []model.Loss
}

// plan plans the bundle of cut c: it reads each claim's versions to judge
// it, and keeps none of them.
func (c *exportCut) plan() (bundlePlan, error) {
	plan := bundlePlan{recs: model.BundleRecords{Claims: []model.BundleClaim{}, Personas: []model.Persona{}, Entities: []model.Entity{},
		Summaries: []model.Summary{}, Identities: []model.IdentityRef{}}, loss: append([]model.Loss{}, c.left...)}
	recs := &plan.recs
	idents := map[model.IdentityRef]bool{}
	// addIdentity lists a producer once, by its issuer (or kind) and id.
	addIdentity := func(a model.Authenticated) {
		ref := model.IdentityRef{SourceIssuer: a.Issuer, SourceID: a.ID, Display: a.Kind + ":" + a.ID}
		if ref.SourceIssuer == "" {
			ref.SourceIssuer = "phc:" + a.Kind
		}
		if !idents[ref] {
			idents[ref] = true
			recs.Identities = append(recs.Identities, ref)
		}
	}
	used := map[string]bool{} // with a persona filter, the entities the claims that travel are about or relate
	for _, r := range c.claims {
		vs, err := r.Scan()
		if err != nil {
			return plan, err
		}
		why := ""
		for _, v := range vs {
			if why = mustStay(v.Restrictions); why != "" {
				break
			}
		}
		if why != "" {
			plan.loss = append(plan.loss, model.Loss{Record: r.Meta.ID, Dropped: "claim", Reason: why})
			continue
		}
		plan.claims = append(plan.claims, r)
		plan.versions += len(vs)
		for _, v := range vs {
			addIdentity(v.Producer.Authenticated)
		}
		if len(c.only) > 0 {
			used[r.Meta.Subject] = true
			if rel, ok := model.RelationshipOf(vs[len(vs)-1]); ok {
				used[rel.From], used[rel.To] = true, true
			}
		}
	}
	for _, pe := range c.personas { // by id, as the cut copied them
		if len(c.only) == 0 || slices.Contains(c.only, pe.ID) {
			recs.Personas = append(recs.Personas, pe)
		}
	}
	// Every entity, or with a persona filter only those the claims that
	// travel are about or relate.
	for _, e := range c.entities {
		if len(c.only) == 0 || used[e.ID] {
			recs.Entities = append(recs.Entities, e)
		}
	}
	plan.loss = bundleSummaries(c.summaries, recs, plan.claims, plan.loss, addIdentity)
	sort.Slice(recs.Identities, func(i, j int) bool {
		a, b := recs.Identities[i], recs.Identities[j]
		return a.SourceIssuer+"\x00"+a.SourceID < b.SourceIssuer+"\x00"+b.SourceID
	})
	return plan, nil
}

// bundleClaims is what a bundle of personas (all, if none) holds of the
// claims of records: every version, a disputed one disputed, with the
// personas that travel.
func bundleClaims(records []*engine.ClaimRecord, personas []string) ([]model.BundleClaim, error) {
	out := make([]model.BundleClaim, 0, len(records))
	for _, r := range records {
		vs, err := r.Scan()
		if err != nil {
			return nil, err
		}
		bc := model.BundleClaim{ID: r.Meta.ID, Personas: []string{}, Versions: make([]*model.Claim, len(vs))}
		for i, v := range vs {
			bc.Versions[i] = v.WithLists()
		}
		if r.Meta.DisputedAt != nil {
			// A disputed claim travels disputed: its head as every
			// recipient reads it.
			bc.Versions[len(vs)-1].Confirmation = model.Confirmation{Status: model.ConfirmationDisputed, By: "owner", At: r.Meta.DisputedAt}
		}
		for _, pe := range r.Meta.Personas {
			if len(personas) == 0 || slices.Contains(personas, pe) {
				bc.Personas = append(bc.Personas, pe)
			}
		}
		out = append(out, bc)
	}
	return out, nil
}

// bundleSummaries adds to recs those of sums (in order of creation, so
// that a summary of summaries comes after its parents) that travel with
// the claims of records (by id), and to loss those that stay behind, with
// why.
func bundleSummaries(sums []model.Summary, recs *model.BundleRecords, records []*engine.ClaimRecord, loss []model.Loss, addIdentity func(model.Authenticated)) []model.Loss {
	included := map[string]bool{} // the summaries that travel
	travels := func(id string) bool {
		_, found := slices.BinarySearchFunc(records, id, func(r *engine.ClaimRecord, id string) int { return strings.Compare(r.Meta.ID, id) })
		return found || included[id]
	}
	for _, sm := range sums {
		why := mustStay(sm.Restrictions)
		if why == "" {
			for _, parent := range sm.DerivedFrom {
				if !travels(model.IDOfRef(parent)) {
					why = "a parent stays behind: " + model.IDOfRef(parent)
					break
				}
			}
		}
		if why != "" {
			loss = append(loss, model.Loss{Record: sm.ID, Dropped: "summary", Reason: why})
			continue
		}
		included[sm.ID] = true
		sm.Origin = "" // this custodian's bookkeeping
		recs.Summaries = append(recs.Summaries, sm)
		if sm.Producer != nil {
			addIdentity(*sm.Producer)
		}
	}
	return loss
}
