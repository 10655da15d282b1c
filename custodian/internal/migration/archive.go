package migration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/quarantine"
)

// Archiver is the optional capability of a Vault to seal the owner's export
// archive under the vault keys, and to open an archive of any vault given
// that vault's password and Secret Key (errors as vault.OpenArchive).
type Archiver interface {
	SealArchive(plaintext []byte) ([]byte, error)
	OpenArchive(archive, password []byte, secretKey string) ([]byte, error)
	// OwnArchive reports whether archive was sealed by this vault.
	OwnArchive(archive []byte) bool
}

// archiveContent is what an export holds: claims (every version, with
// their personas, tiers, restrictions and provenance, retracted or
// disputed as they are), personas, entities, and summaries with their
// lineage — never grants, tokens, consumers or receipts.
//
// A claim that may never leave this custodian (no_export,
// source_controlled, third_party on any version), and a summary that
// carries such a restriction or derives from such a claim, is not among
// Claims or Summaries: it is in Kept, sealed by this custodian's own keys to its own card (as a
// bundle to itself), which no other custodian can open, whatever password
// and Secret Key it holds. KeptBack names each such claim by id and reason.
// A restore into this custodian opens Kept and brings them back; any other
// vault holds the rest and lists them as lost.
type archiveContent struct {
	Format     string          `json:"format"`
	ExportedAt time.Time       `json:"exported_at"`
	Personas   []model.Persona `json:"personas"`
	Claims     []archivedClaim `json:"claims"`
	Entities   []model.Entity  `json:"entities,omitempty"`
	Summaries  []model.Summary `json:"summaries,omitempty"`
	Kept       []byte          `json:"kept,omitempty"`
	KeptBack   []model.Loss    `json:"kept_back,omitempty"`
}

// keptContent is what Kept seals.
type keptContent struct {
	Format    string          `json:"format"`
	Claims    []archivedClaim `json:"claims"`
	Summaries []model.Summary `json:"summaries,omitempty"`
}

const keptFormat = "phc-kept/1"

type archivedClaim struct {
	Personas []string       `json:"personas"`
	Versions []*model.Claim `json:"versions"`
	// Status is the claim's, when it is not active (retracted); DisputedAt
	// is when the owner disputed it, if it is disputed.
	Status     string     `json:"status,omitempty"`
	DisputedAt *time.Time `json:"disputed_at,omitempty"`
}

const exportFormat = "phc-export/1"

// Export seals every claim that is not deleted (all versions, retracted
// and disputed as they are), every persona, entity and summary into an
// archive only the holder of this vault's password and Secret Key can open
// (owner only).
func (m *Migration) Export(ctx context.Context, p model.Principal) ([]byte, error) {
	const op = "export"
	arch, ok := m.vault, m.vault != nil
	if !ok {
		return nil, model.Fail(op, model.KindInvalid, "this custodian cannot export")
	}
	var keys []byte
	var own model.Card
	var cardErr error // an error only if something is kept back
	// The cut is taken with the view held; the claims are read after it,
	// with the vault running (see exportCut).
	cut, err := ownerRead(m, op, p, func(st *state) (*archiveCut, error) {
		if m.cards != nil && st.core.Keys() != nil {
			own, cardErr = st.core.Card(op)
			keys = st.core.Keys()
		}
		return st.cutArchive(), nil
	})
	if err != nil {
		return nil, err
	}
	if m.afterCut != nil {
		m.afterCut()
	}
	content, kept, err := cut.archive(m.clock.Now())
	if err == nil {
		err = m.exportErased(op, p, cut.claims)
	}
	if err != nil {
		return nil, m.cutReadFailed(op, p, cut.claims, err, "the backup was made: back up again")
	}
	if len(kept.Claims) == 0 && len(kept.Summaries) == 0 {
		keys = nil
	} else if keys != nil && cardErr != nil {
		return nil, cardErr
	}
	if keys != nil {
		// Only this custodian's keys open what may never leave it. (A
		// custodian built without a card codec keeps such claims out of
		// its archives altogether.)
		kept.Format = keptFormat
		plain, err := json.Marshal(kept)
		if err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
		if content.Kept, err = m.cards.Seal(keys, own, plain); err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
	}
	plain, err := json.Marshal(content)
	if err != nil {
		return nil, model.Wrap(op, model.KindInternal, err)
	}
	sealed, err := arch.SealArchive(plain)
	if err != nil {
		return nil, model.Wrap(op, model.KindInternal, err)
	}
	if err := m.write(op, p, func(st *state, b *engine.Batch) error {
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: st.Revision,
			Records: []string{fmt.Sprintf("claims:%d", len(content.Claims)), fmt.Sprintf("entities:%d", len(content.Entities)),
				fmt.Sprintf("summaries:%d", len(content.Summaries))}})
		return nil
	}); err != nil {
		return nil, err
	}
	return sealed, nil
}

// archiveCut is what a backup takes of the view at one moment (see
// exportCut): the records of the claims that are active or retracted, by
// id, and copies of the personas, entities and summaries.
type archiveCut struct {
	claims []*engine.ClaimRecord
	cutRecords
}

// cutArchive takes a backup's cut, with the view held.
func (st *state) cutArchive() *archiveCut {
	c := &archiveCut{claims: make([]*engine.ClaimRecord, 0, len(st.Claims)), cutRecords: st.copyRecords()}
	for _, r := range st.Claims {
		if r.Meta.Status == model.StatusActive || r.Meta.Status == model.StatusRetracted {
			c.claims = append(c.claims, r)
		}
	}
	slices.SortFunc(c.claims, func(a, b *engine.ClaimRecord) int { return strings.Compare(a.Meta.ID, b.Meta.ID) })
	return c
}

// archive is what a backup of cut c holds (content), and what of it only
// this custodian's keys may open (kept): the claims that may never leave
// it, and the summaries that carry such a restriction or derive from such
// a claim (or from such a summary). It reads every claim's versions.
func (c *archiveCut) archive(now time.Time) (content archiveContent, kept keptContent, err error) {
	content = archiveContent{Format: exportFormat, ExportedAt: now, Personas: c.personas, Claims: []archivedClaim{},
		Entities: c.entities, Summaries: []model.Summary{}}
	stays := map[string]bool{} // claims and summaries kept for this custodian
	for _, r := range c.claims {
		vs, err := r.Scan()
		if err != nil {
			return content, kept, err
		}
		ac := archivedClaim{Personas: r.Meta.Personas, Versions: vs, DisputedAt: r.Meta.DisputedAt}
		if r.Meta.Status != model.StatusActive {
			ac.Status = r.Meta.Status
		}
		if why := keptBack(ac.Versions); why != "" {
			content.KeptBack = append(content.KeptBack, model.Loss{Record: r.Meta.ID, Dropped: "claim", Reason: why})
			kept.Claims, stays[r.Meta.ID] = append(kept.Claims, ac), true
			continue
		}
		content.Claims = append(content.Claims, ac)
	}
	for _, sm := range c.summaries {
		why := mustStay(sm.Restrictions)
		for _, parent := range sm.DerivedFrom {
			if why == "" && stays[model.IDOfRef(parent)] {
				why = "a parent stays with this custodian: " + model.IDOfRef(parent)
			}
		}
		if why != "" {
			content.KeptBack = append(content.KeptBack, model.Loss{Record: sm.ID, Dropped: "summary", Reason: why})
			kept.Summaries, stays[sm.ID] = append(kept.Summaries, sm), true
			continue
		}
		content.Summaries = append(content.Summaries, sm)
	}
	return content, kept, nil
}

// Import opens an archive with the exporting vault's password and Secret
// Key and loads its claims and personas (owner only). merge adds the claims
// whose ids this vault does not hold and skips the rest; replace first
// erases every claim this vault holds. Imported versions keep their
// content, tiers, restrictions, provenance and written_by; they are
// re-stamped with this vault's revisions, in their original order. Wrong
// credentials are KindUnauthenticated; an archive that is not one,
// KindInvalid. in is decoded within the larger import limits
// (importLimits): an archive may be far larger than an ordinary request.
// A refused import leaves a deny receipt.
func (m *Migration) Import(ctx context.Context, p model.Principal, in model.ImportInput) (model.ImportResult, error) {
	const op = "import"
	if err := p.RequireOwner(op); err != nil {
		return model.ImportResult{}, err
	}
	out, err := m.importArchive(p, in)
	return out, m.refusedImport(p, op, err)
}

func (m *Migration) importArchive(p model.Principal, in model.ImportInput) (model.ImportResult, error) {
	const op = "import"
	arch, ok := m.vault, m.vault != nil
	if !ok {
		return model.ImportResult{}, model.Fail(op, model.KindInvalid, "this custodian cannot import")
	}
	if err := model.AcceptInput(m.schema, op, &in); err != nil {
		return model.ImportResult{}, err
	}
	if in.Mode != "merge" && in.Mode != "replace" {
		return model.ImportResult{}, model.Fail(op, model.KindInvalid, "mode must be merge or replace")
	}
	if wait := m.reentry.Wait("", m.clock.Now()); wait > 0 {
		return model.ImportResult{}, &model.Error{Op: op, Kind: model.KindRateLimited, RetryAfter: wait}
	}
	archive := []byte(in.Archive) // the archive's own JSON object, or
	var text string
	if json.Unmarshal(in.Archive, &text) == nil {
		archive = []byte(text) // that JSON as a string
		var b64 []byte
		if !strings.HasPrefix(strings.TrimSpace(text), "{") && json.Unmarshal(in.Archive, &b64) == nil {
			archive = b64 // or it, base64-encoded
		}
	}
	plain, err := arch.OpenArchive(archive, []byte(in.Password), in.SecretKey)
	switch {
	case errors.Is(err, vault.ErrBadCredentials), errors.Is(err, vault.ErrMalformedSecretKey):
		m.reentry.Note("", m.clock.Now())
		return model.ImportResult{}, model.Fail(op, model.KindUnauthenticated, "wrong password or Secret Key for this archive")
	case errors.Is(err, vault.ErrCorrupt):
		return model.ImportResult{}, model.Fail(op, model.KindInvalid, "not a phc archive")
	case err != nil:
		return model.ImportResult{}, model.Wrap(op, model.KindInternal, err)
	}
	var content archiveContent
	if err := json.Unmarshal(plain, &content); err != nil || content.Format != exportFormat {
		return model.ImportResult{}, model.Fail(op, model.KindInvalid, "the archive holds no phc export")
	}
	if err := checkArchive(&content); err != nil {
		return model.ImportResult{}, &model.Error{Op: op, Kind: model.KindInvalid, Public: "the archive holds a malformed record", Err: err}
	}
	if !arch.OwnArchive(archive) {
		// Another vault's archive: a migration, not a restore.
		return m.holdArchive(p, &content, archiveID(plain))
	}
	var out model.ImportResult
	err = m.write(op, p, func(st *state, b *engine.Batch) error {
		if err := m.openKept(st, op, &content, &out); err != nil {
			return err
		}
		return st.restore(op, b, in.Mode, &content, &out)
	})
	return out, err
}

// keptBack says why a claim with versions may not leave this custodian by
// any route, or "": a restriction of any version that keeps it here.
func keptBack(versions []*model.Claim) string {
	for _, v := range versions {
		if why := mustStay(v.Restrictions); why != "" {
			return why
		}
	}
	return ""
}

// openKept adds to content, an archive of this vault, the claims it keeps
// for this custodian alone: Kept opens only under this custodian's own
// keys, signed by its own card. Sealed by other keys, they stay out and
// are listed in out's loss report.
func (m *Migration) openKept(st *state, op string, content *archiveContent, out *model.ImportResult) error {
	if len(content.Kept) == 0 && len(content.KeptBack) == 0 {
		return nil
	}
	var own model.Card
	var plain []byte
	err := fmt.Errorf("this custodian has no keys, or the archive kept nothing")
	if m.cards != nil && st.core.Keys() != nil && len(content.Kept) > 0 {
		if own, err = st.core.Card(op); err != nil {
			return err
		}
		_, plain, err = m.cards.Open(st.core.Keys(), content.Kept, func(id string) (model.Card, bool) {
			return own, id == own.CustodianID
		})
	}
	var kept keptContent
	if err == nil {
		err = json.Unmarshal(plain, &kept)
	}
	if err == nil && kept.Format != keptFormat {
		err = fmt.Errorf("not %s", keptFormat)
	}
	if err != nil {
		for _, l := range content.KeptBack {
			l.Reason += ": not sealed for this custodian's keys"
			out.LossReport = append(out.LossReport, l)
		}
		return nil
	}
	content.Claims = append(content.Claims, kept.Claims...)
	content.Summaries = append(content.Summaries, kept.Summaries...)
	if err := checkArchive(content); err != nil {
		return &model.Error{Op: op, Kind: model.KindInvalid, Public: "the archive holds a malformed record", Err: err}
	}
	return nil
}

// restore writes content, an archive of this vault, into the view (see
// [Service.Import]): in mode "replace" after erasing every active claim,
// in mode "merge" skipping the claims the vault holds. Versions are
// re-stamped with revisions in their original order.
func (st *state) restore(op string, b *engine.Batch, mode string, content *archiveContent, out *model.ImportResult) error {
	if mode == "replace" {
		for _, r := range st.Claims {
			if r.Meta.Status == model.StatusActive {
				out.RemovedClaims = append(out.RemovedClaims, r.Meta.ID)
			}
		}
		sort.Strings(out.RemovedClaims)
		for _, id := range out.RemovedClaims {
			st.erase(b, st.Claims[id])
		}
		out.Removed = len(out.RemovedClaims)
	}
	for _, pe := range content.Personas {
		if _, ok := st.Personas[pe.ID]; ok {
			continue
		}
		key, err := identity.NewID("per_") // opaque, as in CreatePersona
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		np := pe
		np.Node = key
		st.SetPersona(&np)
		b.Put(engine.BucketPersonas, key, &np)
	}
	for _, e := range content.Entities {
		if st.Entities[e.ID] == nil {
			ne := e
			st.SetEntity(&ne)
			b.Put(engine.BucketEntities, ne.ID, &ne)
			out.Entities++
		}
	}
	// Versions are re-stamped with revisions in their original order.
	type ver struct {
		c     *model.Claim
		claim int
	}
	var all []ver
	for i, ac := range content.Claims {
		if _, exists := st.Claims[ac.Versions[0].ID]; exists && mode == "merge" {
			out.Skipped++
			continue
		}
		for _, v := range ac.Versions {
			all = append(all, ver{v, i})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].c.Revision < all[j].c.Revision })
	for _, v := range all {
		v.c.Revision = b.NextRevision()
	}
	for _, ac := range content.Claims {
		id := ac.Versions[0].ID
		if _, exists := st.Claims[id]; exists && mode == "merge" {
			continue
		}
		personas := []string{}
		for _, pe := range ac.Personas {
			if _, ok := st.Personas[pe]; ok {
				personas = append(personas, pe)
			}
		}
		if old, ok := st.Claims[id]; ok {
			// replace over a claim of the same id: drop any versions the
			// archive does not have, so the stored sequence stays whole.
			for v := len(ac.Versions) + 1; v <= old.Meta.Head; v++ {
				b.Del(engine.BucketClaims, engine.VersionKey(id, v))
			}
		}
		status := model.StatusActive
		if ac.Status == model.StatusRetracted {
			status = ac.Status
		}
		for _, v := range ac.Versions {
			v.Personas, v.Status = nil, model.StatusActive
			b.Put(engine.BucketClaims, engine.VersionKey(id, v.Version), v)
		}
		n := len(ac.Versions)
		meta := engine.ClaimMeta{ID: id, Head: n, Status: status, Personas: personas, DisputedAt: ac.DisputedAt}
		r := st.NewRecord(meta, ac.Versions[n-1], ac.Versions[:n-1])
		st.SetClaim(r)
		b.Put(engine.BucketClaimMeta, id, r.Meta)
		out.Imported++
	}
	// Summaries after the claims they derive from, in order of creation.
	for _, sm := range content.Summaries {
		if st.Summaries[sm.ID] == nil {
			ns := sm
			ns.Revision = b.NextRevision()
			st.SetSummary(&ns)
			b.Put(engine.BucketSummaries, ns.ID, &ns)
			out.Summaries++
		}
	}
	if len(all) == 0 && out.Removed == 0 && out.Entities == 0 && out.Summaries == 0 {
		b.NextRevision()
	}
	out.Revision = st.Revision
	b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: out.Revision,
		Records: append([]string{fmt.Sprintf("imported:%d", out.Imported), fmt.Sprintf("skipped:%d", out.Skipped), fmt.Sprintf("removed:%d", out.Removed),
			fmt.Sprintf("entities:%d", out.Entities), fmt.Sprintf("summaries:%d", out.Summaries)}, out.RemovedClaims...)})
	return nil
}

// checkArchive validates what an archive holds before any of it is used:
// ids, keys, version sequences, tiers, states, persona ids, entities, and
// summaries with their lineage.
func checkArchive(c *archiveContent) error {
	for _, pe := range c.Personas {
		if !model.ValidSegment(pe.ID) {
			return fmt.Errorf("persona id")
		}
	}
	seen := map[string]bool{}
	for _, ac := range c.Claims {
		if len(ac.Versions) == 0 {
			return fmt.Errorf("claim without versions")
		}
		id := ac.Versions[0].ID
		if !identity.ValidID(id, "clm_") || seen[id] {
			return fmt.Errorf("claim id")
		}
		seen[id] = true
		for i, v := range ac.Versions {
			if v == nil || v.ID != id || v.Version != i+1 || !model.ValidKey(v.Key) || len(v.Value) == 0 || !json.Valid(v.Value) {
				return fmt.Errorf("claim %s version %d", id, i+1)
			}
			if _, ok := model.TierRank[v.Sensitivity]; !ok {
				return fmt.Errorf("claim %s tier", id)
			}
		}
		for _, pe := range ac.Personas {
			if !model.ValidSegment(pe) {
				return fmt.Errorf("claim %s persona", id)
			}
		}
		if ac.Status != "" && ac.Status != model.StatusRetracted {
			return fmt.Errorf("claim %s status", id)
		}
	}
	for _, e := range c.Entities {
		if !identity.ValidID(e.ID, "ent_") || model.EntityTypes[e.Type] == "" || seen[e.ID] {
			return fmt.Errorf("entity")
		}
		seen[e.ID] = true
	}
	for _, sm := range c.Summaries {
		if !identity.ValidID(sm.ID, "sum_") || sm.Version < 1 || len(sm.DerivedFrom) == 0 || seen[sm.ID] {
			return fmt.Errorf("summary")
		}
		seen[sm.ID] = true
		if _, ok := model.TierRank[sm.Sensitivity]; !ok {
			return fmt.Errorf("summary %s tier", sm.ID)
		}
		for _, ref := range sm.DerivedFrom {
			if _, _, ok := model.ParseRef(ref); !ok {
				return fmt.Errorf("summary %s lineage", sm.ID)
			}
		}
	}
	return nil
}

// holdArchive holds another vault's archive in the quarantine, as an
// import of a bundle does: nothing of it is read, used or erased until the
// owner adopts it. Its producers stay foreign to "archive". An archive
// held once is refused after (by id, its digest): restoring the same
// backup twice holds nothing twice.
func (m *Migration) holdArchive(p model.Principal, content *archiveContent, id string) (model.ImportResult, error) {
	const op = "import"
	var out model.ImportResult
	err := m.write(op, p, func(st *state, b *engine.Batch) error {
		if st.BundlesSeen[id] {
			return model.Fail(op, model.KindConflict, "this archive was brought in already ("+id+"): its records are in the quarantine, or were adopted or rejected")
		}
		// What may never leave the custodian that made the archive stays
		// with it, sealed to its keys: listed, never opened here.
		out.LossReport = nil
		for _, l := range content.KeptBack {
			l.Reason += ": it stays with the custodian that made the archive"
			out.LossReport = append(out.LossReport, l)
		}
		held, err := m.heldArchive(st, content, &out.LossReport)
		if err != nil {
			return err
		}
		rev, err := st.holdAll(op, b, held, id, archiveSource)
		if err != nil {
			return err
		}
		st.BundlesSeen[id] = true
		b.Put(engine.BucketBundlesSeen, id, seenBundle{Source: archiveSource, ImportedAt: b.Now})
		out.Held, out.Revision = len(held), rev
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev,
			Records: []string{"another vault's archive", id, fmt.Sprintf("held:%d", out.Held)}})
		return nil
	})
	return out, err
}

// heldArchive returns what the quarantine is to hold of another vault's
// archive (without ids yet): its personas, entities, claims (retracted and
// disputed as they were) and summaries, each with its problems; what it
// drops is added to loss.
func (m *Migration) heldArchive(st *state, content *archiveContent, loss *[]model.Loss) ([]*model.QuarantineRecord, error) {
	const op = "import"
	var held []*model.QuarantineRecord
	hold := func(kind, record string, v any, exists bool, problem string) (*model.QuarantineRecord, error) {
		body, err := json.Marshal(v)
		if err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
		q := &model.QuarantineRecord{Kind: kind, Record: record, Status: model.StatusQuarantined, Problems: []string{}, Body: body}
		if exists {
			q.Problems = append(q.Problems, problem)
		}
		held = append(held, q)
		return q, nil
	}
	for _, pe := range content.Personas {
		if _, err := hold("persona", pe.ID, pe, st.Personas[pe.ID] != nil, "a persona with this id exists here: adopting keeps the local one"); err != nil {
			return nil, err
		}
	}
	for _, e := range content.Entities {
		if _, err := hold("entity", e.ID, e, st.Entities[e.ID] != nil, "this entity exists here already"); err != nil {
			return nil, err
		}
	}
	for _, ac := range content.Claims {
		for i, v := range ac.Versions {
			ac.Versions[i] = v.WithLists()
			ac.Versions[i].Personas = []string{}
		}
		head := ac.Versions[len(ac.Versions)-1]
		if ac.DisputedAt != nil {
			head.Confirmation = model.Confirmation{Status: model.ConfirmationDisputed, By: "owner", At: ac.DisputedAt}
		}
		q := &model.QuarantineRecord{Kind: "claim", Record: head.ID, Key: head.Key, Status: model.StatusQuarantined, Problems: []string{}}
		a := head.Producer.Authenticated
		foreign := map[string]string{a.Kind + ":" + a.ID: quarantine.ForeignID(archiveSource, a.ID)}
		m.checkImported(st, q, ac.Versions, foreign, loss)
		if ac.Status == model.StatusRetracted {
			q.Problems = append(q.Problems, "retracted at its source: it is adopted retracted")
		}
		body, err := json.Marshal(ac)
		if err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
		q.Body = body
		held = append(held, q)
	}
	for _, sm := range content.Summaries {
		sm.Origin = "" // the making vault's bookkeeping
		body, err := json.Marshal(sm)
		if err != nil {
			return nil, model.Wrap(op, model.KindInternal, err)
		}
		held = append(held, heldSummary(sm, body))
	}
	return held, nil
}

// archiveID names an archive by the digest of what it holds.
func archiveID(plain []byte) string {
	sum := sha256.Sum256(plain)
	return "arc_" + hex.EncodeToString(sum[:16])
}

// archiveSource is the source of the records of another vault's archive.
const archiveSource = "archive"
