package custodian

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// TestEncodeReceipt: the single-pass encoding equals encoding/json's, and
// its hash is receiptHash's.
func TestEncodeReceipt(t *testing.T) {
	rs := []Receipt{
		{},
		{Seq: 7, At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Actor: "consumer:a<b>&c", Operation: "context.read",
			Recipient: "a", Purpose: "learning", Decision: "allow", Records: []string{"clm_A@1", "clm_B@2"}, Revision: 9, Prev: "sha256:00"},
		{Decision: "deny", Constraint: "not_found", Records: []string{}, Actor: "\u2028\"quoted\""},
	}
	for i, r := range rs {
		got := engine.EncodeReceipt(&r)
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encodeReceipt(#%d) = %s; want %s", i, got, want)
		}
		if h := engine.ReceiptHash(&r); h != r.Hash {
			t.Errorf("encodeReceipt(#%d) hash = %s; receiptHash = %s", i, r.Hash, h)
		}
	}
}

// TestContextResultJSON: the cached encoding equals the plain one.
func TestContextResultJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := &Claim{ID: "clm_A", Version: 2, Key: "a.b", Value: json.RawMessage(`"x<y"`), Subject: "self", Kind: "fact",
		Assertion: "reported", RecordedAt: at, Sensitivity: "standard", Evidence: []Evidence{}, Restrictions: []Restriction{}}
	r := testRecord(claimMeta{ID: "clm_A", Head: 2, Status: StatusActive, Personas: []string{"p", "q"}}, &Claim{ID: "clm_A", Version: 1}, v)
	g := &Grant{Selectors: Selectors{Personas: []string{"q"}}}
	for range 2 { // the second time from the cache
		sc, err := served(r, g)
		if err != nil {
			t.Fatal(err)
		}
		res := ContextResult{Revision: 5}
		model.AppendContextClaim(&res, &sc.Claim, sc.Raw)
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		type plain ContextResult
		want, _ := json.Marshal(plain(res))
		if !bytes.Equal(got, want) {
			t.Fatalf("ContextResult JSON = %s; want %s", got, want)
		}
	}
	if sc := r.Served.Load(); sc == nil || sc.Personas != "q" {
		t.Fatalf("cache = %+v", sc)
	}
}

// TestContextBundleJSON: the cached encoding equals the plain one.
func TestContextBundleJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id, key, value string) *claimRecord {
		v := &Claim{ID: id, Version: 1, Key: key, Value: json.RawMessage(value), Subject: "self", RecordedAt: at,
			Sensitivity: "standard", WrittenBy: "user", Producer: Producer{Authenticated: model.OwnerAuth}}
		return testRecord(claimMeta{ID: id, Head: 1, Status: StatusActive}, v)
	}
	a, b2, c := rec("clm_A", "work.a", `"x<y"`), rec("clm_B", "work.b", `{"n":1}`), rec("clm_C", "aé\u2028.c", `[1,2]`)
	for _, warnings := range [][]string{nil, {"the value of work.a was written by another app: t<1>"}} {
		bundle := ContextBundle{ContextVersion: PCPVersion, Revision: 7, Warnings: warnings, Categories: map[string][]Field{
			"work": {fieldCached(a), fieldCached(b2)}, "aé\u2028": {fieldCached(c)}}}
		got, err := json.Marshal(bundle)
		if err != nil {
			t.Fatal(err)
		}
		type plain ContextBundle
		want, _ := json.Marshal(plain(bundle))
		if !bytes.Equal(got, want) {
			t.Fatalf("ContextBundle JSON = %s; want %s", got, want)
		}
	}
}
