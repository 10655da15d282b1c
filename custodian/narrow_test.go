package custodian_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

// TestNarrowGrantTerms checks, term by term, that NarrowGrant takes what is
// within the grant and refuses, as invalid and saying what may be narrowed,
// anything that widens it.
func TestNarrowGrantTerms(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustPersona("home")
	ts.mustPersona("spare")
	ts.mustConsumer("app")
	expires := ts.clock.Now().Add(30 * 24 * time.Hour)
	c := ts.mustClaim("contact.email", "ada@example.org", "work")

	type want struct {
		kind  custodian.Kind // 0 (KindInternal, never expected here): success
		ops   []string
		keys  []string
		pers  []string
		claim []string
	}
	base := grantSpec{recipient: "app", ops: []string{"read", "contribute"}, keys: []string{"contact.*", "name.display"},
		personas: []string{"home", "work"}, expires: expires}
	keysOnly := grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"contact.*"}, expires: expires}
	claimsOnly := grantSpec{recipient: "app", ops: []string{"read"}, claims: []string{c.Claim.ID}, expires: expires}
	later := expires.Add(time.Hour).Format(time.RFC3339)
	sooner := expires.Add(-time.Hour).Format(time.RFC3339)
	past := ts.clock.Now().Add(-time.Hour).Format(time.RFC3339)
	cases := []struct {
		name  string
		grant grantSpec
		body  string
		want  want
	}{
		{"one operation fewer", base, `{"operations":["read"]}`, want{ops: []string{"read"}}},
		{"same operations", base, `{"operations":["contribute","read","read"]}`, want{ops: []string{"contribute", "read"}}},
		{"an operation added", base, `{"operations":["read","share"]}`, want{kind: custodian.KindInvalid}},
		{"no operations", base, `{"operations":[]}`, want{kind: custodian.KindInvalid}},
		{"a key under a prefix", base, `{"selectors":{"keys":["contact.email"]}}`, want{keys: []string{"contact.email"}}},
		{"a sub-prefix", base, `{"selectors":{"keys":["contact.phone.*","name.display"]}}`, want{keys: []string{"contact.phone.*", "name.display"}}},
		{"below a field", base, `{"selectors":{"keys":["name.display.first"]}}`, want{keys: []string{"name.display.first"}}},
		{"everything", base, `{"selectors":{"keys":["*"]}}`, want{kind: custodian.KindInvalid}},
		{"a field's parent", base, `{"selectors":{"keys":["name.*"]}}`, want{kind: custodian.KindInvalid}},
		{"a prefix's own key", base, `{"selectors":{"keys":["contact"]}}`, want{kind: custodian.KindInvalid}},
		{"another key", base, `{"selectors":{"keys":["contact.email","home.city"]}}`, want{kind: custodian.KindInvalid}},
		{"keys cleared", base, `{"selectors":{"keys":[]}}`, want{kind: custodian.KindInvalid}},
		{"a malformed key", base, `{"selectors":{"keys":["Contact!"]}}`, want{kind: custodian.KindInvalid}},
		{"one persona fewer", base, `{"selectors":{"personas":["work"]}}`, want{pers: []string{"work"}}},
		{"a persona added", base, `{"selectors":{"personas":["work","spare"]}}`, want{kind: custodian.KindInvalid}},
		{"personas cleared", base, `{"selectors":{"personas":[]}}`, want{kind: custodian.KindInvalid}},
		{"personas where there were none", keysOnly, `{"selectors":{"personas":["work"]}}`, want{keys: []string{"contact.*"}, pers: []string{"work"}}},
		{"an unknown persona where there were none", keysOnly, `{"selectors":{"personas":["nobody"]}}`, want{kind: custodian.KindInvalid}},
		{"keys where a claim was named", claimsOnly, `{"selectors":{"keys":["contact.*"]}}`, want{keys: []string{"contact.*"}, claim: []string{c.Claim.ID}}},
		{"the named claim dropped", claimsOnly, `{"selectors":{"claims":[]}}`, want{kind: custodian.KindInvalid}},
		{"claims cleared beside keys", grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"contact.*"}, claims: []string{c.Claim.ID}, expires: expires},
			`{"selectors":{"claims":[]}}`, want{kind: custodian.KindInvalid}},
		{"another claim", claimsOnly, `{"selectors":{"claims":["clm_AAAAAAAAAAAAAAAAAAAAAAAAAA"]}}`, want{kind: custodian.KindInvalid}},
		{"a contribute grant without keys", grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"contact.*"}, personas: []string{"work"}, expires: expires},
			`{"selectors":{"keys":[]}}`, want{kind: custodian.KindInvalid}},
		{"a sooner expiry", base, `{"expires_at":"` + sooner + `"}`, want{}},
		{"a later expiry", base, `{"expires_at":"` + later + `"}`, want{kind: custodian.KindInvalid}},
		{"an expiry passed", base, `{"expires_at":"` + past + `"}`, want{kind: custodian.KindInvalid}},
		{"nothing named", base, `{}`, want{kind: custodian.KindInvalid}},
		{"an unknown term", base, `{"purpose":"other"}`, want{kind: custodian.KindInvalid}},
		{"not JSON", base, `operations=read`, want{kind: custodian.KindInvalid}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := ts.mustGrant(tc.grant)
			before := grantByID(t, ts, g.ID)
			got, err := ts.NarrowGrant(ctx, ts.owner, g.ID, input[custodian.GrantTerms](ts, []byte(tc.body)))
			after := grantByID(t, ts, g.ID)
			if tc.want.kind != custodian.KindInternal {
				wantKind(t, "NarrowGrant", err, tc.want.kind)
				if tc.want.kind == custodian.KindInvalid && strings.Contains(tc.name, "added") {
					if e := err.Error(); !strings.Contains(e, "can only be narrowed") {
						t.Errorf("NarrowGrant error %q does not say what may be narrowed", e)
					}
				}
				if after.NarrowedRev != 0 || !slices.Equal(after.Operations, before.Operations) {
					t.Errorf("a refused narrowing changed the grant: %+v", after)
				}
				return
			}
			if err != nil {
				t.Fatalf("NarrowGrant = %v", err)
			}
			if got.Grant.ID != g.ID || after.ID != g.ID || after.Revision != before.Revision || after.NarrowedRev != got.Revision {
				t.Errorf("narrowed grant = %+v (answer %+v); want the same id and creation revision, narrowed at the answer's revision", after, got)
			}
			check := func(what string, got, want, old []string) {
				t.Helper()
				if want == nil {
					want = old
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s = %v; want %v", what, got, want)
				}
			}
			check("operations", after.Operations, tc.want.ops, before.Operations)
			check("keys", after.Selectors.Keys, tc.want.keys, before.Selectors.Keys)
			check("personas", after.Selectors.Personas, tc.want.pers, before.Selectors.Personas)
			check("claims", after.Selectors.Claims, tc.want.claim, before.Selectors.Claims)
			if after.MadeWith == nil || !slices.Equal(after.MadeWith.Keys, before.Selectors.Keys) {
				t.Errorf("MadeWith = %+v; want the selectors it was made with, %+v", after.MadeWith, before.Selectors)
			}
		})
	}
}

func grantByID(t *testing.T, ts *testService, id string) custodian.Grant {
	t.Helper()
	gs, err := ts.ListGrants(t.Context(), ts.owner)
	if err != nil {
		t.Fatalf("ListGrants = %v", err)
	}
	for _, g := range gs {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("grant %s not listed", id)
	return custodian.Grant{}
}

// TestNarrowGrantReadsLess checks that from the narrowing on the recipient
// reads, and the owner is shown it can read, only what the new terms
// select, across a lock and unlock too; that the narrowing leaves a
// receipt; and that only the owner may narrow, only a grant in force.
func TestNarrowGrantReadsLess(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustPersona("home")
	ts.mustClaim("contact.email", "ada@example.org", "work")
	ts.mustClaim("contact.phone", "+351 000", "home")
	ts.mustClaim("name.display", "Ada", "work", "home")
	ts.mustConsumer("app")
	reader := ts.mustPrincipal("app", "*", "read")
	g := ts.mustGrant(grantSpec{recipient: "app", purpose: "assist", ops: []string{"read"},
		keys: []string{"contact.*", "name.display"}, personas: []string{"work", "home"}})

	steps := []struct {
		body string
		want []string
	}{
		{"", []string{"contact.email", "contact.phone", "name.display"}},
		{`{"selectors":{"personas":["work"]}}`, []string{"contact.email", "name.display"}},
		{`{"selectors":{"keys":["contact.*"]}}`, []string{"contact.email"}},
		{`{"selectors":{"keys":["contact.phone"]}}`, []string{}},
	}
	for i, st := range steps {
		if st.body != "" {
			if _, err := ts.NarrowGrant(ctx, ts.owner, g.ID, input[custodian.GrantTerms](ts, []byte(st.body))); err != nil {
				t.Fatalf("step %d: NarrowGrant(%s) = %v", i, st.body, err)
			}
		}
		keys, err := ts.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"})
		if err != nil {
			t.Fatalf("step %d: Context = %v", i, err)
		}
		if !slices.Equal(keys, st.want) {
			t.Errorf("step %d: the app reads %v; want %v", i, keys, st.want)
		}
		r, err := ts.ReadableNow(ctx, ts.owner, "app")
		if err != nil {
			t.Fatalf("ReadableNow = %v", err)
		}
		shown := []string{}
		for _, p := range r.Purposes {
			for _, c := range p.Claims {
				shown = append(shown, c.Key)
			}
		}
		slices.Sort(shown)
		if !slices.Equal(shown, st.want) {
			t.Errorf("step %d: the owner is shown %v; want %v", i, shown, st.want)
		}
	}
	// Widening back is refused, and the grant still reads nothing more.
	_, err := ts.NarrowGrant(ctx, ts.owner, g.ID, input[custodian.GrantTerms](ts, []byte(`{"selectors":{"keys":["contact.*"]}}`)))
	wantKind(t, "NarrowGrant(wider again)", err, custodian.KindInvalid)

	// The narrowed terms are what the store holds.
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatalf("Lock = %v", err)
	}
	ts.unlock()
	reader = ts.mustPrincipal("app", "*", "read")
	if got := grantByID(t, ts, g.ID); !slices.Equal(got.Selectors.Keys, []string{"contact.phone"}) || !slices.Equal(got.Selectors.Personas, []string{"work"}) {
		t.Errorf("after unlock the grant selects %+v; want contact.phone in work", got.Selectors)
	}
	if keys, _ := ts.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"}); len(keys) != 0 {
		t.Errorf("after unlock the app reads %v; want nothing", keys)
	}

	n := 0
	for _, r := range ts.receipts() {
		if r.Operation == "grant.narrow" {
			n++
			if r.Actor != "owner" || r.Recipient != "app" || !slices.Equal(r.Records, []string{g.ID}) {
				t.Errorf("receipt %+v; want the owner narrowing %s for app", r, g.ID)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d grant.narrow receipts; want 3", n)
	}

	_, err = ts.NarrowGrant(ctx, reader, g.ID, input[custodian.GrantTerms](ts, []byte(`{"operations":["read"]}`)))
	wantKind(t, "NarrowGrant(by the app)", err, custodian.KindSessionRequired)
	_, err = ts.NarrowGrant(ctx, ts.owner, "grt_AAAAAAAAAAAAAAAAAAAAAAAAAA", input[custodian.GrantTerms](ts, []byte(`{"operations":["read"]}`)))
	wantKind(t, "NarrowGrant(unknown)", err, custodian.KindNotFound)
	_, err = ts.NarrowGrant(ctx, ts.owner, "grt_bad", input[custodian.GrantTerms](ts, []byte(`{"operations":["read"]}`)))
	wantKind(t, "NarrowGrant(malformed id)", err, custodian.KindInvalid)
	if _, err := ts.RevokeGrant(ctx, ts.owner, g.ID); err != nil {
		t.Fatalf("RevokeGrant = %v", err)
	}
	_, err = ts.NarrowGrant(ctx, ts.owner, g.ID, input[custodian.GrantTerms](ts, []byte(`{"operations":["read"]}`)))
	wantKind(t, "NarrowGrant(revoked)", err, custodian.KindConflict)
}
