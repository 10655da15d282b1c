package migration

import (
	"archive/zip"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"

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
		recs, man.LossReport = st.bundleRecords(in.Personas)
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
// written to w as the entry part-NNNN.jwe of a zip archive. It runs in
// the journal (writes wait), one part at a time in memory.
func (m *Migration) ExportBundleParts(ctx context.Context, p model.Principal, in model.ExportInput, w io.Writer) (model.BundleManifest, error) {
	const op = "export.bundle"
	to, id, err := m.exportStart(op, p, &in)
	if err != nil {
		return model.BundleManifest{}, err
	}
	per := cmp.Or(in.PartClaims, 5_000)
	var man model.BundleManifest
	err = m.write(op, p, func(st *state, b *engine.Batch) error {
		own, err := st.exportChecks(op, to, in.Personas)
		if err != nil {
			return err
		}
		plan := st.planBundle(in.Personas)
		count := max(1, (len(plan.ids)+per-1)/per)
		if count > quarantine.MaxParts {
			return model.Fail(op, model.KindInvalid, "that many parts (over 10,000): ask for more claims a part")
		}
		man = model.BundleManifest{BundleVersion: quarantine.PartsVersion, BundleID: id, CreatedAt: b.Now.UTC(), LossReport: plan.loss}
		man.Source.CustodianID, man.Recipient.CustodianID = own.CustodianID, to.CustodianID
		man.Counts = map[string]int{"claims": len(plan.ids), "versions": plan.versions, "personas": len(plan.recs.Personas), "parts": count,
			"entities": len(plan.recs.Entities), "summaries": len(plan.recs.Summaries), "identities": len(plan.recs.Identities), "lost": len(plan.loss)}
		if err := m.writeParts(op, st, w, plan, in.Personas, per, count, man, to); err != nil {
			return err
		}
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id, to.CustodianID, fmt.Sprintf("parts:%d", count)}, Revision: st.Revision})
		return nil
	})
	return man, err
}

// writeParts seals plan in count parts of per claims and writes them to w
// as a zip archive.
func (m *Migration) writeParts(op string, st *state, w io.Writer, plan bundlePlan, personas []string, per, count int, man model.BundleManifest, to model.Card) error {
	zw := zip.NewWriter(w)
	for i := range count {
		recs := model.BundleRecords{Claims: st.bundleClaims(plan.ids[min(i*per, len(plan.ids)):min((i+1)*per, len(plan.ids))], personas),
			Personas: []model.Persona{}, Entities: []model.Entity{}, Summaries: []model.Summary{}, Identities: plan.recs.Identities}
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
		sealed, err := m.cards.Seal(st.core.Keys(), to, payload)
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
// and what stays behind.
func (st *state) bundleRecords(personas []string) (model.BundleRecords, []model.Loss) {
	plan := st.planBundle(personas)
	plan.recs.Claims = st.bundleClaims(plan.ids, personas)
	return plan.recs, plan.loss
}

// bundlePlan is what a bundle holds without its claims' versions: the
// ids of the claims that travel, in order, with their count of versions,
// and its other records whole (personas, entities, summaries and
// identities are few beside the claims).
type bundlePlan struct {
	ids      []string
	versions int
	recs     model.BundleRecords // Claims empty
	loss     []model.Loss
}

// planBundle plans a bundle of personas (all, if none): it reads each
// claim's versions to judge it, and keeps none of them.
func (st *state) planBundle(personas []string) bundlePlan {
	plan := bundlePlan{recs: model.BundleRecords{Claims: []model.BundleClaim{}, Personas: []model.Persona{}, Entities: []model.Entity{},
		Summaries: []model.Summary{}, Identities: []model.IdentityRef{}}, loss: []model.Loss{}}
	recs := &plan.recs
	loss := plan.loss
	ids := make([]string, 0, len(st.Claims))
	var left []string // retracted and deleted claims: they stay behind, listed
	for id, r := range st.Claims {
		inPersonas := len(personas) == 0 || slices.ContainsFunc(r.Meta.Personas, func(pe string) bool { return slices.Contains(personas, pe) })
		switch {
		case !inPersonas: // a deleted claim is in no persona: listed only when all travel
		case r.Meta.Status == model.StatusActive:
			ids = append(ids, id)
		case r.Meta.Status == model.StatusRetracted || r.Meta.Status == model.StatusDeleted:
			left = append(left, id)
		}
	}
	sort.Strings(ids)
	sort.Strings(left)
	for _, id := range left {
		loss = append(loss, model.Loss{Record: id, Dropped: "claim", Reason: st.Claims[id].Meta.Status})
	}
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
	plan.ids = ids[:0] // filtered in place: ids is read ahead of what is kept
	for _, id := range ids {
		vs := st.Claims[id].Scan()
		why := ""
		for _, v := range vs {
			if why = mustStay(v.Restrictions); why != "" {
				break
			}
		}
		if why != "" {
			loss = append(loss, model.Loss{Record: id, Dropped: "claim", Reason: why})
			continue
		}
		plan.ids = append(plan.ids, id)
		plan.versions += len(vs)
		for _, v := range vs {
			addIdentity(v.Producer.Authenticated)
		}
	}
	for _, pe := range st.Personas {
		if len(personas) == 0 || slices.Contains(personas, pe.ID) {
			recs.Personas = append(recs.Personas, *pe)
		}
	}
	sort.Slice(recs.Personas, func(i, j int) bool { return recs.Personas[i].ID < recs.Personas[j].ID })
	// Every entity, or with a persona filter only those the claims that
	// travel are about or relate.
	used := map[string]bool{}
	for _, id := range plan.ids {
		if len(personas) == 0 {
			break
		}
		r := st.Claims[id]
		used[r.Meta.Subject] = true
		if r.Meta.Kind == model.KindRelationship {
			vs := r.Scan()
			if rel, ok := model.RelationshipOf(vs[len(vs)-1]); ok {
				used[rel.From], used[rel.To] = true, true
			}
		}
	}
	for _, e := range st.Entities {
		if len(personas) == 0 || used[e.ID] {
			recs.Entities = append(recs.Entities, *e)
		}
	}
	sort.Slice(recs.Entities, func(i, j int) bool { return recs.Entities[i].ID < recs.Entities[j].ID })
	plan.loss = st.bundleSummaries(recs, plan.ids, loss, addIdentity)
	sort.Slice(recs.Identities, func(i, j int) bool {
		a, b := recs.Identities[i], recs.Identities[j]
		return a.SourceIssuer+"\x00"+a.SourceID < b.SourceIssuer+"\x00"+b.SourceID
	})
	return plan
}

// bundleClaims is what a bundle of personas (all, if none) holds of the
// claims ids: every version, a disputed one disputed, with the personas
// that travel.
func (st *state) bundleClaims(ids, personas []string) []model.BundleClaim {
	out := make([]model.BundleClaim, 0, len(ids))
	for _, id := range ids {
		r := st.Claims[id]
		vs := r.Scan()
		bc := model.BundleClaim{ID: id, Personas: []string{}, Versions: make([]*model.Claim, len(vs))}
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
	return out
}

// bundleSummaries adds to recs the summaries that travel with the claims
// (sorted ids), and to loss those that stay behind, with why.
func (st *state) bundleSummaries(recs *model.BundleRecords, claims []string, loss []model.Loss, addIdentity func(model.Authenticated)) []model.Loss {
	included := map[string]bool{} // the summaries that travel
	travels := func(id string) bool {
		_, found := slices.BinarySearch(claims, id)
		return found || included[id]
	}
	// Summaries in order of creation, so that a summary of summaries
	// comes after its parents.
	sums := make([]*model.Summary, 0, len(st.Summaries))
	for _, sm := range st.Summaries {
		sums = append(sums, sm)
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i].Revision < sums[j].Revision })
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
		out := *sm
		out.Origin = "" // this custodian's bookkeeping
		recs.Summaries = append(recs.Summaries, out)
		if sm.Producer != nil {
			addIdentity(*sm.Producer)
		}
	}
	return loss
}
