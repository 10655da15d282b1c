package quarantine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/quarantine"
)

const (
	source    = "cus_AAAAAAAAAAAAAAAAAAAAAAAAAA"
	recipient = "cus_BBBBBBBBBBBBBBBBBBBBBBBBBB"
	bundleID  = "bnd_CCCCCCCCCCCCCCCCCCCCCCCCCC"
)

// payload is a bundle's signed content as phc's export writes it, with
// records recs and the manifest changed by edit.
func payload(t testing.TB, recs string, edit func(*quarantine.Manifest)) []byte {
	t.Helper()
	m := quarantine.Manifest{BundleVersion: quarantine.BundleVersion, BundleID: bundleID,
		Source: quarantine.CustodianRef{CustodianID: source}, Recipient: quarantine.CustodianRef{CustodianID: recipient},
		Counts: map[string]int{}, LossReport: []quarantine.Loss{}, RecordsDigest: quarantine.Digest([]byte(recs))}
	if edit != nil {
		edit(&m)
	}
	out, err := json.Marshal(quarantine.Payload{Manifest: m, Records: json.RawMessage(recs)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const records = `{"claims":[{"id":"clm_DDDDDDDDDDDDDDDDDDDDDDDDDD","personas":["work"],"versions":[{"id":"clm_DDDDDDDDDDDDDDDDDDDDDDDDDD"}]}],` +
	`"personas":[],"entities":[],"summaries":[],"identities":[{"source_issuer":"phc:consumer","source_id":"tutor","display":"consumer:tutor"}]}`

func TestOpen(t *testing.T) {
	m, raw, err := quarantine.Open(payload(t, records, nil), source, recipient)
	if err != nil {
		t.Fatalf("Open of a well-formed payload: %v", err)
	}
	if m.BundleID != bundleID || string(raw) != records {
		t.Fatalf("Open = %+v, %s", m, raw)
	}
	recs, err := quarantine.ParseRecords(raw)
	if err != nil || len(recs.Claims) != 1 || len(recs.Claims[0].Versions) != 1 || recs.Identities[0].SourceID != "tutor" {
		t.Fatalf("ParseRecords = %+v, %v", recs, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"not json", []byte(`{`), "not a manifest and records"},
		{"extra member", []byte(`{"manifest":{},"records":{},"x":1}`), "not a manifest and records"},
		{"version", payload(t, records, func(m *quarantine.Manifest) { m.BundleVersion = "0.3" }), "bundle_version 0.3 is not one"},
		{"parts version without a part", payload(t, records, func(m *quarantine.Manifest) { m.BundleVersion = "0.2" }), "does not match the payload's parts"},
		{"source", payload(t, records, func(m *quarantine.Manifest) { m.Source.CustodianID = recipient }), "another source than the signature"},
		{"recipient", payload(t, records, func(m *quarantine.Manifest) { m.Recipient.CustodianID = source }), "for another custodian"},
		{"bundle id", payload(t, records, func(m *quarantine.Manifest) { m.BundleID = "bnd_x" }), "bundle_id is malformed"},
		{"digest", payload(t, records, func(m *quarantine.Manifest) { m.RecordsDigest = quarantine.Digest([]byte("{}")) }), "records_digest does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := quarantine.Open(tt.payload, source, recipient)
			var qe *quarantine.Error
			if !errors.As(err, &qe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v; want a *quarantine.Error saying %q", err, tt.want)
			}
		})
	}
	if _, err := quarantine.ParseRecords([]byte(`{"claims":[],"grants":[]}`)); err == nil {
		t.Fatal("ParseRecords accepted a member a bundle never has (grants)")
	}
}

func TestJudgeClaim(t *testing.T) {
	known := func(t string) bool { return t == "no_export" }
	v := quarantine.JudgeClaim("clm_1", []quarantine.Version{
		{Version: 1, Restrictions: []quarantine.Restriction{{Type: "x_old", Mandatory: true}, {Type: "x_gone"}}},
		{Version: 2, Restrictions: []quarantine.Restriction{{Type: "no_export", Mandatory: true}, {Type: "x_hint"}, {Type: "x_must", Mandatory: true}, {Type: "x_gone"}}},
	}, known)
	want := quarantine.Verdict{
		Blocked:  true,
		Problems: []string{"blocked: unknown mandatory restriction x_old (version 1)", "blocked: unknown mandatory restriction x_must"},
		// An advisory restriction of an earlier version is in the union
		// adopted too: dropped, and reported once.
		Drop: map[string]bool{"x_gone": true, "x_hint": true},
		Loss: []quarantine.Loss{
			{Record: "clm_1", Dropped: "restriction x_gone", Reason: "unknown advisory restriction"},
			{Record: "clm_1", Dropped: "restriction x_hint", Reason: "unknown advisory restriction"},
		},
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Fatalf("JudgeClaim (-want +got):\n%s", diff)
	}
	if got := quarantine.Unblocked(v.Problems, []string{"x_old"}); !slices.Equal(got, v.Problems[1:]) {
		t.Fatalf("Unblocked(x_old) = %q; want %q", got, v.Problems[1:])
	}
	if got := quarantine.Blocking([]quarantine.Restriction{{Type: "x_must", Mandatory: true}, {Type: "x_hint"}, {Type: "no_export", Mandatory: true}}, known); !slices.Equal(got, v.Problems[1:]) {
		t.Fatalf("Blocking = %q; want %q", got, v.Problems[1:])
	}
}

// TestNeverSent: a restriction that keeps a record with its source, on any
// version, is a problem once per type; no unblock settles it.
func TestNeverSent(t *testing.T) {
	stays := func(t string) bool { return t == "no_export" || t == "third_party" }
	got := quarantine.NeverSent([]quarantine.Version{
		{Version: 1, Restrictions: []quarantine.Restriction{{Type: "third_party"}, {Type: "no_training", Mandatory: true}}},
		{Version: 2, Restrictions: []quarantine.Restriction{{Type: "no_export", Mandatory: true}, {Type: "third_party"}}},
	}, stays)
	want := []string{
		"blocked: restriction third_party: it should never have left its source (version 1)",
		"blocked: restriction no_export: it should never have left its source (version 2)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("NeverSent = %q; want %q", got, want)
	}
	if left := quarantine.Unblocked(got, []string{"no_export", "third_party"}); !slices.Equal(left, got) {
		t.Fatalf("Unblocked settled %q", slices.DeleteFunc(got, func(p string) bool { return slices.Contains(left, p) }))
	}
	if got := quarantine.NeverSent([]quarantine.Version{{Version: 1}}, stays); got != nil {
		t.Fatalf("NeverSent of an unrestricted claim = %q", got)
	}
}

func TestIdentities(t *testing.T) {
	ids := quarantine.MapIdentities(source, []quarantine.IdentityRef{{SourceIssuer: "phc:consumer", SourceID: "tutor", Display: "consumer:tutor"}})
	if got, want := ids.Problem("consumer:tutor"), "identity unmapped: foreign:"+source+"/tutor"; got != want {
		t.Fatalf("Problem = %q; want %q", got, want)
	}
	if got := ids.Problem("owner:owner"); got != "" {
		t.Fatalf("Problem of an identity the source did not list = %q", got)
	}
}

// FuzzOpen: no payload makes Open or ParseRecords panic, and one Open
// accepts has the digest its manifest names.
func FuzzOpen(f *testing.F) {
	f.Add(payload(f, records, nil))
	f.Add(payload(f, `{}`, nil))
	f.Add([]byte(`{"manifest":null,"records":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, recs, err := quarantine.Open(raw, source, recipient)
		if err != nil {
			return
		}
		if m.RecordsDigest != quarantine.Digest(recs) || m.Recipient.CustodianID != recipient {
			t.Fatalf("Open accepted %+v", m)
		}
		_, _ = quarantine.ParseRecords(recs)
	})
}

func TestIndex(t *testing.T) {
	x := quarantine.NewIndex()
	// Loaded out of order, as a store's buckets list them.
	for _, h := range []*quarantine.Held{
		{ID: "qrn_B", Kind: "claim", Revision: 2, Status: quarantine.StatusBlocked, Problems: []string{"blocked: unknown mandatory restriction x"}},
		{ID: "qrn_A", Kind: "claim", Revision: 2, Status: quarantine.StatusQuarantined, Problems: []string{"conflicts with active claim clm_1"}},
		{ID: "qrn_C", Kind: "summary", Revision: 1, Status: quarantine.StatusQuarantined, Problems: []string{}},
	} {
		x.Add(h)
	}
	x.Sort()
	x.Hold(&quarantine.Held{ID: "qrn_E", Kind: "persona", Revision: 3, Status: quarantine.StatusQuarantined, Problems: []string{}})
	x.Hold(&quarantine.Held{ID: "qrn_D", Kind: "entity", Revision: 3, Status: quarantine.StatusQuarantined, Problems: []string{"identity unmapped: foreign:cus_X/tutor"}})

	pages := func(q quarantine.Query) (ids []string, total int) {
		for range 10 {
			sel := x.Select(q)
			ids, total = append(ids, sel.IDs...), sel.Total
			if sel.NextCursor == "" {
				return ids, total
			}
			q.Cursor = sel.NextCursor
		}
		t.Fatalf("%+v: pages never end", q)
		return nil, 0
	}
	for _, tc := range []struct {
		q     quarantine.Query
		ids   []string
		total int
	}{
		{quarantine.Query{Limit: 2}, []string{"qrn_C", "qrn_A", "qrn_B", "qrn_D", "qrn_E"}, 5},
		{quarantine.Query{Limit: 1, Problem: "conflicts"}, []string{"qrn_A"}, 1},
		{quarantine.Query{Status: quarantine.StatusBlocked}, []string{"qrn_B"}, 1},
		{quarantine.Query{Status: quarantine.StatusQuarantined, Limit: 3}, []string{"qrn_C", "qrn_A", "qrn_D", "qrn_E"}, 4},
		{quarantine.Query{Problem: "unmapped", Status: quarantine.StatusBlocked}, nil, 0},
	} {
		ids, total := pages(tc.q)
		if !slices.Equal(ids, tc.ids) || total != tc.total {
			t.Errorf("%+v: %v (total %d); want %v (total %d)", tc.q, ids, total, tc.ids, tc.total)
		}
	}
	if got := x.Adoptable(); !slices.Equal(got, []string{"qrn_E", "qrn_D", "qrn_A", "qrn_C"}) {
		t.Errorf("Adoptable = %v; want personas, entities, claims, summaries", got)
	}

	// A page's cursor survives records released and held again meanwhile:
	// nothing repeats, nothing that stayed is skipped.
	first := x.Select(quarantine.Query{Limit: 2})
	x.Release("qrn_C")
	x.Hold(&quarantine.Held{ID: "qrn_B", Kind: "claim", Revision: 4, Status: quarantine.StatusQuarantined, Problems: []string{}}) // unblocked
	rest, _ := pages(quarantine.Query{Limit: 2, Cursor: first.NextCursor})
	if !slices.Equal(rest, []string{"qrn_D", "qrn_E", "qrn_B"}) {
		t.Errorf("after %v: %v; want qrn_D, qrn_E, qrn_B", first.IDs, rest)
	}
	if e, ok := x.Get("qrn_B"); !ok || e.Blocked || e.Revision != 4 || e.Kind != "claim" {
		t.Errorf("Get(qrn_B) = %+v, %v", e, ok)
	}
	if _, total := pages(quarantine.Query{Status: quarantine.StatusBlocked}); total != 0 || x.Len() != 4 {
		t.Errorf("blocked total %d, len %d; want 0, 4", total, x.Len())
	}
	if got := x.IDs(); !slices.Equal(got, []string{"qrn_A", "qrn_B", "qrn_D", "qrn_E"}) {
		t.Errorf("IDs = %v", got)
	}
	// An offset cursor (of a version before the index) starts again.
	if sel := x.Select(quarantine.Query{Cursor: "100"}); len(sel.IDs) != 4 {
		t.Errorf("an old offset cursor selects %v; want every record again", sel.IDs)
	}
	q := quarantine.Query{Status: quarantine.StatusBlocked, Problem: "unknown"}
	if !q.Selects(&quarantine.Held{Status: quarantine.StatusBlocked, Problems: []string{"blocked: unknown mandatory restriction x"}}) ||
		q.Selects(&quarantine.Held{Status: quarantine.StatusQuarantined, Problems: []string{"blocked: unknown mandatory restriction x"}}) ||
		q.Selects(&quarantine.Held{Status: quarantine.StatusBlocked, Problems: []string{}}) {
		t.Error("Selects disagrees with the query's status and problem")
	}
	for _, q := range []quarantine.Query{{Status: "active"}, {Limit: 1001}, {Limit: -1}, {Cursor: "x"}, {Cursor: "-1"}, {Cursor: "3.clm_1"},
		{Problem: strings.Repeat("p", 257)}} {
		if q.Check() == nil {
			t.Errorf("Check(%+v) = nil; want a refusal", q)
		}
	}
}

// TestIndexChurn holds and releases many records and checks the index
// against a plain map: the order, the counts and the problem lists stay
// right as dead slots are compacted and problem lists reused.
func TestIndexChurn(t *testing.T) {
	x := quarantine.NewIndex()
	want := map[string]uint64{}
	rev := uint64(0)
	for round := range 30 {
		rev++
		for i := range 200 {
			id := fmt.Sprintf("qrn_%03d", (round*131+i*7)%500)
			pr := []string{fmt.Sprintf("conflicts with active claim clm_%d", i%3)}
			x.Hold(&quarantine.Held{ID: id, Kind: "claim", Revision: rev, Status: quarantine.StatusQuarantined, Problems: pr})
			want[id] = rev
		}
		for i := range 150 {
			id := fmt.Sprintf("qrn_%03d", (round*17+i*11)%500)
			x.Release(id)
			delete(want, id)
		}
	}
	ids, total := []string{}, 0
	for q := (quarantine.Query{Limit: 1000}); ; {
		sel := x.Select(q)
		ids, total = append(ids, sel.IDs...), sel.Total
		if q.Cursor = sel.NextCursor; q.Cursor == "" {
			break
		}
	}
	if len(ids) != len(want) || total != len(want) || x.Len() != len(want) {
		t.Fatalf("%d ids, total %d, len %d; want %d", len(ids), total, x.Len(), len(want))
	}
	for i, id := range ids {
		if e, _ := x.Get(id); e.Revision != want[id] || (i > 0 && want[ids[i-1]] > want[id]) {
			t.Fatalf("record %s at revision %d (want %d) out of order", id, e.Revision, want[id])
		}
	}
	n := 0
	for k := range 3 {
		n += x.Select(quarantine.Query{Problem: fmt.Sprintf("clm_%d", k)}).Total
	}
	if n != len(want) {
		t.Errorf("problem totals add up to %d; want %d", n, len(want))
	}
}

// memStore is a store of buckets in memory: the vault's journal and store
// for the tests of holding, reading, rejecting and adopting.
type memStore map[string]map[string][]byte

func (m memStore) Put(bucket, key string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if m[bucket] == nil {
		m[bucket] = map[string][]byte{}
	}
	m[bucket][key] = raw
}

func (m memStore) Del(bucket, key string) { delete(m[bucket], key) }

func (m memStore) Get(bucket, key string) ([]byte, bool, error) {
	raw, ok := m[bucket][key]
	return raw, ok, nil
}

// memVault is a vault of one memStore and its index.
type memVault struct {
	x     *quarantine.Index
	store memStore
}

func (v memVault) Index(fn func(x *quarantine.Index) error) error { return fn(v.x) }
func (v memVault) View(fn func(r quarantine.Reader) error) error  { return fn(v.store) }
func (v memVault) next() func() uint64                            { n := uint64(v.x.Len()) + 1; return func() uint64 { return n } }

// TestHoldReadRejectAdopt: records held are indexed and stored apart from
// their bodies, read back whole, rejected in one step or not at all, and
// adopted a chunk at a time in the order an adopt of all takes them.
func TestHoldReadRejectAdopt(t *testing.T) {
	v := memVault{x: quarantine.NewIndex(), store: memStore{}}
	held := []*quarantine.Held{
		{Kind: "claim", Record: "clm_1", Status: quarantine.StatusQuarantined, Problems: []string{}, Body: json.RawMessage(`{"versions":[1]}`)},
		{Kind: "persona", Record: "work", Status: quarantine.StatusQuarantined, Problems: []string{}, Body: json.RawMessage(`{"id":"work"}`)},
		{Kind: "claim", Record: "clm_2", Status: quarantine.StatusBlocked, Problems: []string{"blocked: x"}, Body: json.RawMessage(`{"versions":[2]}`)},
		{Kind: "claim", Record: "clm_3", Status: quarantine.StatusQuarantined, Problems: []string{}, Body: json.RawMessage(`{"versions":[3]}`)},
	}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	rev, err := quarantine.Hold(v.x, v.store, held, "bnd_X", "cus_Y", now, v.next())
	if err != nil || rev != 1 || v.x.Len() != 4 {
		t.Fatalf("Hold = %d, %v; %d indexed", rev, err, v.x.Len())
	}
	for _, h := range held {
		if !strings.HasPrefix(h.ID, "qrn_") || h.BundleID != "bnd_X" || h.Source != "cus_Y" || !h.ImportedAt.Equal(now) || h.Revision != 1 {
			t.Fatalf("held as %+v", h)
		}
		if strings.Contains(string(v.store[quarantine.BucketHeld][h.ID]), "versions") {
			t.Fatalf("the description of %s carries its body", h.ID)
		}
	}
	copies, err := quarantine.Read(v.store, []string{held[0].ID, "qrn_GONE"}, true)
	if c := copies[held[0].ID]; err != nil || len(copies) != 1 || string(c.Body) != `{"versions":[1]}` || c.Held.Record != "clm_1" || c.Revision != 1 {
		t.Fatalf("Read = %+v, %v", copies, err)
	}

	if _, err := quarantine.Reject(v.x, v.store, []string{held[2].ID, "qrn_GONE"}, false); !errors.Is(err, quarantine.ErrNotHeld) || v.x.Len() != 4 {
		t.Fatalf("Reject of one held and one not = %v, %d left; want ErrNotHeld and nothing released", err, v.x.Len())
	}

	var chunks [][]string
	err = quarantine.Adopt(v, nil, true, 2, func(ids []string, copies map[string]quarantine.Copy) error {
		var kinds []string
		for _, id := range ids {
			kinds = append(kinds, copies[id].Held.Kind+":"+copies[id].Held.Record)
			quarantine.Drop(v.x, v.store, id)
		}
		chunks = append(chunks, kinds)
		return nil
	})
	// The persona first; the two claims by their ids; the blocked one left.
	if err != nil || len(chunks) != 2 || len(chunks[0]) != 2 || len(chunks[1]) != 1 || chunks[0][0] != "persona:work" ||
		slices.Contains(slices.Concat(chunks...), "claim:clm_2") {
		t.Fatalf("Adopt all in chunks of 2 = %v, %v; want the persona first, the blocked claim left", chunks, err)
	}
	if ids, err := quarantine.Reject(v.x, v.store, nil, true); err != nil || len(ids) != 1 || ids[0] != held[2].ID || v.x.Len() != 0 || len(v.store[quarantine.BucketBodies]) != 0 {
		t.Fatalf("Reject all = %v, %v; %d indexed, %d bodies left", ids, err, v.x.Len(), len(v.store[quarantine.BucketBodies]))
	}
}

// TestIndexRehold: a record held again at the revision it has (or
// released and held again at it) is listed once, with what it was held
// with last; problem lists that would join alike stay apart.
func TestIndexRehold(t *testing.T) {
	x := quarantine.NewIndex()
	x.Hold(&quarantine.Held{ID: "qrn_A", Kind: "claim", Revision: 1, Status: quarantine.StatusBlocked, Problems: []string{}})
	x.Hold(&quarantine.Held{ID: "qrn_A", Kind: "claim", Revision: 1, Status: quarantine.StatusQuarantined, Problems: []string{}})
	x.Release("qrn_A")
	x.Hold(&quarantine.Held{ID: "qrn_A", Kind: "claim", Revision: 1, Status: quarantine.StatusQuarantined, Problems: []string{""}})
	x.Hold(&quarantine.Held{ID: "qrn_B", Kind: "claim", Revision: 2, Status: quarantine.StatusQuarantined, Problems: []string{}})
	if sel := x.Select(quarantine.Query{}); !slices.Equal(sel.IDs, []string{"qrn_A", "qrn_B"}) || sel.Total != 2 {
		t.Fatalf("Select = %v (total %d); want qrn_A once, then qrn_B", sel.IDs, sel.Total)
	}
	if n := x.Select(quarantine.Query{Status: quarantine.StatusBlocked}).Total; n != 0 {
		t.Errorf("%d blocked; want 0: the record was held again quarantined", n)
	}
	// [""] and [] are two lists: a problem filter that matches "" (every
	// problem) finds the record with one problem only.
	if sel := x.Select(quarantine.Query{Problem: "x"}); sel.Total != 0 {
		t.Errorf("problem x: total %d", sel.Total)
	}
	x.Release("qrn_A")
	x.Release("qrn_B")
	if sel := x.Select(quarantine.Query{}); len(sel.IDs) != 0 || sel.Total != 0 || x.Len() != 0 {
		t.Errorf("after releasing both: %v (total %d, len %d)", sel.IDs, sel.Total, x.Len())
	}
}
