package custodian_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/schema"
)

// TestBackupHoldsEverything: the owner's backup holds everything the owner
// made — personas, entities, relationships, summaries and their lineage,
// retracted and disputed claims — and a new vault that brings it in (held,
// then adopted) ends with all of it back, in the same states; bringing the
// same backup in again holds nothing twice, and restoring it into the vault
// that made it doubles nothing.
func TestBackupHoldsEverything(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	doA, doB := serveHTTP(t, a), serveHTTP(t, b)
	ctx := t.Context()

	a.mustPersona("home")
	ana, err := a.CreateEntity(ctx, a.owner, input[custodian.EntityInput](a, []byte(`{"type": "person", "name": "Ana"}`)))
	if err != nil {
		t.Fatal(err)
	}
	sister := a.mustPropose(a.owner, proposal(t, "relationships.sister", map[string]string{"from": "self", "to": ana.Entity.ID, "relation": "sister"},
		map[string]any{"kind": "relationship"}))
	a.mustConfirm(sister.ProposalID)
	plant := a.mustClaim("home.plant", "fern", "home").Claim
	disputed := a.mustClaim("home.city", "Lisbon", "home").Claim
	if _, err := a.DisputeClaim(ctx, a.owner, disputed.ID); err != nil {
		t.Fatal(err)
	}
	retracted := a.mustClaim("home.old_address", "12 Rua Nova").Claim
	if _, err := a.RetractClaim(ctx, a.owner, retracted.ID); err != nil {
		t.Fatal(err)
	}
	sum := a.mustSummary(a.owner, "a fern at home", "", ref(plant))

	st, archive := doA("GET", "/context/export", a.ownerToken, nil)
	if st != 200 {
		t.Fatalf("export = %d %s", st, archive)
	}
	body := mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": a.secretKey})

	// A new vault holds all of it, then adopts all of it.
	st, raw := doB("POST", "/context/import", b.ownerToken, body)
	var res custodian.ImportResult
	if st != 200 || json.Unmarshal(raw, &res) != nil {
		t.Fatalf("import into a new vault = %d %s", st, raw)
	}
	// persona, entity, 5 claims (Ana's name, the relationship, plant,
	// disputed, retracted), summary
	if res.Held != 8 {
		t.Fatalf("held = %d; want 8 (persona, entity, five claims, summary): %s", res.Held, raw)
	}
	if st, raw := doB("POST", "/phc/v1/quarantine/adopt", b.ownerToken, []byte(`{"all":true}`)); st != 200 || !strings.Contains(string(raw), `"adopted":8`) {
		t.Fatalf("adopt all = %d %s", st, raw)
	}
	if ents, err := b.ListEntities(ctx, b.owner); err != nil || len(ents) != 1 || ents[0].ID != ana.Entity.ID {
		t.Errorf("entities on the new vault = %+v, %v; want %s", ents, err, ana.Entity.ID)
	}
	got, err := b.GetClaim(ctx, b.owner, disputed.ID, "")
	if err != nil || got.Claim.Confirmation.Status != custodian.ConfirmationDisputed {
		t.Errorf("disputed claim on the new vault = %+v, %v; want it disputed", got.Claim.Confirmation, err)
	}
	got, err = b.GetClaim(ctx, b.owner, retracted.ID, "")
	if err != nil || got.Claim.Status != custodian.StatusRetracted {
		t.Errorf("retracted claim on the new vault = %q, %v; want it retracted", got.Claim.Status, err)
	}
	if got, err := b.GetClaim(ctx, b.owner, plant.ID, ""); err != nil || len(got.Claim.Personas) != 1 || got.Claim.Personas[0] != "home" {
		t.Errorf("claim in persona home on the new vault = %+v, %v", got.Claim.Personas, err)
	}
	s := b.summary(sum.ID)
	if len(s.DerivedFrom) != 1 || s.DerivedFrom[0] != ref(plant) {
		t.Errorf("summary lineage on the new vault = %v; want [%s]", s.DerivedFrom, ref(plant))
	}
	if rep, err := b.Check(ctx, b.owner); err != nil || !rep.OK {
		t.Fatalf("Check on the new vault = %+v, %v", rep, err)
	}

	// The same backup again holds nothing twice.
	if st, raw := doB("POST", "/context/import", b.ownerToken, body); st != 409 {
		t.Fatalf("the same backup again = %d %s; want 409", st, raw)
	}
	if page, err := b.ListQuarantine(ctx, b.owner, custodian.QuarantineQuery{}); err != nil || len(page.Records) != 0 {
		t.Fatalf("quarantine after the second import = %+v, %v; want empty", page.Records, err)
	}

	// Restored into the vault that made it, nothing doubles.
	res = custodian.ImportResult{}
	if st, raw := doA("POST", "/context/import", a.ownerToken, body); st != 200 || json.Unmarshal(raw, &res) != nil ||
		res.Imported != 0 || res.Entities != 0 || res.Summaries != 0 {
		t.Fatalf("restore into the same vault = %d %s; want nothing added", st, raw)
	}
}

// TestBackupRestoresStates: restored with replace into the vault that
// made it, a backup brings back retracted and disputed claims as they were.
func TestBackupRestoresStates(t *testing.T) {
	a := newTestService(t, withCards)
	doA := serveHTTP(t, a)
	ctx := t.Context()
	disputed := a.mustClaim("home.city", "Lisbon").Claim
	if _, err := a.DisputeClaim(ctx, a.owner, disputed.ID); err != nil {
		t.Fatal(err)
	}
	retracted := a.mustClaim("home.old_address", "12 Rua Nova").Claim
	if _, err := a.RetractClaim(ctx, a.owner, retracted.ID); err != nil {
		t.Fatal(err)
	}
	st, archive := doA("GET", "/context/export", a.ownerToken, nil)
	if st != 200 {
		t.Fatalf("export = %d %s", st, archive)
	}
	body := mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "replace", "password": testPassword, "secret_key": a.secretKey})
	if st, raw := doA("POST", "/context/import", a.ownerToken, body); st != 200 {
		t.Fatalf("restore = %d %s", st, raw)
	}
	got, err := a.GetClaim(ctx, a.owner, disputed.ID, "")
	if err != nil || got.Claim.Confirmation.Status != custodian.ConfirmationDisputed {
		t.Errorf("disputed claim after the restore = %+v, %v", got.Claim.Confirmation, err)
	}
	got, err = a.GetClaim(ctx, a.owner, retracted.ID, "")
	if err != nil || got.Claim.Status != custodian.StatusRetracted {
		t.Errorf("retracted claim after the restore = %q, %v", got.Claim.Status, err)
	}
	if rep, err := a.Check(ctx, a.owner); err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
}

// TestBundleDocumentsValidate: what a bundle holds — its manifest and its
// records, as phc makes them — passes the bundle schemas that phc validate
// checks documents against.
func TestBundleDocumentsValidate(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("home")
	if _, err := a.CreateEntity(t.Context(), a.owner, input[custodian.EntityInput](a, []byte(`{"type": "person", "name": "Ana"}`))); err != nil {
		t.Fatal(err)
	}
	c := a.mustClaim("home.plant", "fern", "home").Claim
	a.mustSummary(a.owner, "a fern", "", ref(c))
	sealed := mustExport(t, a, cardB)
	man, recs, err := b.ReadBundle(b.owner, sealed)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]any{schema.BundleManifest: man, schema.BundleRecords: recs} {
		raw := mustJSON(t, doc)
		if _, vs, err := v.DecodeValid(name, raw, schema.DefaultLimits()); err != nil || vs != nil {
			t.Errorf("%s = %v, %v\n%s", name, vs, err, raw)
		}
	}
}

// TestAdoptAllInChunks: an adopt of all takes the quarantine a chunk at a
// time — personas and entities, then claims, then summaries — and a
// summary adopted in a later chunk than its parents still derives from
// them: everything arrives, as one adopt of fewer records would.
func TestAdoptAllInChunks(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("home")
	const n = 2100 // over one chunk
	var first, last custodian.Claim
	for i := range n {
		c := a.mustClaim(fmt.Sprintf("home.item%04d", i), i, "home").Claim
		if i == 0 {
			first = c
		}
		last = c
	}
	sum := a.mustSummary(a.owner, "the first and the last", "", ref(first), ref(last))
	sealed := mustExport(t, a, cardB)
	if _, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed}); err != nil {
		t.Fatal(err)
	}
	got, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{All: true}))
	if err != nil || got != n+2 { // the claims, the persona, the summary
		t.Fatalf("adopt all = %d, %v; want %d", got, err, n+2)
	}
	claims, err := b.ListClaims(t.Context(), b.owner, "", "home")
	if err != nil || len(claims.Claims) != n {
		t.Fatalf("claims in home on B = %d, %v; want %d", len(claims.Claims), err, n)
	}
	if s := b.summary(sum.ID); len(s.DerivedFrom) != 2 {
		t.Fatalf("the summary on B derives from %v", s.DerivedFrom)
	}
	if page, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{}); err != nil || page.Total != 0 {
		t.Fatalf("held after adopting all: %d, %v", page.Total, err)
	}
	if rep, err := b.Check(t.Context(), b.owner); err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
}

// counts is an adopt's answer as its counts.
func counts(a custodian.Adopted, err error) (int, uint64, error) { return a.Adopted, a.Revision, err }

// TestBundleInParts: a bundle in parts carries what a whole bundle does —
// claims split over the parts, the other records in the last — and is
// held whole; with a part missing, twice, or of another bundle it is
// refused with nothing held, and imported again it is refused.
func TestBundleInParts(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("home")
	var claims []custodian.Claim
	for i := range 5 {
		claims = append(claims, a.mustClaim(fmt.Sprintf("home.item%d", i), i, "home").Claim)
	}
	a.mustSummary(a.owner, "first and last", "", ref(claims[0]), ref(claims[4]))
	export := func() map[string][]byte {
		var buf bytes.Buffer
		man, err := a.ExportBundleParts(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": cardB, "part_claims": 2})), &buf)
		if err != nil || man.Counts["parts"] != 3 || man.Counts["claims"] != 5 {
			t.Fatalf("ExportBundleParts = %+v, %v; want 3 parts of 5 claims", man.Counts, err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		parts := map[string][]byte{}
		for _, f := range zr.File {
			rc, _ := f.Open()
			raw, _ := io.ReadAll(rc)
			rc.Close()
			parts[f.Name] = raw
		}
		return parts
	}
	zipOf := func(parts map[string][]byte) custodian.ImportPartsInput {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, name := range slices.Sorted(maps.Keys(parts)) {
			w, _ := zw.Create(name)
			w.Write(parts[name])
		}
		zw.Close()
		return custodian.ImportPartsInput{Parts: bytes.NewReader(buf.Bytes()), Size: int64(buf.Len())}
	}
	held := func() int {
		page, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return page.Total
	}
	parts, other := export(), export()
	refusals := map[string]map[string][]byte{
		"missing": {"part-0001.jwe": parts["part-0001.jwe"], "part-0003.jwe": parts["part-0003.jwe"]},
		"twice":   {"part-0001.jwe": parts["part-0001.jwe"], "part-0002.jwe": parts["part-0002.jwe"], "part-0003.jwe": parts["part-0002.jwe"]},
		"foreign": {"part-0001.jwe": parts["part-0001.jwe"], "part-0002.jwe": other["part-0002.jwe"], "part-0003.jwe": parts["part-0003.jwe"]},
	}
	for name, ps := range refusals {
		if _, err := b.ImportBundleParts(t.Context(), b.owner, zipOf(ps)); custodian.KindOf(err) != custodian.KindInvalid || held() != 0 {
			t.Fatalf("%s: ImportBundleParts = %v, %d held; want invalid, nothing held", name, err, held())
		}
	}
	rep, err := b.ImportBundleParts(t.Context(), b.owner, zipOf(parts))
	if err != nil || held() != 7 { // 5 claims, the persona, the summary
		t.Fatalf("ImportBundleParts = %+v, %v; %d held, want 7", rep.Counts, err, held())
	}
	if _, err := b.ImportBundleParts(t.Context(), b.owner, zipOf(parts)); custodian.KindOf(err) != custodian.KindConflict {
		t.Fatalf("the same bundle again = %v; want conflict", err)
	}
	if _, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: parts["part-0001.jwe"]}); custodian.KindOf(err) != custodian.KindInvalid {
		t.Fatalf("one part alone as a bundle = %v; want invalid", err)
	}
	if n, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{All: true})); err != nil || n != 7 {
		t.Fatalf("adopt all = %d, %v", n, err)
	}
	if rep, err := b.Check(t.Context(), b.owner); err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
}

// TestImportedMemoriesTravel: memories imported from another system and
// adopted are claims like any other: written by the owner, they travel in
// a bundle that another custodian holds.
func TestImportedMemoriesTravel(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	export := []byte(`[{"id": "m-1", "memory": "Prefers tea", "user_id": "u", "metadata": {"attributed_to": "user"}}]`)
	if _, err := a.ImportExport(t.Context(), a.owner, custodian.ImportExportInput{From: "mem0", Name: "x.json", Export: bytes.NewReader(export), Size: int64(len(export))}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := counts(a.AdoptQuarantined(t.Context(), a.owner, "", custodian.AdoptInput{All: true})); err != nil {
		t.Fatal(err)
	}
	list, err := a.ListClaims(t.Context(), a.owner, "imported.*", "")
	if err != nil || len(list.Claims) != 1 || list.Claims[0].WrittenBy != custodian.WrittenByUser {
		t.Fatalf("the adopted memory = %+v, %v; want one written by the user", list.Claims, err)
	}
	sealed := mustExport(t, a, cardB)
	if _, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed}); err != nil {
		t.Fatalf("a bundle with an imported memory: %v", err)
	}
}

// TestExportInPartsPastItsCut: an export in parts holds the journal only
// for its cut: a write made while it reads the claims goes through (it
// would wait forever if the export held the journal). A claim erased
// after the cut fails the export — what the owner erased never leaves
// after the erasure — and the next export lists it as deleted.
func TestExportInPartsPastItsCut(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	var claims []custodian.Claim
	for i := range 4 {
		claims = append(claims, a.mustClaim(fmt.Sprintf("home.item%d", i), i).Claim)
	}
	export := func() (custodian.BundleManifest, error) {
		var buf bytes.Buffer
		return a.ExportBundleParts(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": cardB, "part_claims": 2})), &buf)
	}
	a.SetExportCutHook(func() { a.mustClaim("home.during", "written while the export ran") })
	if man, err := export(); err != nil || man.Counts["claims"] != 4 {
		t.Fatalf("export with a write past its cut = %+v, %v; want the 4 claims of the cut", man.Counts, err)
	}
	a.SetExportCutHook(func() {
		if _, err := a.DeleteClaim(t.Context(), a.owner, claims[3].ID); err != nil {
			t.Errorf("DeleteClaim past the cut = %v", err)
		}
	})
	_, err := export()
	wantKind(t, "an export whose claim was erased past its cut", err, custodian.KindConflict)
	a.SetExportCutHook(nil)
	man, err := export()
	if err != nil || man.Counts["claims"] != 4 || !slices.ContainsFunc(man.LossReport, func(l custodian.Loss) bool {
		return l.Record == claims[3].ID && l.Reason == custodian.StatusDeleted
	}) {
		t.Fatalf("the export after = %+v, %v, loss %+v; want 4 claims (home.during in, the erased one listed deleted)", man.Counts, err, man.LossReport)
	}
}

// TestBackupPastItsCut: a backup holds the view only for its cut: a write
// made while it reads the claims goes through; a claim
// erased after the cut fails the backup.
func TestBackupPastItsCut(t *testing.T) {
	a := newTestService(t)
	gone := a.mustClaim("home.item0", 0).Claim
	a.mustClaim("home.item1", 1)
	a.SetExportCutHook(func() { a.mustClaim("home.during", "written while the backup ran") })
	if _, err := a.Export(t.Context(), a.owner); err != nil {
		t.Fatalf("a backup with a write past its cut = %v", err)
	}
	a.SetExportCutHook(func() {
		if _, err := a.DeleteClaim(t.Context(), a.owner, gone.ID); err != nil {
			t.Errorf("DeleteClaim past the cut = %v", err)
		}
	})
	_, err := a.Export(t.Context(), a.owner)
	wantKind(t, "a backup whose claim was erased past its cut", err, custodian.KindConflict)
	a.SetExportCutHook(nil)
	if _, err := a.Export(t.Context(), a.owner); err != nil {
		t.Fatalf("the backup after = %v", err)
	}
}
