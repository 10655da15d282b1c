package custodian_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/bundle"
	"github.com/phc-project/phc/internal/httpapi"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
)

// handSource is a custodian whose keys the test holds, pinned on b, that
// makes bundles by hand — what a careless or hostile source can send — and
// talks to b over a real socket.
type handSource struct {
	t     *testing.T
	b     *testService
	keys  []byte
	card  custodian.Card
	cardB custodian.Card
	srv   *httptest.Server
}

func newHandSource(t *testing.T, b *testService) *handSource {
	t.Helper()
	var codec bundle.Codec
	keys, err := codec.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	card, err := codec.Card(keys, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PinCustodian(t.Context(), b.owner, custodian.CardInput{Card: mustJSON(t, card)}); err != nil {
		t.Fatal(err)
	}
	cardB, err := b.OwnCard(t.Context(), b.owner)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(b.Service, nil))
	t.Cleanup(srv.Close)
	return &handSource{t: t, b: b, keys: keys, card: card, cardB: cardB, srv: srv}
}

// version is version n of claim id: key at tier, with restrictions rs.
func (h *handSource) version(id string, n int, key, value, tier string, rs ...map[string]any) map[string]any {
	if rs == nil {
		rs = []map[string]any{}
	}
	return map[string]any{"id": id, "version": n, "key": key, "value": value, "subject": "self",
		"kind": "fact", "assertion": "reported", "confirmation": map[string]any{"status": "confirmed", "by": "owner"},
		"producer":    map[string]any{"authenticated": map[string]any{"kind": "owner", "id": "owner"}},
		"recorded_at": "2026-01-01T00:00:00Z", "sensitivity": tier, "status": "active",
		"evidence": []any{}, "restrictions": rs, "personas": []any{}}
}

// bundle seals a bundle for b of claims, each given as its versions.
func (h *handSource) bundle(claims ...[]map[string]any) []byte {
	h.t.Helper()
	return h.bundleWith(nil, claims...)
}

// bundleWith seals a bundle for b of summaries and claims.
func (h *handSource) bundleWith(summaries []any, claims ...[]map[string]any) []byte {
	h.t.Helper()
	if summaries == nil {
		summaries = []any{}
	}
	cs := []any{}
	for _, vs := range claims {
		cs = append(cs, map[string]any{"id": vs[0]["id"], "personas": []string{}, "versions": vs})
	}
	recs := mustJSON(h.t, map[string]any{"claims": cs, "personas": []any{}, "entities": []any{}, "summaries": summaries, "identities": []any{}})
	sum := sha256.Sum256(recs)
	id, err := identity.NewID("bnd_")
	if err != nil {
		h.t.Fatal(err)
	}
	man := map[string]any{"bundle_version": "0.1", "bundle_id": id, "created_at": "2026-01-01T00:00:00Z",
		"source": map[string]any{"custodian_id": h.card.CustodianID}, "recipient": map[string]any{"custodian_id": h.cardB.CustodianID},
		"counts": map[string]int{"claims": len(cs)}, "loss_report": []any{}, "records_digest": "sha256:" + hex.EncodeToString(sum[:])}
	out, err := bundle.Codec{}.Seal(h.keys, h.cardB, mustJSON(h.t, map[string]any{"manifest": man, "records": json.RawMessage(recs)}))
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// do sends a request to b with token, and returns the status and body.
func (h *handSource) do(method, path, token string, body []byte) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// importHeld imports sealed over HTTP and returns the quarantine's records
// by their id at the source, as the owner lists them.
func (h *handSource) importHeld(sealed []byte) map[string]custodian.QuarantineRecord {
	h.t.Helper()
	if st, body := h.do("POST", "/phc/v1/import", h.b.ownerToken, sealed); st != 201 {
		h.t.Fatalf("import = %d %s", st, body)
	}
	st, body := h.do("GET", "/phc/v1/quarantine", h.b.ownerToken, nil)
	var page custodian.QuarantinePage
	if st != 200 || json.Unmarshal(body, &page) != nil {
		h.t.Fatalf("GET /phc/v1/quarantine = %d %s", st, body)
	}
	out := map[string]custodian.QuarantineRecord{}
	for _, r := range page.Records {
		out[r.Record] = r
	}
	return out
}

func newClaimID(t *testing.T) string {
	t.Helper()
	id, err := identity.NewID("clm_")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBundleCannotLowerTier: a hand-made bundle sends identity.ssn at tier
// public. The quarantine shows it at this custodian's default for the key
// (critical), and says it raised it, before adoption; adopted, it is
// critical, and an approved app with no grant — which the owner's
// auto_grant of the public tier lets read public fields — reads nothing of
// it on any route. A claim of an ordinary key sent public is raised to
// that key's default (standard) alike.
func TestBundleCannotLowerTier(t *testing.T) {
	b := newTestService(t, withCards)
	h := newHandSource(t, b)
	b.mustConsumer("app")
	app := b.mustToken("app", "*", "read")
	b.ownerPut("misc.public", map[string]any{"value": "seen", "sensitivity": "public"})
	const ssn = "123-45-6789"
	id := newClaimID(t)
	colour := newClaimID(t)
	held := h.importHeld(h.bundle(
		[]map[string]any{h.version(id, 1, "identity.ssn", ssn, "public")},
		[]map[string]any{h.version(colour, 1, "misc.colour", "teal", "public")},
	))
	for src, want := range map[string]string{id: custodian.SensitivityCritical, colour: custodian.SensitivityStandard} {
		q := held[src]
		if q.Sensitivity != want || q.Status != custodian.StatusQuarantined ||
			!slices.Contains(q.Problems, "tier raised from public to "+want+", this custodian's default for the key") {
			t.Fatalf("held %s = %+v; want it shown at tier %s before adoption, the raise listed", q.Key, q, want)
		}
	}
	for _, src := range []string{id, colour} {
		if st, body := h.do("POST", "/phc/v1/quarantine/"+held[src].ID+"/adopt", h.b.ownerToken, nil); st != 200 {
			t.Fatalf("adopt = %d %s", st, body)
		}
	}
	got, err := b.GetClaim(t.Context(), b.owner, id, "")
	if err != nil || got.Claim.Sensitivity != custodian.SensitivityCritical {
		t.Fatalf("adopted identity.ssn = %+v, %v; want tier critical", got.Claim, err)
	}
	for _, path := range []string{"/context/fields/identity.ssn", "/context/fields", "/context/context", "/context/fields/category/identity",
		"/context/search?q=45-67", "/context/search?q=ssn", "/phc/v1/claims/" + id, "/phc/v1/context?purpose=assist", "/context/fields/misc.colour"} {
		st, body := h.do("GET", path, app, nil)
		if strings.Contains(string(body), ssn) || strings.Contains(string(body), id) || strings.Contains(string(body), "teal") {
			t.Errorf("GET %s as an app with no grant = %d %s: it reads an adopted claim sent public", path, st, body)
		}
	}
	// The app does read a public field of this custodian's own.
	if st, body := h.do("GET", "/context/fields/misc.public", app, nil); st != 200 || !strings.Contains(string(body), "seen") {
		t.Fatalf("GET /context/fields/misc.public as the app = %d %s; want the public field", st, body)
	}
}

// TestBundleRestrictionsUnion: a claim is adopted with the union of the
// restrictions of every version received: a later version that carries
// none does not lift an earlier one's, so an app granted for model
// training does not read a claim whose first version said no_training.
func TestBundleRestrictionsUnion(t *testing.T) {
	b := newTestService(t, withCards)
	h := newHandSource(t, b)
	b.mustConsumer("app")
	b.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"misc.*"}, category: custodian.CategoryModelTraining})
	app := b.mustToken("app", "*", "read")
	id := newClaimID(t)
	held := h.importHeld(h.bundle([]map[string]any{
		h.version(id, 1, "misc.colour", "teal", "standard", map[string]any{"type": "no_training", "mandatory": true}),
		h.version(id, 2, "misc.colour", "ochre", "standard"),
	}))
	q := held[id]
	if !slices.Equal(q.Restrictions, []string{"no_training"}) || q.Status != custodian.StatusQuarantined {
		t.Fatalf("held = %+v; want restrictions [no_training] shown before adoption", q)
	}
	if st, body := h.do("POST", "/phc/v1/quarantine/adopt", h.b.ownerToken, []byte(`{"ids":["`+q.ID+`"]}`)); st != 200 {
		t.Fatalf("adopt = %d %s", st, body)
	}
	got, err := b.GetClaim(t.Context(), b.owner, id, "")
	if err != nil || got.Claim.Version != 2 || len(got.Claim.Restrictions) != 1 || got.Claim.Restrictions[0].Type != "no_training" {
		t.Fatalf("adopted head = %+v, %v; want version 2 restricted no_training", got.Claim, err)
	}
	if st, body := h.do("GET", "/context/fields/misc.colour", app, nil); st != 404 || strings.Contains(string(body), "ochre") {
		t.Fatalf("GET /context/fields/misc.colour as an app granted for model training = %d %s; want 404", st, body)
	}
}

// TestBundleNeverSent: a claim carrying no_export, source_controlled or
// third_party — on its only version, or on an earlier one that a later one
// dropped — should never have left its source. Each is held blocked with
// the reason listed and its restrictions shown; no adopt takes it (one:
// restriction_blocked; all: passed over) and no unblock clears it; reject
// drops it.
func TestBundleNeverSent(t *testing.T) {
	b := newTestService(t, withCards)
	h := newHandSource(t, b)
	cases := map[string]struct {
		versions []map[string]any
		typ      string
	}{}
	for i, r := range []map[string]any{
		{"type": "no_export", "mandatory": true},
		{"type": "source_controlled", "mandatory": true, "holder": "Example Corp"},
		{"type": "third_party", "mandatory": false, "holder": "a friend"},
	} {
		typ := r["type"].(string)
		key := "misc.n" + string(rune('a'+i))
		one := newClaimID(t)
		cases[one] = struct {
			versions []map[string]any
			typ      string
		}{[]map[string]any{h.version(one, 1, key, "v", "standard", r)}, typ}
		two := newClaimID(t)
		cases[two] = struct {
			versions []map[string]any
			typ      string
		}{[]map[string]any{h.version(two, 1, key+"2", "v", "standard", r), h.version(two, 2, key+"2", "w", "standard")}, typ}
	}
	var claims [][]map[string]any
	for _, c := range cases {
		claims = append(claims, c.versions)
	}
	held := h.importHeld(h.bundle(claims...))
	for id, c := range cases {
		q := held[id]
		if q.Status != custodian.StatusBlocked || !slices.Contains(q.Restrictions, c.typ) ||
			!slices.ContainsFunc(q.Problems, func(p string) bool {
				return strings.Contains(p, "restriction "+c.typ+": it should never have left its source")
			}) {
			t.Errorf("held %s (%s, %d versions) = %+v; want it blocked, the reason listed", id, c.typ, len(c.versions), q)
			continue
		}
		st, body := h.do("POST", "/phc/v1/quarantine/"+q.ID+"/adopt", h.b.ownerToken, nil)
		if st != 403 || !strings.Contains(string(body), "restriction_blocked") {
			t.Errorf("adopt %s = %d %s; want 403 restriction_blocked", id, st, body)
		}
		st, body = h.do("POST", "/phc/v1/quarantine/"+q.ID+"/unblock", h.b.ownerToken, []byte(`{"remove":["`+c.typ+`"]}`))
		if st != 400 {
			t.Errorf("unblock %s of %s = %d %s; want 400", c.typ, id, st, body)
		}
	}
	if st, body := h.do("POST", "/phc/v1/quarantine/adopt", h.b.ownerToken, []byte(`{"all":true}`)); st != 200 || !strings.Contains(string(body), `"adopted":0`) {
		t.Fatalf("adopt all = %d %s; want nothing adopted", st, body)
	}
	for id := range cases {
		if _, err := b.GetClaim(t.Context(), b.owner, id, ""); custodian.KindOf(err) != custodian.KindNotFound {
			t.Errorf("claim %s is here: %v", id, err)
		}
	}
	if st, body := h.do("GET", "/phc/v1/quarantine?status=blocked", h.b.ownerToken, nil); st != 200 || strings.Count(string(body), `"status":"blocked"`) != len(cases) {
		t.Fatalf("blocked records = %d %s; want %d", st, body, len(cases))
	}
	if st, body := h.do("POST", "/phc/v1/quarantine/reject", h.b.ownerToken, []byte(`{"all":true}`)); st != 200 {
		t.Fatalf("reject all = %d %s", st, body)
	}
}

// serveHTTP serves ts's API on a real socket and returns a client of it.
func serveHTTP(t *testing.T, ts *testService) func(method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	srv := httptest.NewServer(httpapi.New(ts.Service, nil))
	t.Cleanup(srv.Close)
	h := &handSource{t: t, srv: srv}
	return h.do
}

// restrictedClaims makes on a one claim for each restriction that keeps a
// claim with its custodian, and one for each such restriction on an
// earlier version that a correction lifted (only no_export can be lifted
// locally), and returns their ids by value.
func restrictedClaims(t *testing.T, a *testService) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, r := range []map[string]any{
		{"type": "no_export", "mandatory": true},
		{"type": "source_controlled", "mandatory": true, "holder": "Example Corp"},
		{"type": "third_party", "mandatory": false, "holder": "a friend"},
	} {
		value := "kept-value-" + r["type"].(string)
		pr := a.mustPropose(a.owner, proposal(t, "misc.kept"+string(rune('a'+i)), value, map[string]any{"restrictions": []any{r}}))
		out[value] = a.mustConfirm(pr.ProposalID).Claim.ID
		if r["type"] != "no_export" {
			continue // it stays with the claim until deleted: no version lifts it
		}
		lifted := "lifted-value-" + r["type"].(string)
		pr = a.mustPropose(a.owner, proposal(t, "misc.lifted"+string(rune('a'+i)), "first", map[string]any{"restrictions": []any{r}}))
		id := a.mustConfirm(pr.ProposalID).Claim.ID
		w, err := a.Correct(t.Context(), a.owner, id, input[custodian.CorrectionInput](a, mustJSON(t, map[string]any{"value": lifted, "remove_restrictions": []any{r["type"]}})))
		if err != nil || len(w.Claim.Restrictions) != 0 {
			t.Fatalf("lifting %s = %+v, %v", r["type"], w.Claim.Restrictions, err)
		}
		out[lifted] = id
	}
	return out
}

// TestArchiveKeepsRestrictions: the owner's archive (phc backup) is a route
// out of the vault too. A claim restricted no_export, source_controlled or
// third_party — on any version — is sealed in it to this custodian's own
// keys: opened with the vault's password and Secret Key, the archive shows
// none of it; imported by another vault over HTTP, it is not held there and
// the answer lists it by id; nothing of it can be adopted. Restored into the
// custodian that made it, it comes back, restrictions and all.
func TestArchiveKeepsRestrictions(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	doA, doB := serveHTTP(t, a), serveHTTP(t, b)
	kept := restrictedClaims(t, a)
	plain := a.mustClaim("misc.plain", "travels").Claim.ID
	st, archive := doA("GET", "/context/export", a.ownerToken, nil)
	if st != 200 {
		t.Fatalf("export = %d %s", st, archive)
	}
	opened, err := vault.OpenArchive(archive, []byte(testPassword), a.secretKey)
	if err != nil {
		t.Fatal(err)
	}
	for value, id := range kept {
		if strings.Contains(string(opened), value) || strings.Contains(string(opened), `"id":"`+id+`"`) {
			t.Errorf("the archive, opened with the password and Secret Key, shows restricted claim %s", id)
		}
	}
	if !strings.Contains(string(opened), "travels") {
		t.Fatal("the archive lacks the unrestricted claim")
	}

	// Another vault: the unrestricted claim is held; the restricted ones
	// are not, and are listed.
	body := mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": a.secretKey})
	st, raw := doB("POST", "/context/import", b.ownerToken, body)
	var res custodian.ImportResult
	if st != 200 || json.Unmarshal(raw, &res) != nil {
		t.Fatalf("import into another vault = %d %s", st, raw)
	}
	lost := map[string]string{}
	for _, l := range res.LossReport {
		lost[l.Record] = l.Reason
	}
	for value, id := range kept {
		if !strings.Contains(lost[id], "stays with the custodian that made the archive") || strings.Contains(string(raw), value) {
			t.Errorf("restricted claim %s: loss report %q", id, lost[id])
		}
	}
	if res.Held != 1 {
		t.Fatalf("held = %d; want the one unrestricted claim", res.Held)
	}
	if st, raw := doB("POST", "/phc/v1/quarantine/adopt", b.ownerToken, []byte(`{"all":true}`)); st != 200 || !strings.Contains(string(raw), `"adopted":1`) {
		t.Fatalf("adopt all on the other vault = %d %s", st, raw)
	}
	if _, err := b.GetClaim(t.Context(), b.owner, plain, ""); err != nil {
		t.Fatalf("the unrestricted claim on the other vault: %v", err)
	}
	for _, id := range kept {
		if _, err := b.GetClaim(t.Context(), b.owner, id, ""); custodian.KindOf(err) != custodian.KindNotFound {
			t.Errorf("restricted claim %s reached the other vault: %v", id, err)
		}
	}

	// The same vault: replace erases every claim, and the restore brings
	// each back, restrictions and all.
	before := map[string]custodian.Claim{}
	for _, id := range kept {
		got, err := a.GetClaim(t.Context(), a.owner, id, "")
		if err != nil {
			t.Fatal(err)
		}
		before[id] = got.Claim
	}
	res = custodian.ImportResult{}
	body = mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "replace", "password": testPassword, "secret_key": a.secretKey})
	if st, raw := doA("POST", "/context/import", a.ownerToken, body); st != 200 || json.Unmarshal(raw, &res) != nil || res.Imported != len(kept)+1 || len(res.LossReport) != 0 {
		t.Fatalf("restore into the same vault = %d %s; want %d claims back", st, raw, len(kept)+1)
	}
	for _, id := range kept {
		got, err := a.GetClaim(t.Context(), a.owner, id, "")
		if err != nil || got.Claim.Version != before[id].Version || len(got.Claim.Restrictions) != len(before[id].Restrictions) {
			t.Errorf("restored %s = %+v, %v; want it as it was: %+v", id, got.Claim, err, before[id])
		}
	}
}

// TestOldArchiveNeverSent: an archive sealed with a restricted claim among
// its claims (as phc made them before, or by hand) is held blocked by
// another vault, the reason listed, and no adopt takes it.
func TestOldArchiveNeverSent(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	doB := serveHTTP(t, b)
	pr := a.mustPropose(a.owner, proposal(t, "misc.kept", "kept", map[string]any{"restrictions": []any{map[string]any{"type": "no_export", "mandatory": true}}}))
	id := a.mustConfirm(pr.ProposalID).Claim.ID
	got, err := a.GetClaim(t.Context(), a.owner, id, "")
	if err != nil {
		t.Fatal(err)
	}
	old := mustJSON(t, map[string]any{"format": "phc-export/1", "exported_at": "2026-01-01T00:00:00Z", "personas": []any{},
		"claims": []any{map[string]any{"personas": []string{}, "versions": []any{got.Claim}}}})
	archive, err := a.vault.SealArchive(old)
	if err != nil {
		t.Fatal(err)
	}
	body := mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": a.secretKey})
	if st, raw := doB("POST", "/context/import", b.ownerToken, body); st != 200 || !strings.Contains(string(raw), `"held":1`) {
		t.Fatalf("import = %d %s", st, raw)
	}
	st, raw := doB("GET", "/phc/v1/quarantine", b.ownerToken, nil)
	var page custodian.QuarantinePage
	if st != 200 || json.Unmarshal(raw, &page) != nil || len(page.Records) != 1 {
		t.Fatalf("quarantine = %d %s", st, raw)
	}
	q := page.Records[0]
	if q.Status != custodian.StatusBlocked || !slices.Equal(q.Restrictions, []string{"no_export"}) ||
		!slices.ContainsFunc(q.Problems, func(p string) bool { return strings.Contains(p, "should never have left its source") }) {
		t.Fatalf("held = %+v; want it blocked, the reason listed", q)
	}
	if st, raw := doB("POST", "/phc/v1/quarantine/"+q.ID+"/adopt", b.ownerToken, nil); st != 403 || !strings.Contains(string(raw), "restriction_blocked") {
		t.Fatalf("adopt = %d %s; want 403 restriction_blocked", st, raw)
	}
}

// TestBundleKeepsRestrictions: the bundle route. A claim restricted
// no_export, source_controlled or third_party — on its only version, or on
// an earlier one a correction lifted — stays behind, named in the loss
// report by id, never by value; the recipient gets nothing of it.
func TestBundleKeepsRestrictions(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	kept := restrictedClaims(t, a)
	a.mustClaim("misc.plain", "travels")
	sealed := mustExport(t, a, cardB)
	m, recs, err := b.ReadBundle(b.owner, sealed)
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]string{}
	for _, l := range m.LossReport {
		lost[l.Record] = l.Reason
	}
	body := string(mustJSON(t, recs))
	for value, id := range kept {
		if lost[id] == "" || strings.Contains(body, value) || strings.Contains(body, id) {
			t.Errorf("restricted claim %s: loss report %q; in the records: %v", id, lost[id], strings.Contains(body, id))
		}
	}
	if len(recs.Claims) != 1 {
		t.Fatalf("claims in the bundle = %d; want the one unrestricted", len(recs.Claims))
	}
}

// TestNothingLostQuietly: what does not travel, or does not arrive whole,
// is said. A bundle's loss report lists the retracted and deleted claims
// that stay behind; an unknown advisory restriction on an earlier version
// is dropped and listed by the import, as one on another vault's archive;
// written_by is mapped like the producer (foreign until mapped, never the
// owner here by default); a refused import — a damaged or replayed bundle,
// an archive with wrong credentials — leaves a deny receipt.
func TestNothingLostQuietly(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	doB := serveHTTP(t, b)
	retracted := a.mustClaim("misc.retracted", "r").Claim.ID
	if _, err := a.RetractClaim(t.Context(), a.owner, retracted); err != nil {
		t.Fatal(err)
	}
	deleted := a.mustClaim("misc.deleted", "d").Claim.ID
	if _, err := a.DeleteClaim(t.Context(), a.owner, deleted); err != nil {
		t.Fatal(err)
	}
	pr := a.mustPropose(a.owner, proposal(t, "misc.hinted", "h", map[string]any{"restrictions": []any{map[string]any{"type": "x_hint", "mandatory": false}}}))
	hinted := a.mustConfirm(pr.ProposalID).Claim.ID
	if _, err := a.Correct(t.Context(), a.owner, hinted, input[custodian.CorrectionInput](a, []byte(`{"value":"h2","remove_restrictions":["x_hint"]}`))); err != nil {
		t.Fatal(err)
	}
	mapped := a.mustClaim("misc.mapped", "m").Claim.ID
	sealed := mustExport(t, a, cardB)
	m, _, err := b.ReadBundle(b.owner, sealed)
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]string{}
	for _, l := range m.LossReport {
		lost[l.Record+" "+l.Dropped] = l.Reason
	}
	if lost[retracted+" claim"] != "retracted" || lost[deleted+" claim"] != "deleted" {
		t.Errorf("bundle loss report = %+v; want the retracted and the deleted claim", m.LossReport)
	}

	st, raw := doB("POST", "/phc/v1/import", b.ownerToken, sealed)
	var rep custodian.ImportReport
	if st != 201 || json.Unmarshal(raw, &rep) != nil {
		t.Fatalf("import = %d %s", st, raw)
	}
	if !slices.ContainsFunc(rep.LossReport, func(l custodian.Loss) bool { return l.Record == hinted && l.Dropped == "restriction x_hint" }) {
		t.Errorf("import loss report = %+v; want x_hint of %s's first version", rep.LossReport, hinted)
	}
	held := map[string]string{}
	for _, r := range rep.Records {
		held[r.Record] = r.ID
	}
	foreignOwner := "foreign:" + rep.Source + "/owner"
	if st, raw := doB("POST", "/phc/v1/quarantine/"+held[hinted]+"/adopt", b.ownerToken, nil); st != 200 {
		t.Fatalf("adopt = %d %s", st, raw)
	}
	if st, raw := doB("POST", "/phc/v1/quarantine/"+held[mapped]+"/adopt", b.ownerToken, mustJSON(t, map[string]any{"identities": map[string]string{foreignOwner: "owner"}})); st != 200 {
		t.Fatalf("adopt mapped = %d %s", st, raw)
	}
	for id, want := range map[string]string{hinted: foreignOwner, mapped: custodian.WrittenByUser} {
		got, err := b.GetClaim(t.Context(), b.owner, id, "")
		if err != nil || got.Claim.WrittenBy != want {
			t.Errorf("adopted %s written_by = %q, %v; want %q", id, got.Claim.WrittenBy, err, want)
		}
	}
	vs, err := b.Versions(t.Context(), b.owner, hinted)
	if err != nil || len(vs.Claims) != 2 {
		t.Fatalf("versions of %s = %+v, %v", hinted, vs, err)
	}
	for _, v := range vs.Claims {
		if slices.ContainsFunc(v.Restrictions, func(r custodian.Restriction) bool { return r.Type == "x_hint" }) {
			t.Errorf("the dropped x_hint is still on version %d: %+v", v.Version, v.Restrictions)
		}
	}

	// Another vault's archive: an unknown advisory restriction dropped is
	// listed too.
	pr = a.mustPropose(a.owner, proposal(t, "misc.archived", "x", map[string]any{"restrictions": []any{map[string]any{"type": "x_hint", "mandatory": false}}}))
	archived := a.mustConfirm(pr.ProposalID).Claim.ID
	archive, err := a.Export(t.Context(), a.owner)
	if err != nil {
		t.Fatal(err)
	}
	body := mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": a.secretKey})
	var res custodian.ImportResult
	if st, raw := doB("POST", "/context/import", b.ownerToken, body); st != 200 || json.Unmarshal(raw, &res) != nil ||
		!slices.ContainsFunc(res.LossReport, func(l custodian.Loss) bool { return l.Record == archived && l.Dropped == "restriction x_hint" }) {
		t.Errorf("import of another vault's archive = %d %s; want x_hint of %s in its loss report", st, raw, archived)
	}

	// Refusals leave receipts.
	damaged := append([]byte{}, sealed...)
	damaged[len(damaged)/3] ^= 1
	for _, tc := range []struct {
		path       string
		body       []byte
		status     int
		constraint string
	}{
		{"/phc/v1/import", sealed, 409, "conflict"},
		{"/phc/v1/import", damaged, 400, "invalid_request"},
		{"/context/import", mustJSON(t, map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": "not the password", "secret_key": a.secretKey}), 401, "unauthenticated"},
	} {
		before := len(b.receipts())
		if st, raw := doB("POST", tc.path, b.ownerToken, tc.body); st != tc.status {
			t.Fatalf("POST %s = %d %s; want %d", tc.path, st, raw, tc.status)
		}
		rs := b.receipts()
		if len(rs) != before+1 || rs[len(rs)-1].Decision != "deny" || rs[len(rs)-1].Constraint != tc.constraint {
			t.Errorf("POST %s refused %s: receipts after = %+v", tc.path, tc.constraint, rs[before:])
		}
	}
}

// TestDisputedArrivesDisputed: a claim its owner disputed travels by
// bundle disputed, the quarantine says so, and adopted it is disputed here:
// a recipient reads it with confirmation "disputed", never without.
func TestDisputedArrivesDisputed(t *testing.T) {
	a := newTestService(t, withCards)
	b := newTestService(t, withCards)
	cardB := pinEach(t, a, b)
	doB := serveHTTP(t, b)
	id := a.mustClaim("misc.doubt", "maybe").Claim.ID
	if _, err := a.DisputeClaim(t.Context(), a.owner, id); err != nil {
		t.Fatal(err)
	}
	st, raw := doB("POST", "/phc/v1/import", b.ownerToken, mustExport(t, a, cardB))
	var rep custodian.ImportReport
	if st != 201 || json.Unmarshal(raw, &rep) != nil || len(rep.Records) != 1 {
		t.Fatalf("import = %d %s", st, raw)
	}
	q := rep.Records[0]
	if !slices.Contains(q.Problems, "disputed at its source: it is adopted disputed") {
		t.Errorf("held = %+v; want it shown disputed", q)
	}
	if st, raw := doB("POST", "/phc/v1/quarantine/"+q.ID+"/adopt", b.ownerToken, nil); st != 200 {
		t.Fatalf("adopt = %d %s", st, raw)
	}
	// Disputed after a reload from the store too.
	if err := b.Lock(t.Context(), b.owner); err != nil {
		t.Fatal(err)
	}
	b.unlock()
	doB = serveHTTP(t, b)
	got, err := b.GetClaim(t.Context(), b.owner, id, "")
	if err != nil || got.Claim.Confirmation.Status != custodian.ConfirmationDisputed {
		t.Fatalf("adopted = %+v, %v; want it disputed", got.Claim.Confirmation, err)
	}
	b.mustConsumer("app")
	b.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"misc.*"}, category: custodian.CategoryPersonalisation})
	app := b.mustToken("app", "*", "read")
	if st, raw := doB("GET", "/context/fields/misc.doubt", app, nil); st != 200 || !strings.Contains(string(raw), `"disputed"`) {
		t.Fatalf("GET /context/fields/misc.doubt as a granted app = %d %s; want it disputed", st, raw)
	}
	// The owner settles it here as any dispute.
	if _, err := b.WithdrawDispute(t.Context(), b.owner, id); err != nil {
		t.Fatalf("withdraw the dispute here: %v", err)
	}
	if got, err := b.GetClaim(t.Context(), b.owner, id, ""); err != nil || got.Claim.Confirmation.Status == custodian.ConfirmationDisputed {
		t.Fatalf("after the dispute was withdrawn here = %+v, %v", got.Claim.Confirmation, err)
	}
}

// TestArchiveWithoutKeys: a custodian built without a card codec has no
// keys to seal what may never leave it: its archive leaves such a claim
// out, and a restore lists it as lost rather than dropping it quietly.
func TestArchiveWithoutKeys(t *testing.T) {
	a := newTestService(t)
	pr := a.mustPropose(a.owner, proposal(t, "misc.kept", "kept-value", map[string]any{"restrictions": []any{map[string]any{"type": "no_export", "mandatory": true}}}))
	id := a.mustConfirm(pr.ProposalID).Claim.ID
	archive, err := a.Export(t.Context(), a.owner)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := vault.OpenArchive(archive, []byte(testPassword), a.secretKey)
	if err != nil || strings.Contains(string(opened), "kept-value") {
		t.Fatalf("the archive, opened, shows the no_export claim (%v)", err)
	}
	res, err := a.Import(t.Context(), a.owner, custodian.ImportInput{Archive: archive, Mode: "replace", Password: testPassword, SecretKey: a.secretKey})
	if err != nil || len(res.LossReport) != 1 || res.LossReport[0].Record != id {
		t.Fatalf("restore = %+v, %v; want %s listed as lost", res, err, id)
	}
}

// TestBundleNeverSentSummary: a summary carrying no_export should never
// have left its source either: held blocked, the reason listed, never
// adopted, even with its parent.
func TestBundleNeverSentSummary(t *testing.T) {
	a := newTestService(t)
	b := newTestService(t, withCards)
	h := newHandSource(t, b)
	parent := a.mustClaim("misc.parent", "p").Claim
	sm := a.mustSummary(a.owner, "a summary", "", parent.ID+"@1")
	sm.Restrictions = []custodian.Restriction{{Type: "no_export", Mandatory: true}}
	sm.Origin = ""
	held := h.importHeld(h.bundleWith([]any{sm}, []map[string]any{h.version(parent.ID, 1, "misc.parent", "p", "standard")}))
	q := held[sm.ID]
	if q.Status != custodian.StatusBlocked || !slices.Equal(q.Restrictions, []string{"no_export"}) ||
		!slices.ContainsFunc(q.Problems, func(p string) bool {
			return strings.Contains(p, "restriction no_export: it should never have left its source")
		}) {
		t.Fatalf("held summary = %+v; want it blocked, the reason listed", q)
	}
	if st, raw := h.do("POST", "/phc/v1/quarantine/adopt", b.ownerToken, []byte(`{"ids":["`+held[parent.ID].ID+`","`+q.ID+`"]}`)); st != 403 || !strings.Contains(string(raw), "restriction_blocked") {
		t.Fatalf("adopt the summary with its parent = %d %s; want 403 restriction_blocked", st, raw)
	}
	if st, raw := h.do("POST", "/phc/v1/quarantine/adopt", b.ownerToken, []byte(`{"all":true}`)); st != 200 || !strings.Contains(string(raw), `"adopted":1`) {
		t.Fatalf("adopt all = %d %s; want the parent alone", st, raw)
	}
}
