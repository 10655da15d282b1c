package custodian_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/bundle"
	"github.com/phc-project/phc/internal/httpapi"
)

func withCards(c *custodian.Config) { c.Cards = bundle.Codec{} }

// pinEach makes a and b pin each other's cards, and returns b's card.
func pinEach(t *testing.T, a, b *testService) json.RawMessage {
	t.Helper()
	ca, err := a.OwnCard(t.Context(), a.owner)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.OwnCard(t.Context(), b.owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PinCustodian(t.Context(), b.owner, custodian.CardInput{Card: mustJSON(t, ca)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PinCustodian(t.Context(), a.owner, custodian.CardInput{Card: mustJSON(t, cb)}); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, cb)
}

// mustExport makes a's bundle of everything for the custodian of card.
func mustExport(t *testing.T, a *testService, card json.RawMessage) []byte {
	t.Helper()
	sealed, _, err := a.ExportBundle(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": card})))
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

// TestExportBundle: A's bundle for B holds every version of every claim
// that may leave, personas, summaries whose parents travel and the
// producers; no_export, source_controlled and third_party claims, and a
// summary of one, stay behind and are named in the loss report; nothing of
// grants, consumers or tokens is in it; only B opens it.
func TestExportBundle(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	c := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("work")
	kept := a.mustClaim("work.lang", "Go", "work").Claim
	if _, err := a.Correct(t.Context(), a.owner, kept.ID, input[custodian.CorrectionInput](a, []byte(`{"value":"Go and Rust"}`))); err != nil {
		t.Fatal(err)
	}
	stays := map[string]string{}
	for _, r := range []string{
		`{"type":"no_export","mandatory":true}`,
		`{"type":"source_controlled","mandatory":true,"holder":"Example Corp"}`,
		`{"type":"third_party","mandatory":false,"holder":"a friend"}`,
	} {
		var rs map[string]any
		json.Unmarshal([]byte(r), &rs)
		pr := a.mustPropose(a.owner, proposal(t, "work.r"+rs["type"].(string), "secret value", map[string]any{"restrictions": []any{rs}}))
		w := a.mustConfirm(pr.ProposalID, "work")
		stays[w.Claim.ID] = rs["type"].(string)
	}
	var leaving string
	for id := range stays {
		leaving = id
		break
	}
	sumKept := a.mustSummary(a.owner, "a summary", "", kept.ID+"@2")
	sumLost := a.mustSummary(a.owner, "a summary of what stays", "", kept.ID+"@2", leaving+"@1")
	a.mustConsumer("tutor")

	sealed, man, err := a.ExportBundle(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": json.RawMessage(cardB)})))
	if err != nil {
		t.Fatal(err)
	}
	// Quoted, as they would be in leaked JSON: base64url ciphertext has no
	// quotes, but may spell "tok_" or "tutor" by chance.
	for _, leak := range []string{`"secret value"`, `"tutor"`, `"grt_`, `"tok_`} {
		if strings.Contains(string(sealed), leak) {
			t.Fatalf("the sealed bundle shows %q", leak)
		}
	}
	m, recs, err := b.ReadBundle(b.owner, sealed)
	if err != nil {
		t.Fatalf("B reads A's bundle: %v", err)
	}
	if m.BundleID != man.BundleID || m.BundleVersion != "0.1" || !strings.HasPrefix(m.BundleID, "bnd_") {
		t.Fatalf("manifest = %+v", m)
	}
	if len(recs.Claims) != 1 || recs.Claims[0].ID != kept.ID || len(recs.Claims[0].Versions) != 2 || !slices.Equal(recs.Claims[0].Personas, []string{"work"}) {
		t.Fatalf("claims = %+v", recs.Claims)
	}
	if len(recs.Summaries) != 1 || recs.Summaries[0].ID != sumKept.ID {
		t.Fatalf("summaries = %+v", recs.Summaries)
	}
	lost := map[string]string{}
	for _, l := range m.LossReport {
		lost[l.Record] = l.Reason
		if strings.Contains(l.Reason, "secret value") {
			t.Fatalf("the loss report shows a value: %+v", l)
		}
	}
	for id, why := range stays {
		if !strings.HasPrefix(lost[id], why) {
			t.Errorf("loss report for %s = %q, want %s", id, lost[id], why)
		}
	}
	// The summary of a claim that stays carries that claim's restriction
	// (or, without it, "a parent stays behind").
	if lost[sumLost.ID] == "" || len(lost) != 4 {
		t.Errorf("loss report = %+v", m.LossReport)
	}
	if m.Counts["claims"] != 1 || m.Counts["versions"] != 2 || m.Counts["lost"] != 4 || len(recs.Identities) == 0 {
		t.Errorf("counts = %v, identities %v", m.Counts, recs.Identities)
	}
	// Only the owner exports; only the recipient reads; its own card is no recipient.
	if _, _, err := c.ReadBundle(c.owner, sealed); err == nil {
		t.Fatal("a third custodian read the bundle")
	}
	ownA, _ := a.OwnCard(t.Context(), a.owner)
	_, _, err = a.ExportBundle(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": ownA})))
	wantKind(t, "export to the own card", err, custodian.KindInvalid)
	_, _, err = a.ExportBundle(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": json.RawMessage(cardB), "personas": []string{"nope"}})))
	wantKind(t, "export of an unknown persona", err, custodian.KindInvalid)
	// A bundle from a custodian B has not pinned is refused.
	if _, err := b.UnpinCustodian(t.Context(), b.owner, m.Source.CustodianID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.ReadBundle(b.owner, sealed); err == nil || !strings.Contains(err.Error(), "not pinned") {
		t.Fatalf("ReadBundle from an unpinned custodian = %v", err)
	}
}

// TestImportBundleQuarantine: B imports A's bundle into the quarantine: a
// recipient of B with a grant on everything reads nothing of it (context,
// counts); the owner sees each record with its problems; the same bundle
// again is a conflict, a damaged one invalid; reject drops records.
func TestImportBundleQuarantine(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("work")
	a.mustClaim("work.lang", "Go", "work")
	a.mustClaim("work.editor", "vim", "work")
	b.mustClaim("work.editor", "emacs")
	b.mustConsumer("reader")
	b.mustGrant(grantSpec{recipient: "reader", ops: []string{"read"}, keys: []string{"*"}})
	reader := b.mustPrincipal("reader", "*", "read")
	before, err := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"})
	if err != nil {
		t.Fatal(err)
	}
	statusBefore := b.Status(t.Context(), b.owner)

	sealed := mustExport(t, a, cardB)
	_, err = b.ImportBundle(t.Context(), reader, custodian.ImportBundleInput{Bundle: sealed})
	wantKind(t, "import by a recipient", err, custodian.KindSessionRequired)
	rep, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
	if err != nil {
		if e, ok := err.(*custodian.Error); ok {
			t.Fatalf("%v: %+v", err, e.Violations)
		}
		t.Fatal(err)
	}
	// Two claims and the persona "work".
	if rep.Counts[custodian.StatusQuarantined] != 3 || len(rep.Records) != 3 {
		t.Fatalf("import report = %+v", rep)
	}
	problems := map[string][]string{}
	for _, r := range rep.Records {
		problems[r.Key] = r.Problems
		if r.Body != nil {
			t.Fatal("the report carries record bodies")
		}
	}
	if !slices.ContainsFunc(problems["work.editor"], func(p string) bool { return strings.HasPrefix(p, "conflicts with active claim") }) {
		t.Errorf("work.editor problems = %v, want a conflict", problems["work.editor"])
	}
	if !slices.ContainsFunc(problems["work.lang"], func(p string) bool { return strings.HasPrefix(p, "identity unmapped: foreign:cus_") }) {
		t.Errorf("work.lang problems = %v, want a foreign identity", problems["work.lang"])
	}
	after, err := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"})
	if err != nil || !slices.Equal(after, before) {
		t.Fatalf("the reader's context after the import = %v, %v; before %v", after, err, before)
	}
	if st := b.Status(t.Context(), b.owner); *st.FieldCount != *statusBefore.FieldCount {
		t.Fatalf("field count after the import = %d, before %d", *st.FieldCount, *statusBefore.FieldCount)
	}
	_, err = b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
	wantKind(t, "the same bundle again", err, custodian.KindConflict)
	damaged := append([]byte{}, sealed...)
	damaged[len(damaged)/3] ^= 1
	_, err = b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: damaged})
	wantKind(t, "a damaged bundle", err, custodian.KindInvalid)

	page, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{})
	list := page.Records
	if err != nil || len(list) != 3 || page.Total != 3 {
		t.Fatalf("ListQuarantine = %v, %v", page, err)
	}
	p1, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{Limit: 2})
	if err != nil || len(p1.Records) != 2 || p1.NextCursor == "" {
		t.Fatalf("first page = %+v, %v", p1, err)
	}
	p2, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{Limit: 2, Cursor: p1.NextCursor})
	if err != nil || len(p2.Records) != 1 || p2.NextCursor != "" || p2.Records[0].ID == p1.Records[0].ID {
		t.Fatalf("second page = %+v, %v", p2, err)
	}
	conflicts, err := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{Problem: "conflicts with"})
	if err != nil || len(conflicts.Records) != 1 || conflicts.Records[0].Key != "work.editor" {
		t.Fatalf("records with a conflict = %+v, %v", conflicts, err)
	}
	// The owner reviews the difference: the held value and the one here.
	if c := conflicts.Records[0]; string(c.Value) != `"vim"` || c.Here == nil || string(c.Here.Value) != `"emacs"` || c.Body != nil {
		t.Fatalf("the conflict as reviewed: value %s, here %+v", c.Value, c.Here)
	}
	if _, err := b.ListQuarantine(t.Context(), reader, custodian.QuarantineQuery{}); err == nil {
		t.Fatal("a recipient listed the quarantine")
	}
	if n, _, err := b.RejectQuarantined(t.Context(), b.owner, []string{list[0].ID}, false); err != nil || n != 1 {
		t.Fatalf("reject one = %d, %v", n, err)
	}
	_, _, err = b.RejectQuarantined(t.Context(), b.owner, []string{list[0].ID}, false)
	wantKind(t, "reject again", err, custodian.KindNotFound)
	if n, _, err := b.RejectQuarantined(t.Context(), b.owner, nil, true); err != nil || n != 2 {
		t.Fatalf("reject all = %d, %v", n, err)
	}
}

// TestAdoptBundle: adopted claims become active on B in one revision with
// every version, the personas that exist on B, a foreign producer unless
// mapped, and no grant of A's: B's recipients read them through B's grants
// only.
func TestAdoptBundle(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("work")
	lang := a.mustClaim("work.lang", "Go", "work").Claim
	if _, err := a.Correct(t.Context(), a.owner, lang.ID, input[custodian.CorrectionInput](a, []byte(`{"value":"Go and Rust"}`))); err != nil {
		t.Fatal(err)
	}
	editor := a.mustClaim("work.editor", "vim", "work").Claim
	sum := a.mustSummary(a.owner, "a summary of lang", "", lang.ID+"@2")
	a.mustConsumer("tutor")
	a.mustGrant(grantSpec{recipient: "tutor", ops: []string{"read"}, keys: []string{"work.*"}})
	sealed := mustExport(t, a, cardB)
	rep, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
	if err != nil {
		t.Fatal(err)
	}
	// Held records live in the store, the view keeps an index of them:
	// after a restart they are listed in the same order, and adopted.
	heldIDs := func() (ids []string) {
		for q := (custodian.QuarantineQuery{Limit: 1}); ; {
			page, err := b.ListQuarantine(t.Context(), b.owner, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Records {
				ids = append(ids, r.ID+"/"+r.Key)
			}
			if q.Cursor = page.NextCursor; q.Cursor == "" {
				return ids
			}
		}
	}
	before := heldIDs()
	if err := b.Lock(t.Context(), b.owner); err != nil {
		t.Fatal(err)
	}
	b.unlock()
	if after := heldIDs(); len(before) != len(rep.Records) || !slices.Equal(after, before) {
		t.Fatalf("held after a restart: %v; before: %v", after, before)
	}
	b.mustPersona("work")
	b.mustConsumer("reader")
	reader := b.mustPrincipal("reader", "*", "read")
	if keys, _ := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"}); len(keys) != 0 {
		t.Fatalf("before adoption and any grant, the reader reads %v", keys)
	}
	var langQ string
	for _, r := range rep.Records {
		if r.Record == lang.ID {
			langQ = r.ID
		}
	}
	foreignOwner := "foreign:" + rep.Source + "/owner"
	_, _, err = counts(b.AdoptQuarantined(t.Context(), b.owner, langQ, custodian.AdoptInput{Identities: map[string]string{foreignOwner: "nobody"}}))
	wantKind(t, "a mapping to an unknown consumer", err, custodian.KindInvalid)
	_, _, err = counts(b.AdoptQuarantined(t.Context(), reader, langQ, custodian.AdoptInput{}))
	wantKind(t, "adopt by a recipient", err, custodian.KindSessionRequired)
	n, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, langQ, custodian.AdoptInput{Identities: map[string]string{foreignOwner: "owner"}}))
	if err != nil || n != 1 {
		t.Fatalf("adopt one = %d, %v", n, err)
	}
	// The editor claim, the persona "work" (B has one: kept) and the
	// summary of work.lang, whose parent was adopted before from the same
	// bundle.
	n, _, err = counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{All: true}))
	if err != nil || n != 3 {
		t.Fatalf("adopt all = %d, %v", n, err)
	}
	gotR, err := b.GetClaim(t.Context(), b.owner, lang.ID, "")
	got := gotR.Claim
	if err != nil || got.Version != 2 || string(got.Value) != `"Go and Rust"` || !slices.Equal(got.Personas, []string{"work"}) || got.Producer.Authenticated.Kind != "owner" {
		t.Fatalf("adopted claim = %+v, %v", got, err)
	}
	edR, err := b.GetClaim(t.Context(), b.owner, editor.ID, "")
	ed := edR.Claim
	if err != nil || ed.Producer.Authenticated.Kind != "custodian" || ed.Producer.Authenticated.Issuer != rep.Source {
		t.Fatalf("unmapped producer = %+v, %v", ed.Producer, err)
	}
	// No grant travelled: the reader still reads nothing; a grant of B's
	// owner opens exactly what it covers.
	if keys, _ := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"}); len(keys) != 0 {
		t.Fatalf("after adoption, without a grant on B, the reader reads %v", keys)
	}
	b.mustGrant(grantSpec{recipient: "reader", ops: []string{"read"}, keys: []string{"work.lang"}})
	if keys, _ := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"}); !slices.Equal(keys, []string{"work.lang"}) {
		t.Fatalf("with B's grant on work.lang, the reader reads %v", keys)
	}
	if page, _ := b.ListQuarantine(t.Context(), b.owner, custodian.QuarantineQuery{}); len(page.Records) != 0 {
		t.Fatalf("held after adopting all = %+v", page.Records)
	}
	gotSum, err := b.GetSummary(t.Context(), b.owner, sum.ID, "", 0)
	if err != nil || !slices.Equal(gotSum.Summary.DerivedFrom, []string{lang.ID + "@2"}) || gotSum.Summary.Origin != rep.BundleID {
		t.Fatalf("the summary adopted after its parent = %+v, %v", gotSum, err)
	}
	rep2, err := b.Check(t.Context(), b.owner)
	if err != nil || !rep2.OK {
		t.Fatalf("Check after adoption = %+v, %v", rep2, err)
	}
}

// FuzzQuarantineAdopt: no adopt body makes the service panic, and one it
// accepts with nothing held adopts nothing.
func FuzzQuarantineAdopt(f *testing.F) {
	ts := newTestService(f)
	f.Add([]byte(`{"all":true}`))
	f.Add([]byte(`{"ids":["qrn_AAAAAAAAAAAAAAAAAAAAAAAAAA"],"personas":["work"],"identities":{"foreign:cus_x/tutor":"owner"}}`))
	f.Add([]byte(`{"ids":[],"all":false}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in custodian.AdoptInput // decoded as the HTTP and web adapters do
		if err := ts.Decode("quarantine.adopt", raw, &in); err != nil {
			return
		}
		n, _, err := counts(ts.AdoptQuarantined(t.Context(), ts.owner, "", in))
		if err == nil && n != 0 {
			t.Fatalf("adopted %d records from an empty quarantine", n)
		}
	})
}

// TestAdoptBringsPersonasAndEntities: adopting everything on a custodian
// that has neither creates the bundle's personas and entities, and the
// claims about them land in them.
func TestAdoptBringsPersonasAndEntities(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	a.mustPersona("home")
	ent, err := a.CreateEntity(t.Context(), a.owner, input[custodian.EntityInput](a, []byte(`{"type": "person", "name": "Ana"}`)))
	if err != nil {
		t.Fatal(err)
	}
	a.mustClaim("home.plant", "fern", "home")
	sealed := mustExport(t, a, cardB)
	if _, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{All: true})); err != nil {
		t.Fatal(err)
	}
	ps, err := b.ListPersonas(t.Context(), b.owner)
	if err != nil || len(ps) != 1 || ps[0].ID != "home" {
		t.Fatalf("personas on B = %+v, %v", ps, err)
	}
	claims, err := b.ListClaims(t.Context(), b.owner, "", "")
	if err != nil {
		t.Fatal(err)
	}
	subjects := map[string]bool{}
	for _, c := range claims.Claims {
		subjects[c.Subject] = true
		if c.Key == "home.plant" && !slices.Equal(c.Personas, []string{"home"}) {
			t.Fatalf("home.plant personas on B = %v", c.Personas)
		}
	}
	if !subjects[ent.Entity.ID] {
		t.Fatalf("no claim about the entity %s on B: %v", ent.Entity.ID, subjects)
	}
	if rep, err := b.Check(t.Context(), b.owner); err != nil || !rep.OK {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
}

// TestBlockedRecord: a claim with an unknown mandatory restriction arrives
// blocked and no adopt makes it active until the owner removes that
// restriction, a receipted act of its own; an unknown advisory restriction
// is dropped and reported at import.
func TestBlockedRecord(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	pr := a.mustPropose(a.owner, proposal(t, "misc.future", "x", map[string]any{"restrictions": []any{
		map[string]any{"type": "x_future", "mandatory": true}, map[string]any{"type": "x_hint", "mandatory": false}}}))
	a.mustConfirm(pr.ProposalID)
	sealed := mustExport(t, a, cardB)
	rep, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 1 || rep.Records[0].Status != custodian.StatusBlocked || rep.Counts[custodian.StatusBlocked] != 1 {
		t.Fatalf("import report = %+v", rep)
	}
	if !slices.ContainsFunc(rep.LossReport, func(l custodian.Loss) bool { return l.Dropped == "restriction x_hint" }) {
		t.Fatalf("loss report = %+v, want x_hint dropped", rep.LossReport)
	}
	id := rep.Records[0].ID
	_, _, err = counts(b.AdoptQuarantined(t.Context(), b.owner, id, custodian.AdoptInput{}))
	wantKind(t, "adopt a blocked record", err, custodian.KindRestrictionBlocked)
	if n, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{All: true})); err != nil || n != 0 {
		t.Fatalf("adopt --all passing over a blocked record = %d, %v", n, err)
	}
	_, err = b.UnblockQuarantined(t.Context(), b.owner, id, custodian.UnblockInput{Remove: []string{"no_export"}})
	wantKind(t, "remove a known restriction", err, custodian.KindInvalid)
	q, err := b.UnblockQuarantined(t.Context(), b.owner, id, custodian.UnblockInput{Remove: []string{"x_future"}})
	if err != nil || q.Status != custodian.StatusQuarantined {
		t.Fatalf("unblock = %+v, %v", q, err)
	}
	if n, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, id, custodian.AdoptInput{})); err != nil || n != 1 {
		t.Fatalf("adopt after unblock = %d, %v", n, err)
	}
	ops := map[string]bool{}
	for _, r := range b.receipts() {
		ops[r.Operation] = true
	}
	for _, op := range []string{"import.bundle", "quarantine.unblock", "quarantine.adopt"} {
		if !ops[op] {
			t.Errorf("no %s receipt", op)
		}
	}
}

// TestHeldRecordsAnswerAsAbsent: for random bundles, imported and partly
// adopted, B's recipient with a grant on everything sees exactly B's own
// claims and the adopted ones — never a held one, whose field answers
// byte for byte as an absent key's.
func TestHeldRecordsAnswerAsAbsent(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	for _, ts := range []*testService{a, b} {
		if _, _, err := ts.PutSettings(t.Context(), ts.owner, input[custodian.SettingsInput](ts, []byte(`{"reads_per_minute": 10000000, "writes_per_minute": 10000000}`))); err != nil {
			t.Fatal(err)
		}
	}
	b.mustConsumer("reader")
	b.mustGrant(grantSpec{recipient: "reader", ops: []string{"read"}, keys: []string{"*"}, category: custodian.CategoryPersonalisation})
	readerTok := b.mustToken("reader", "*", "read")
	reader, err := b.Authenticate(t.Context(), readerTok)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(b.Service, nil))
	t.Cleanup(srv.Close)
	field := func(key string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/context/fields/"+key, nil)
		req.Header.Set("Authorization", "Bearer "+readerTok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	visible := map[string]bool{}
	b.mustClaim("own.k", "B's own")
	visible["own.k"] = true
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		persona := fmt.Sprintf("p%d", run)
		a.mustPersona(persona)
		var keys []string
		for i, n := 0, rapid.IntRange(1, 4).Draw(rt, "claims"); i < n; i++ {
			key := fmt.Sprintf("r%d.k%d", run, i)
			extra := map[string]any{}
			if rapid.Bool().Draw(rt, "restricted") {
				extra["restrictions"] = []any{map[string]any{"type": rapid.SampledFrom([]string{"no_export", "no_training", "x_unknown"}).Draw(rt, "rtype"), "mandatory": true}}
			}
			pr := a.mustPropose(a.owner, proposal(t, key, rapid.IntRange(0, 9).Draw(rt, "value"), extra))
			a.mustConfirm(pr.ProposalID, persona)
			keys = append(keys, key)
		}
		sealed, _, err := a.ExportBundle(t.Context(), a.owner, input[custodian.ExportInput](a, mustJSON(t, map[string]any{"to": json.RawMessage(cardB), "personas": []string{persona}})))
		if err != nil {
			rt.Fatal(err)
		}
		rep, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
		if err != nil {
			rt.Fatal(err)
		}
		check := func(when string) {
			got, err := b.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"})
			if err != nil {
				rt.Fatal(err)
			}
			want := slices.Sorted(maps.Keys(visible))
			if !slices.Equal(got, want) {
				rt.Fatalf("%s: the reader sees %v, want %v", when, got, want)
			}
			absentStatus, absentBody := field(fmt.Sprintf("r%d.absent", run))
			for _, k := range keys {
				if visible[k] {
					continue
				}
				st, body := field(k)
				if st != absentStatus || strings.ReplaceAll(body, k, "") != strings.ReplaceAll(absentBody, fmt.Sprintf("r%d.absent", run), "") {
					rt.Fatalf("%s: held %s answers %d %s; an absent key %d %s", when, k, st, body, absentStatus, absentBody)
				}
			}
		}
		check("after the import")
		var adopt []string
		for _, r := range rep.Records {
			if r.Kind == "claim" && r.Status == custodian.StatusQuarantined && rapid.Bool().Draw(rt, "adopt") {
				adopt = append(adopt, r.ID)
				visible[r.Key] = true
			}
		}
		if len(adopt) > 0 {
			if _, _, err := counts(b.AdoptQuarantined(t.Context(), b.owner, "", custodian.AdoptInput{IDs: adopt})); err != nil {
				rt.Fatal(err)
			}
		}
		check("after adopting some")
	})
}

// TestImportRefusals: each bundle B must refuse, over HTTP, with its
// status and constraint code.
func TestImportRefusals(t *testing.T) {
	b := newTestService(t, withCards)
	var codec bundle.Codec
	// A source whose keys the test holds, pinned on B, and one not pinned.
	newSource := func() ([]byte, custodian.Card) {
		keys, err := codec.NewKeys()
		if err != nil {
			t.Fatal(err)
		}
		card, err := codec.Card(keys, b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return keys, card
	}
	srcKeys, srcCard := newSource()
	strangerKeys, _ := newSource()
	if _, err := b.PinCustodian(t.Context(), b.owner, custodian.CardInput{Card: mustJSON(t, srcCard)}); err != nil {
		t.Fatal(err)
	}
	cardB, err := b.OwnCard(t.Context(), b.owner)
	if err != nil {
		t.Fatal(err)
	}
	_, otherCard := newSource()
	claim := func(extra map[string]any) map[string]any {
		c := map[string]any{"id": "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "version": 1, "key": "work.k", "value": "v", "subject": "self",
			"kind": "fact", "assertion": "reported", "confirmation": map[string]any{"status": "confirmed", "by": "owner"},
			"producer":    map[string]any{"authenticated": map[string]any{"kind": "owner", "id": "owner"}},
			"recorded_at": "2026-01-01T00:00:00Z", "sensitivity": "standard", "status": "active",
			"evidence": []any{}, "restrictions": []any{}, "personas": []any{}}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	payload := func(id string, to custodian.Card, c map[string]any) []byte {
		recs := mustJSON(t, map[string]any{"claims": []any{map[string]any{"id": c["id"], "personas": []string{}, "versions": []any{c}}},
			"personas": []any{}, "entities": []any{}, "summaries": []any{}, "identities": []any{}})
		sum := sha256.Sum256(recs)
		man := map[string]any{"bundle_version": "0.1", "bundle_id": id, "created_at": "2026-01-01T00:00:00Z",
			"source": map[string]any{"custodian_id": srcCard.CustodianID}, "recipient": map[string]any{"custodian_id": to.CustodianID},
			"counts": map[string]int{"claims": 1}, "loss_report": []any{}, "records_digest": "sha256:" + hex.EncodeToString(sum[:])}
		return mustJSON(t, map[string]any{"manifest": man, "records": json.RawMessage(recs)})
	}
	seal := func(keys []byte, to custodian.Card, p []byte) []byte {
		out, err := codec.Seal(keys, to, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	good := seal(srcKeys, cardB, payload("bnd_AAAAAAAAAAAAAAAAAAAAAAAAAA", cardB, claim(nil)))
	flipped := append([]byte{}, good...)
	flipped[len(flipped)/2] ^= 1
	srv := httptest.NewServer(httpapi.New(b.Service, nil))
	t.Cleanup(srv.Close)
	post := func(body []byte) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/phc/v1/import", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+b.ownerToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Constraint string `json:"constraint"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Constraint
	}
	if st, c := post(good); st != 201 {
		t.Fatalf("a good bundle = %d %s", st, c)
	}
	for _, tc := range []struct {
		name       string
		body       []byte
		status     int
		constraint string
	}{
		{"for another custodian", seal(srcKeys, otherCard, payload("bnd_BBBBBBBBBBBBBBBBBBBBBBBBBB", otherCard, claim(nil))), 400, "invalid_request"},
		{"naming another recipient inside", seal(srcKeys, cardB, payload("bnd_CCCCCCCCCCCCCCCCCCCCCCCCCC", otherCard, claim(nil))), 400, "invalid_request"},
		{"signed by an unpinned custodian", seal(strangerKeys, cardB, payload("bnd_DDDDDDDDDDDDDDDDDDDDDDDDDD", cardB, claim(nil))), 400, "invalid_request"},
		{"a flipped byte", flipped, 400, "invalid_request"},
		{"replayed", good, 409, "conflict"},
		{"smuggling a grant", seal(srcKeys, cardB, payload("bnd_EEEEEEEEEEEEEEEEEEEEEEEEEE", cardB, claim(map[string]any{"grant": map[string]any{"recipient": "x"}}))), 400, "schema_violation"},
		{"smuggling a token", seal(srcKeys, cardB, payload("bnd_FFFFFFFFFFFFFFFFFFFFFFFFFF", cardB, claim(map[string]any{"token": "ctxs_x"}))), 400, "schema_violation"},
		{"over the size limit", bytes.Repeat([]byte("a"), httpapi.MaxBundle+1), 413, "too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, c := post(tc.body); st != tc.status || c != tc.constraint {
				t.Fatalf("import = %d %s, want %d %s", st, c, tc.status, tc.constraint)
			}
		})
	}
}

// TestBlockedByAnEarlierVersion: an unknown mandatory restriction on any
// version blocks the record (adoption keeps every version); unblocking
// removes it from every version.
func TestBlockedByAnEarlierVersion(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	pr := a.mustPropose(a.owner, proposal(t, "misc.past", "x", map[string]any{"restrictions": []any{map[string]any{"type": "x_future", "mandatory": true}}}))
	c := a.mustConfirm(pr.ProposalID).Claim
	if _, err := a.Correct(t.Context(), a.owner, c.ID, input[custodian.CorrectionInput](a, []byte(`{"value":"y","restrictions":[]}`))); err != nil {
		t.Fatal(err)
	}
	sealed := mustExport(t, a, cardB)
	rep, err := b.ImportBundle(t.Context(), b.owner, custodian.ImportBundleInput{Bundle: sealed})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 1 || rep.Records[0].Status != custodian.StatusBlocked {
		t.Fatalf("import = %+v, want the record blocked by its first version", rep.Records)
	}
	q, err := b.UnblockQuarantined(t.Context(), b.owner, rep.Records[0].ID, custodian.UnblockInput{Remove: []string{"x_future"}})
	if err != nil || q.Status != custodian.StatusQuarantined || len(q.Problems) != 1 { // the foreign identity stays
		t.Fatalf("unblock = %+v, %v", q, err)
	}
}
