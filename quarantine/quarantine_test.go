package quarantine_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

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

func TestQuery(t *testing.T) {
	held := []*quarantine.Held{
		{ID: "qrn_B", Revision: 2, Status: quarantine.StatusBlocked, Problems: []string{"blocked: unknown mandatory restriction x"}, Body: json.RawMessage(`{}`)},
		{ID: "qrn_A", Revision: 2, Status: quarantine.StatusQuarantined, Problems: []string{"conflicts with active claim clm_1"}},
		{ID: "qrn_C", Revision: 1, Status: quarantine.StatusQuarantined, Problems: []string{}},
	}
	ids := func(p quarantine.Page) (out []string) {
		for _, r := range p.Records {
			if r.Body != nil {
				t.Errorf("record %s has its body in a page", r.ID)
			}
			out = append(out, r.ID)
		}
		return out
	}
	page := quarantine.Query{Limit: 2}.Select(slices.Values(held))
	if got := ids(page); !slices.Equal(got, []string{"qrn_C", "qrn_A"}) || page.Total != 3 || page.NextCursor != "2" {
		t.Fatalf("first page = %v, total %d, next %q", got, page.Total, page.NextCursor)
	}
	page = quarantine.Query{Limit: 2, Cursor: page.NextCursor}.Select(slices.Values(held))
	if got := ids(page); !slices.Equal(got, []string{"qrn_B"}) || page.NextCursor != "" {
		t.Fatalf("second page = %v, next %q", got, page.NextCursor)
	}
	if got := ids(quarantine.Query{Problem: "conflicts"}.Select(slices.Values(held))); !slices.Equal(got, []string{"qrn_A"}) {
		t.Fatalf("problem conflicts = %v", got)
	}
	if got := ids(quarantine.Query{Status: quarantine.StatusBlocked}.Select(slices.Values(held))); !slices.Equal(got, []string{"qrn_B"}) {
		t.Fatalf("status blocked = %v", got)
	}
	for _, q := range []quarantine.Query{{Status: "active"}, {Limit: 1001}, {Limit: -1}, {Cursor: "x"}, {Cursor: "-1"}, {Problem: strings.Repeat("p", 257)}} {
		if q.Check() == nil {
			t.Errorf("Check(%+v) = nil; want a refusal", q)
		}
	}
}
