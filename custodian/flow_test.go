package custodian_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

// revisions checks that every revision a write returned is strictly greater
// than the one before.
type revisions struct {
	t    *testing.T
	last uint64
	seen []string
}

func (r *revisions) add(what string, rev uint64) {
	r.t.Helper()
	if rev <= r.last {
		r.t.Errorf("%s returned revision %d after %d (%v); want strictly increasing", what, rev, r.last, r.seen)
	}
	r.last = rev
	r.seen = append(r.seen, what)
}

// TestProposalToContextFlow walks one memory through the whole life the issue
// describes: an app proposes it, the owner reviews and confirms it into a
// persona, a recipient reads it under a grant, the owner corrects it and
// finally deletes it.
func TestProposalToContextFlow(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	revs := &revisions{t: t}

	revs.add("CreatePersona(work)", ts.mustPersona("work"))
	revs.add("CreatePersona(learning)", ts.mustPersona("learning"))
	ts.mustConsumer("tutor")
	ts.mustConsumer("calendar")
	tutorGrant := ts.mustGrant(grantSpec{recipient: "tutor", purpose: "tutoring", ops: []string{"contribute"}, keys: []string{"learning.*"}})
	revs.add("CreateGrant(tutor contribute)", tutorGrant.Revision)
	calGrant := ts.mustGrant(grantSpec{recipient: "calendar", purpose: "scheduling", ops: []string{"read"}, keys: []string{"learning.*"}})
	revs.add("CreateGrant(calendar read)", calGrant.Revision)

	// A consumer principal from Authenticate on a real minted token.
	tutor := ts.mustPrincipal("tutor", "learning.*", custodian.ModeReadWrite)
	calendar := ts.mustPrincipal("calendar", "*", custodian.ModeRead)

	// 1. The tutor proposes.
	doc := proposal(t, "learning.spanish.schedule", map[string]any{"days": []string{"mon", "thu"}}, map[string]any{
		"kind": "commitment", "assertion": "inferred",
		"reported": map[string]string{"app": "tutor", "run_id": "run-1"},
		"evidence": []map[string]string{{"ref": "urn:chat:42"}},
	})
	prop := ts.mustPropose(tutor, doc)
	revs.add("Propose", prop.Revision)
	if !strings.HasPrefix(prop.ProposalID, "prp_") || prop.Status != custodian.StatusProposed {
		t.Errorf("Propose = %+v; want a prp_ id with status proposed", prop)
	}

	// 2. Nothing pending is visible to any reader, nor listed as a claim.
	for name, p := range map[string]custodian.Principal{"calendar": calendar, "tutor": tutor} {
		res, err := ts.Context(ctx, p, custodian.ContextQuery{Purpose: "scheduling"})
		if name == "tutor" {
			// The tutor's token can read, but contribute is not read.
			if err != nil || len(res.Claims) != 0 {
				t.Errorf("Context(tutor) = %v, %v; want nothing: contribute is not read", res.Claims, err)
			}
			continue
		}
		if err != nil || len(res.Claims) != 0 {
			t.Errorf("Context(%s) with a pending proposal = %v, %v; want nothing", name, res.Claims, err)
		}
	}
	if l, err := ts.ListClaims(ctx, ts.owner, "", ""); err != nil || len(l.Claims) != 0 {
		t.Errorf("ListClaims with only a pending proposal = %v, %v; want none", l.Claims, err)
	}

	// 3. The owner's review queue holds it, with what was verified kept apart
	// from what the app said about itself.
	queue, err := ts.Review(ctx, ts.owner)
	if err != nil || len(queue) != 1 {
		t.Fatalf("Review = %v, %v; want one proposal", queue, err)
	}
	got := queue[0]
	if got.ID != prop.ProposalID || got.Key != "learning.spanish.schedule" || got.Status != custodian.StatusProposed ||
		got.Producer.Authenticated != (custodian.Authenticated{Kind: "consumer", ID: "tutor"}) ||
		got.Producer.Reported["app"] != "tutor" || !bytes.Contains(got.Value, []byte("thu")) || got.Sensitivity != custodian.SensitivityStandard {
		t.Errorf("Review()[0] = %+v; want the tutor's proposal", got)
	}

	// 4. The app cannot confirm its own proposal.
	_, err = ts.Confirm(ctx, tutor, prop.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":["learning"]}`)))
	wantKind(t, "Confirm by the proposing app", err, custodian.KindSessionRequired)

	// 5. The owner confirms into a persona.
	w := ts.mustConfirm(prop.ProposalID, "learning")
	revs.add("Confirm", w.Revision)
	c := w.Claim
	if !strings.HasPrefix(c.ID, "clm_") || c.Version != 1 || c.Status != custodian.StatusActive ||
		c.Key != "learning.spanish.schedule" || c.Kind != "commitment" || c.Subject != custodian.SubjectSelf {
		t.Errorf("Confirm claim = %+v; want active version 1 of learning.spanish.schedule", c)
	}
	if c.Assertion != "inferred" {
		t.Errorf("Confirm changed the assertion to %q; want it kept as %q", c.Assertion, "inferred")
	}
	if c.Confirmation.Status != custodian.ConfirmationConfirmed || c.Confirmation.By != "owner" || c.Confirmation.At == nil {
		t.Errorf("Confirmation = %+v; want confirmed by owner with a time", c.Confirmation)
	}
	if c.WrittenBy != "tutor" || c.Producer.Authenticated.ID != "tutor" {
		t.Errorf("WrittenBy = %q, producer %+v; want the tutor", c.WrittenBy, c.Producer.Authenticated)
	}
	if diff := cmp.Diff([]string{"learning"}, c.Personas); diff != "" {
		t.Errorf("Personas (-want +got):\n%s", diff)
	}
	if len(c.Evidence) != 1 || c.Evidence[0].Ref != "urn:chat:42" {
		t.Errorf("Evidence = %+v; want the reference kept", c.Evidence)
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 0 {
		t.Errorf("Review after Confirm = %v; want empty", q)
	}
	_, err = ts.Confirm(ctx, ts.owner, prop.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":["learning"]}`)))
	wantKind(t, "Confirm twice", err, custodian.KindConflict)
	_, err = ts.Reject(ctx, ts.owner, prop.ProposalID, custodian.RejectInput{})
	wantKind(t, "Reject a confirmed proposal", err, custodian.KindConflict)

	// Confirmation creates no sharing authority: the tutor still reads nothing.
	if keys, err := ts.contextKeys(tutor, custodian.ContextQuery{Purpose: "tutoring"}); err != nil || len(keys) != 0 {
		t.Errorf("Context(tutor) after Confirm = %v, %v; want nothing", keys, err)
	}

	// 6. The calendar reads it for its granted purpose.
	res, err := ts.Context(ctx, calendar, custodian.ContextQuery{Purpose: "scheduling", MinRevision: w.Revision})
	if err != nil || len(res.Claims) != 1 {
		t.Fatalf("Context(calendar) = %+v, %v; want the claim", res, err)
	}
	if res.Revision < w.Revision || string(res.Claims[0].Value) != `{"days":["mon","thu"]}` {
		t.Errorf("Context(calendar) = rev %d, %s; want rev ≥ %d with the confirmed value", res.Revision, res.Claims[0].Value, w.Revision)
	}
	if got, err := ts.GetClaim(ctx, calendar, c.ID, "scheduling"); err != nil || got.Claim.Version != 1 {
		t.Errorf("GetClaim(calendar) = %+v, %v; want version 1", got, err)
	}
	_, err = ts.Context(ctx, calendar, custodian.ContextQuery{Purpose: "scheduling", MinRevision: ts.revision() + 1})
	wantKind(t, "Context with min_revision ahead", err, custodian.KindConflict)

	// 7. The owner corrects it: a new version; the old one is superseded.
	corr, err := ts.Correct(ctx, ts.owner, c.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":{"days":["tue"]},"expected_version":1}`)))
	if err != nil {
		t.Fatalf("Correct = %v", err)
	}
	revs.add("Correct", corr.Revision)
	if corr.Claim.Version != 2 || corr.Claim.Status != custodian.StatusActive || corr.Claim.WrittenBy != custodian.WrittenByUser ||
		corr.Claim.Assertion != "inferred" || string(corr.Claim.Value) != `{"days":["tue"]}` {
		t.Errorf("Correct = %+v; want active version 2 with the new value", corr.Claim)
	}
	_, err = ts.Correct(ctx, ts.owner, c.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":1,"expected_version":1}`)))
	wantKind(t, "Correct with a stale expected_version", err, custodian.KindConflict)
	vs, err := ts.Versions(ctx, ts.owner, c.ID)
	if err != nil || len(vs.Claims) != 2 {
		t.Fatalf("Versions = %+v, %v; want 2", vs, err)
	}
	if vs.Claims[0].Status != custodian.StatusSuperseded || vs.Claims[1].Status != custodian.StatusActive ||
		string(vs.Claims[0].Value) != `{"days":["mon","thu"]}` {
		t.Errorf("Versions = [%s %s, %s %s]; want the old value superseded and the new one active",
			vs.Claims[0].Status, vs.Claims[0].Value, vs.Claims[1].Status, vs.Claims[1].Value)
	}
	res, err = ts.Context(ctx, calendar, custodian.ContextQuery{Purpose: "scheduling", MinRevision: corr.Revision})
	if err != nil || len(res.Claims) != 1 || res.Claims[0].Version != 2 || string(res.Claims[0].Value) != `{"days":["tue"]}` {
		t.Errorf("Context after Correct = %+v, %v; want only version 2", res.Claims, err)
	}

	// 8. A second proposal is rejected: its value is erased and nothing is visible.
	p2 := ts.mustPropose(tutor, proposal(t, "learning.spanish.level", "B2-secret-level"))
	revs.add("Propose(2)", p2.Revision)
	rrev, err := ts.Reject(ctx, ts.owner, p2.ProposalID, input[custodian.RejectInput](ts, []byte(`{"reason":"not true"}`)))
	if err != nil {
		t.Fatalf("Reject = %v", err)
	}
	revs.add("Reject", rrev)
	_, err = ts.Confirm(ctx, ts.owner, p2.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":[]}`)))
	wantKind(t, "Confirm a rejected proposal", err, custodian.KindConflict)
	if keys, _ := ts.contextKeys(calendar, custodian.ContextQuery{Purpose: "scheduling"}); len(keys) != 1 {
		t.Errorf("Context after Reject = %v; want only the confirmed claim", keys)
	}
	if bytes.Contains(ts.store.dump(t), []byte("B2-secret-level")) {
		t.Errorf("the store still holds a rejected proposal's value")
	}

	// 9. The owner deletes it: gone from context, from recipient reads, and
	// from every version.
	drev, err := ts.DeleteClaim(ctx, ts.owner, c.ID)
	if err != nil {
		t.Fatalf("DeleteClaim = %v", err)
	}
	revs.add("DeleteClaim", drev)
	if keys, err := ts.contextKeys(calendar, custodian.ContextQuery{Purpose: "scheduling", MinRevision: drev}); err != nil || len(keys) != 0 {
		t.Errorf("Context after DeleteClaim = %v, %v; want nothing", keys, err)
	}
	_, err = ts.GetClaim(ctx, calendar, c.ID, "scheduling")
	wantKind(t, "GetClaim(calendar) after DeleteClaim", err, custodian.KindNotFound)
	_, err = ts.DeleteClaim(ctx, ts.owner, c.ID)
	wantKind(t, "DeleteClaim twice", err, custodian.KindNotFound)
	_, err = ts.Correct(ctx, ts.owner, c.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":1}`)))
	wantKind(t, "Correct a deleted claim", err, custodian.KindNotFound)

	if got := ts.revision(); got != revs.last {
		t.Errorf("Status().Revision = %d; want the last write's %d", got, revs.last)
	}
}

// TestRevisionsStrictlyIncrease checks every kind of write against the one before.
func TestRevisionsStrictlyIncrease(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	revs := &revisions{t: t}
	revs.add("CreatePersona", ts.mustPersona("work"))
	ts.mustConsumer("app")
	rev := ts.revision()
	revs.add("AddConsumer (via Status)", rev)
	g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	revs.add("CreateGrant", g.Revision)
	p := ts.mustPropose(ts.owner, proposal(t, "a.b", 1))
	revs.add("Propose", p.Revision)
	w := ts.mustConfirm(p.ProposalID)
	revs.add("Confirm", w.Revision)
	sp, err := ts.SetPersonas(ctx, ts.owner, w.Claim.ID, input[custodian.PersonasInput](ts, []byte(`{"personas":["work","work"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	revs.add("SetPersonas", sp.Revision)
	if diff := cmp.Diff([]string{"work"}, sp.Claim.Personas); diff != "" {
		t.Errorf("SetPersonas with a duplicate (-want +got):\n%s", diff)
	}
	cw, err := ts.Correct(ctx, ts.owner, w.Claim.ID, input[custodian.CorrectionInput](ts, []byte(`{"value":2}`)))
	if err != nil {
		t.Fatal(err)
	}
	revs.add("Correct", cw.Revision)
	r, err := ts.RevokeGrant(ctx, ts.owner, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	revs.add("RevokeGrant", r)
	_, err = ts.RevokeGrant(ctx, ts.owner, g.ID)
	wantKind(t, "RevokeGrant twice", err, custodian.KindConflict)
	p2 := ts.mustPropose(ts.owner, proposal(t, "a.c", 1))
	revs.add("Propose", p2.Revision)
	rj, err := ts.Reject(ctx, ts.owner, p2.ProposalID, custodian.RejectInput{})
	if err != nil {
		t.Fatal(err)
	}
	revs.add("Reject", rj)
	d, err := ts.DeleteClaim(ctx, ts.owner, w.Claim.ID)
	if err != nil {
		t.Fatal(err)
	}
	revs.add("DeleteClaim", d)

	// Revisions survive a lock: the next write continues the sequence.
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if got := ts.revision(); got != d {
		t.Errorf("revision after Lock/Unlock = %d; want %d", got, d)
	}
	revs.add("CreatePersona after reload", ts.mustPersona("home"))
}

// TestRecipientSelection is table-driven over what a recipient receives:
// grant selectors, purpose, persona filter, token scope and mode.
func TestRecipientSelection(t *testing.T) {
	ts := newTestService(t)
	for _, p := range []string{"personal", "work", "learning"} {
		ts.mustPersona(p)
	}
	name := ts.mustClaim("identity.full_name", "Ada Lovelace", "personal", "work")
	ts.mustClaim("learning.spanish.level", "B1", "learning")
	employer := ts.mustClaim("work.employer", "Analytical Engines Ltd", "work")
	ts.mustClaim("health.allergies", "penicillin", "personal")        // sensitive by default
	ts.mustClaim("identity.ssn", "078-05-1120", "personal")           // critical by default
	music := ts.mustClaim("preferences.music", "baroque")             // in no persona; local only
	nick := ts.mustClaim("identity.nickname", "Countess", "personal") // restricted below
	ts.mustClaim("hobbies.chess", "weekly", "personal")               // restricted below
	ts.mustClaim("preferences.tea", "earl grey", "personal")          // owner override below
	restrict := func(id string, rs string) {
		t.Helper()
		if _, err := ts.Correct(t.Context(), ts.owner, id, input[custodian.CorrectionInput](ts, []byte(`{"restrictions":`+rs+`}`))); err != nil {
			t.Fatalf("Correct(restrictions) = %v", err)
		}
	}
	restrict(nick.Claim.ID, `[{"type":"purpose_only","mandatory":true,"params":{"purposes":["assist"]}}]`)
	restrict(music.Claim.ID, `[{"type":"local_processing_only","mandatory":true}]`)
	chess := findClaim(t, ts, "hobbies.chess")
	restrict(chess, `[{"type":"org.example.embargo","mandatory":true}]`)
	tea := findClaim(t, ts, "preferences.tea")
	if _, err := ts.Correct(t.Context(), ts.owner, tea, input[custodian.CorrectionInput](ts, []byte(`{"sensitivity":"sensitive"}`))); err != nil {
		t.Fatal(err)
	}

	// preferences.music is local_processing_only: only a grant with route
	// "local" reaches it.
	everything := []string{"identity.full_name", "identity.nickname", "learning.spanish.level", "work.employer"}
	type tc struct {
		name      string
		grants    []grantSpec // recipient is filled in
		scope     string
		mode      string
		q         custodian.ContextQuery
		want      []string
		wantKind  *custodian.Kind
		personaOf map[string][]string // key → personas the recipient sees
	}
	modeDenied := custodian.KindModeDenied
	tests := []tc{
		{name: "keys *", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}}, want: everything},
		{name: "purpose mismatch", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}},
			q: custodian.ContextQuery{Purpose: "marketing"}, want: []string{}},
		{name: "purpose_only restriction", grants: []grantSpec{{purpose: "tutoring", ops: []string{"read"}, keys: []string{"identity.*"}}},
			q: custodian.ContextQuery{Purpose: "tutoring"}, want: []string{"identity.full_name"}},
		{name: "key prefix", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"identity.*"}}},
			want: []string{"identity.full_name", "identity.nickname"}},
		{name: "exact key", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"work.employer"}}},
			want: []string{"work.employer"}},
		{name: "persona selector", grants: []grantSpec{{ops: []string{"read"}, personas: []string{"work"}}},
			want:      []string{"identity.full_name", "work.employer"},
			personaOf: map[string][]string{"identity.full_name": {"work"}, "work.employer": {"work"}}},
		{name: "persona filter in the query", grants: []grantSpec{{ops: []string{"read"}, personas: []string{"learning", "work"}}},
			q: custodian.ContextQuery{Purpose: "assist", Persona: "learning"}, want: []string{"learning.spanish.level"},
			personaOf: map[string][]string{"learning.spanish.level": {"learning"}}},
		// A reader may filter only by a persona its grant names: membership
		// in any other stays hidden, so a keys-only grant filters to nothing.
		{name: "persona filter with a keys-only grant", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}},
			q: custodian.ContextQuery{Purpose: "assist", Persona: "learning"}, want: []string{}},
		{name: "persona filter outside the grant", grants: []grantSpec{{ops: []string{"read"}, personas: []string{"work"}}},
			q: custodian.ContextQuery{Purpose: "assist", Persona: "learning"}, want: []string{}},
		{name: "claims selector", grants: []grantSpec{{ops: []string{"read"}, claims: []string{employer.Claim.ID}}},
			want: []string{"work.employer"}},
		{name: "keys and personas together", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"identity.*", "work.*"}, personas: []string{"personal"}}},
			want: []string{"identity.full_name", "identity.nickname"}, personaOf: map[string][]string{"identity.full_name": {"personal"}}},
		{name: "two grants add up", grants: []grantSpec{
			{ops: []string{"read"}, keys: []string{"work.*"}},
			{ops: []string{"read"}, claims: []string{name.Claim.ID}}},
			want: []string{"identity.full_name", "work.employer"}},
		{name: "token scope narrower than the grant", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}},
			scope: "identity.*", want: []string{"identity.full_name", "identity.nickname"}},
		{name: "token scope wider than the grant", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"learning.*"}}},
			scope: "*", want: []string{"learning.spanish.level"}},
		{name: "token scope and grant disjoint", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"learning.*"}}},
			scope: "work.*", want: []string{}},
		{name: "write-only token", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}},
			mode: custodian.ModeWrite, wantKind: &modeDenied},
		{name: "read-write token", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}},
			mode: custodian.ModeReadWrite, want: everything},
		{name: "no grant", want: []string{}},
		{name: "contribute is not read", grants: []grantSpec{{ops: []string{"contribute"}, keys: []string{"*"}}}, want: []string{}},
		{name: "confirm and share are not read", grants: []grantSpec{{ops: []string{"confirm", "share"}, keys: []string{"*"}}}, want: []string{}},
		{name: "grant for another recipient", grants: []grantSpec{{recipient: "someone-else", ops: []string{"read"}, keys: []string{"*"}}}, want: []string{}},
		{name: "hosted route and local_processing_only", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}, route: "hosted"}},
			want: []string{"identity.full_name", "identity.nickname", "learning.spanish.level", "work.employer"}},
		{name: "local route and local_processing_only", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"preferences.*"}, route: "local"}},
			want: []string{"preferences.music"}},
	}
	ts.mustConsumer("someone-else")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			consumer := fmt.Sprintf("reader-%d", i) // letters would be lookalikes: i and l
			ts.mustConsumer(consumer)
			for _, g := range tt.grants {
				if g.recipient == "" {
					g.recipient = consumer
				}
				ts.mustGrant(g)
			}
			scope, mode := tt.scope, tt.mode
			if scope == "" {
				scope = "*"
			}
			if mode == "" {
				mode = custodian.ModeRead
			}
			p := ts.mustPrincipal(consumer, scope, mode)
			q := tt.q
			if q.Purpose == "" {
				q.Purpose = "assist"
			}
			res, err := ts.Context(t.Context(), p, q)
			if tt.wantKind != nil {
				wantKind(t, "Context", err, *tt.wantKind)
				return
			}
			if err != nil {
				t.Fatalf("Context(%+v) = %v", q, err)
			}
			got := []string{}
			for _, c := range res.Claims {
				got = append(got, c.Key)
				if c.Status != custodian.StatusActive {
					t.Errorf("Context served %s with status %s", c.Key, c.Status)
				}
				if want, ok := tt.personaOf[c.Key]; ok {
					if diff := cmp.Diff(want, c.Personas); diff != "" {
						t.Errorf("personas of %s (-want +got):\n%s", c.Key, diff)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Context(%+v) keys (-want +got):\n%s", q, diff)
			}
		})
	}
}

// findClaim returns the id of the active claim with key.
func findClaim(t *testing.T, ts *testService, key string) string {
	t.Helper()
	l, err := ts.ListClaims(t.Context(), ts.owner, key, "")
	if err != nil || len(l.Claims) != 1 {
		t.Fatalf("ListClaims(%s) = %v, %v; want one", key, l.Claims, err)
	}
	return l.Claims[0].ID
}

func TestGrantExpiryAndRevocation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	expires := t0.Add(time.Hour)
	g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}, expires: expires})
	early := ts.mustClaim("identity.full_name", "Ada")
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)

	ts.clock.Set(expires.Add(-time.Nanosecond))
	if keys, err := ts.contextKeys(app, custodian.ContextQuery{Purpose: "assist"}); err != nil || len(keys) != 1 {
		t.Errorf("Context a nanosecond before expiry = %v, %v; want the claim", keys, err)
	}
	ts.clock.Set(expires)
	if keys, err := ts.contextKeys(app, custodian.ContextQuery{Purpose: "assist"}); err != nil || len(keys) != 0 {
		t.Errorf("Context at the exact expiry = %v, %v; want nothing", keys, err)
	}
	_, err := ts.GetClaim(ctx, app, early.Claim.ID, "assist")
	wantKind(t, "GetClaim at the exact expiry", err, custodian.KindNotFound)

	// Grants must expire in the future.
	_, err = ts.CreateGrant(ctx, ts.owner, input[custodian.GrantInput](ts, ts.grantDoc(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}, expires: expires})))
	wantKind(t, "CreateGrant expiring now", err, custodian.KindInvalid)

	// Revocation: from its revision on, the grant authorises nothing, and
	// data written after it is never readable.
	ts.clock.Set(t0)
	g2 := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	if keys, _ := ts.contextKeys(app, custodian.ContextQuery{Purpose: "assist"}); len(keys) != 1 {
		t.Fatalf("Context under the second grant = %v; want the claim", keys)
	}
	if _, err := ts.RevokeGrant(ctx, ts.owner, g.ID); err != nil {
		t.Fatal(err)
	}
	rrev, err := ts.RevokeGrant(ctx, ts.owner, g2.ID)
	if err != nil {
		t.Fatal(err)
	}
	later := ts.mustClaim("identity.nickname", "Countess")
	if later.Revision <= rrev {
		t.Fatalf("write after revocation has revision %d ≤ %d", later.Revision, rrev)
	}
	res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist", MinRevision: later.Revision})
	if err != nil || len(res.Claims) != 0 {
		t.Errorf("Context after revocation = %v, %v; want nothing", res.Claims, err)
	}
	for _, id := range []string{early.Claim.ID, later.Claim.ID} {
		_, err := ts.GetClaim(ctx, app, id, "assist")
		wantKind(t, "GetClaim after revocation", err, custodian.KindNotFound)
	}
	grants, err := ts.ListGrants(ctx, ts.owner)
	if err != nil || len(grants) != 2 || grants[0].RevokedAt == nil || grants[1].RevokedRev != rrev {
		t.Errorf("ListGrants = %+v, %v; want both grants, revoked", grants, err)
	}
	_, err = ts.RevokeGrant(ctx, ts.owner, "grt_AAAAAAAAAAAAAAAAAAAAAAAAAA")
	wantKind(t, "RevokeGrant(unknown)", err, custodian.KindNotFound)
	_, err = ts.RevokeGrant(ctx, ts.owner, "grt_bad")
	wantKind(t, "RevokeGrant(malformed)", err, custodian.KindInvalid)
}

// TestHiddenLooksLikeAbsent compares, field by field, what a recipient gets
// for a claim it may not see and for an id that does not exist.
func TestHiddenLooksLikeAbsent(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"learning.*"}})
	visible := ts.mustClaim("learning.level", "B1")
	hidden := map[string]string{
		"outside the grant":          ts.mustClaim("identity.full_name", "Ada").Claim.ID,
		"critical by owner override": ts.mustClaim("learning.health_note", "x").Claim.ID,
		"deleted":                    ts.mustClaim("learning.deleted", "gone").Claim.ID,
		"sensitive by key default":   "",
	}
	if _, err := ts.Correct(ctx, ts.owner, hidden["critical by owner override"], input[custodian.CorrectionInput](ts, []byte(`{"sensitivity":"critical"}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.DeleteClaim(ctx, ts.owner, hidden["deleted"]); err != nil {
		t.Fatal(err)
	}
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"health.*"}})
	hidden["sensitive by key default"] = ts.mustClaim("health.allergies", "nuts").Claim.ID
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)

	if _, err := ts.GetClaim(ctx, app, visible.Claim.ID, "assist"); err != nil {
		t.Fatalf("GetClaim(visible) = %v", err)
	}
	wrongPurpose := visible.Claim.ID

	type answer struct {
		Kind    custodian.Kind
		Message string
		Text    string
		Receipt custodian.Receipt
	}
	ask := func(id, purpose string) answer {
		t.Helper()
		_, err := ts.GetClaim(ctx, app, id, purpose)
		e, ok := errors.AsType[*custodian.Error](err)
		if !ok {
			t.Fatalf("GetClaim(%s) = %v; want an *Error", id, err)
		}
		rs := ts.receipts()
		r := rs[len(rs)-1]
		r.Seq, r.Prev, r.Hash = 0, "", ""
		return answer{e.Kind, e.Message(), e.Error(), r}
	}
	absent := ask("clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "assist")
	if absent.Kind != custodian.KindNotFound {
		t.Fatalf("GetClaim(absent) kind = %s; want not_found", absent.Kind)
	}
	cases := map[string]answer{"wrong purpose": ask(wrongPurpose, "marketing")}
	for name, id := range hidden {
		cases[name] = ask(id, "assist")
	}
	for name, got := range cases {
		want := absent
		if name == "wrong purpose" {
			want = ask("clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "marketing")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("hidden (%s) differs from absent (-absent +hidden):\n%s", name, diff)
		}
	}
}

func TestProposeAuthority(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	type tc struct {
		name   string
		grants []grantSpec
		revoke bool
		scope  string
		mode   string
		key    string
		want   *custodian.Kind
	}
	k := func(k custodian.Kind) *custodian.Kind { return &k }
	contribute := grantSpec{purpose: "tutoring", ops: []string{"contribute"}, keys: []string{"learning.*"}}
	tests := []tc{
		{name: "inside the contribute grant", grants: []grantSpec{contribute}, key: "learning.spanish.level"},
		{name: "outside the contribute grant's keys", grants: []grantSpec{contribute}, key: "identity.full_name", want: k(custodian.KindScopeExceeded)},
		{name: "no grant", key: "learning.spanish.level", want: k(custodian.KindScopeExceeded)},
		{name: "read is not contribute", grants: []grantSpec{{ops: []string{"read"}, keys: []string{"*"}}}, key: "learning.x", want: k(custodian.KindScopeExceeded)},
		{name: "confirm is not contribute", grants: []grantSpec{{ops: []string{"confirm"}, keys: []string{"*"}}}, key: "learning.x", want: k(custodian.KindScopeExceeded)},
		{name: "outside the token's scope", grants: []grantSpec{contribute}, scope: "learning.french.*", key: "learning.spanish.level", want: k(custodian.KindScopeExceeded)},
		{name: "read-only token", grants: []grantSpec{contribute}, mode: custodian.ModeRead, key: "learning.x", want: k(custodian.KindModeDenied)},
		{name: "write token", grants: []grantSpec{contribute}, mode: custodian.ModeWrite, key: "learning.x"},
		{name: "expired grant", grants: []grantSpec{{ops: []string{"contribute"}, keys: []string{"*"}, expires: t0.Add(time.Minute)}}, key: "learning.x", want: k(custodian.KindScopeExceeded)},
		{name: "revoked grant", grants: []grantSpec{contribute}, revoke: true, key: "learning.x", want: k(custodian.KindScopeExceeded)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.clock.Set(t0)
			consumer := "app-" + string(rune('a'+i))
			ts.mustConsumer(consumer)
			for _, g := range tt.grants {
				g.recipient = consumer
				created := ts.mustGrant(g)
				if tt.revoke {
					if _, err := ts.RevokeGrant(ctx, ts.owner, created.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			scope, mode := tt.scope, tt.mode
			if scope == "" {
				scope = "*"
			}
			if mode == "" {
				mode = custodian.ModeReadWrite
			}
			p := ts.mustPrincipal(consumer, scope, mode)
			ts.clock.Set(t0.Add(time.Minute)) // the expired grant's instant
			before, _ := ts.Review(ctx, ts.owner)
			rev := ts.revision()
			out, err := ts.Propose(ctx, p, input[custodian.ProposalInput](ts, proposal(t, tt.key, "v")))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Propose(%s) = %v; want it accepted", tt.key, err)
				}
				if out.Revision != rev+1 {
					t.Errorf("Propose revision = %d; want %d", out.Revision, rev+1)
				}
				return
			}
			wantKind(t, "Propose("+tt.key+")", err, *tt.want)
			after, _ := ts.Review(ctx, ts.owner)
			if len(after) != len(before) || ts.revision() != rev {
				t.Errorf("a refused proposal changed the queue (%d → %d) or the revision (%d → %d)", len(before), len(after), rev, ts.revision())
			}
		})
	}

	// A contribute grant must say which keys; one limited to a claim alone
	// would otherwise open every key.
	_, err := ts.CreateGrant(ctx, ts.owner, input[custodian.GrantInput](ts, []byte(`{"recipient":{"kind":"consumer","id":"app-a"},"purpose":"p","operations":["contribute"],"selectors":{"claims":["clm_AAAAAAAAAAAAAAAAAAAAAAAAAA"]},"expires_at":"2099-01-01T00:00:00Z"}`)))
	wantKind(t, "CreateGrant(contribute without keys)", err, custodian.KindInvalid)
}

func TestProposeValidation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	rev := ts.revision()
	tests := []struct {
		name        string
		doc         string
		want        custodian.Kind
		wantPath    string
		wantKeyword string
	}{
		{"missing value", `{"key":"a.b","kind":"fact","assertion":"reported"}`, custodian.KindSchema, "/value", "required"},
		{"bad key", `{"key":"A.B","value":1,"kind":"fact","assertion":"reported"}`, custodian.KindSchema, "/key", "pattern"},
		{"bad kind", `{"key":"a.b","value":1,"kind":"rumour","assertion":"reported"}`, custodian.KindSchema, "/kind", "enum"},
		{"bad assertion", `{"key":"a.b","value":1,"kind":"fact","assertion":"certain"}`, custodian.KindSchema, "/assertion", "enum"},
		{"unknown member", `{"key":"a.b","value":1,"kind":"fact","assertion":"reported","status":"active"}`, custodian.KindSchema, "/status", "additionalProperties"},
		{"bad subject", `{"key":"a.b","value":1,"kind":"fact","assertion":"reported","subject":"someone"}`, custodian.KindSchema, "/subject", "pattern"},
		{"bad sensitivity", `{"key":"a.b","value":1,"kind":"fact","assertion":"reported","sensitivity":"secret"}`, custodian.KindSchema, "/sensitivity", "enum"},
		{"purpose_only without purposes", `{"key":"a.b","value":1,"kind":"fact","assertion":"reported","restrictions":[{"type":"purpose_only","mandatory":true}]}`, custodian.KindSchema, "/restrictions/0/params", "required"},
		{"not an object", `[1]`, custodian.KindSchema, "", "type"},
		{"malformed JSON", `{"key":`, custodian.KindInvalid, "", ""},
		{"duplicate member", `{"key":"a.b","key":"c.d","value":1,"kind":"fact","assertion":"reported"}`, custodian.KindInvalid, "", ""},
		{"too large", `{"key":"a.b","value":"` + strings.Repeat("x", 1<<20) + `","kind":"fact","assertion":"reported"}`, custodian.KindTooLarge, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, []byte(tt.doc)))
			wantKind(t, "Propose", err, tt.want)
			if tt.want != custodian.KindSchema {
				return
			}
			e, _ := errors.AsType[*custodian.Error](err)
			if e == nil || len(e.Violations) == 0 {
				t.Fatalf("Propose = %v; want violations", err)
			}
			found := false
			for _, v := range e.Violations {
				found = found || (v.Path == tt.wantPath && v.Keyword == tt.wantKeyword)
			}
			if !found {
				t.Errorf("Violations = %+v; want one at %q with keyword %q", e.Violations, tt.wantPath, tt.wantKeyword)
			}
		})
	}
	if got := ts.revision(); got != rev {
		t.Errorf("revision = %d after refused proposals; want %d", got, rev)
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 0 {
		t.Errorf("Review = %d proposals after refused ones; want 0", len(q))
	}

	// RFC 3339 allows a lower-case "t" and "z"; the binding requires the
	// upper-case form every consumer parses, so the schema refuses it
	// rather than the decoder failing after the schema accepted it.
	_, err := ts.Propose(ctx, ts.owner, input[custodian.ProposalInput](ts, proposal(t, "a.lower", 1, map[string]any{"valid_from": "2025-01-06t09:00:00z"})))
	wantKind(t, "Propose(valid_from in lower-case RFC 3339)", err, custodian.KindSchema)

	// A producer cannot lower a key's default tier.
	p := ts.mustPropose(ts.owner, proposal(t, "health.allergies", "nuts", map[string]any{"sensitivity": "public"}))
	q, _ := ts.Review(ctx, ts.owner)
	if len(q) != 1 || q[0].ID != p.ProposalID || q[0].Sensitivity != custodian.SensitivitySensitive {
		t.Errorf("Review after proposing health.allergies as public = %+v; want it sensitive", q)
	}
}

func TestConfirmValidation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	p := ts.mustPropose(ts.owner, proposal(t, "identity.full_name", "Ada"))
	rev := ts.revision()
	nReceipts := len(ts.receipts())
	tests := []struct {
		name string
		id   string
		body string
		want custodian.Kind
	}{
		{"unknown persona", p.ProposalID, `{"personas":["work","nope"]}`, custodian.KindInvalid},
		{"malformed persona", p.ProposalID, `{"personas":["Work!"]}`, custodian.KindInvalid},
		{"malformed id", "prp_x", `{"personas":["work"]}`, custodian.KindInvalid},
		{"claim id for a proposal", "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", `{"personas":["work"]}`, custodian.KindInvalid},
		{"unknown proposal", "prp_AAAAAAAAAAAAAAAAAAAAAAAAAA", `{"personas":["work"]}`, custodian.KindNotFound},
		{"bad sensitivity edit", p.ProposalID, `{"personas":["work"],"edits":{"sensitivity":"secret"}}`, custodian.KindInvalid},
		{"unknown member", p.ProposalID, `{"personas":["work"],"status":"active"}`, custodian.KindInvalid},
		{"not JSON", p.ProposalID, `personas`, custodian.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ts.Confirm(ctx, ts.owner, tt.id, input[custodian.ConfirmInput](ts, []byte(tt.body)))
			wantKind(t, "Confirm", err, tt.want)
		})
	}
	// Nothing changed: no revision, no receipt, no claim, the proposal pending.
	if got := ts.revision(); got != rev {
		t.Errorf("revision = %d after refused confirmations; want %d", got, rev)
	}
	if got := len(ts.receipts()); got != nReceipts {
		t.Errorf("%d receipts after refused confirmations; want %d", got, nReceipts)
	}
	if l, _ := ts.ListClaims(ctx, ts.owner, "", ""); len(l.Claims) != 0 {
		t.Errorf("ListClaims = %v; want none", l.Claims)
	}
	if q, _ := ts.Review(ctx, ts.owner); len(q) != 1 || q[0].Status != custodian.StatusProposed {
		t.Errorf("Review = %v; want the proposal still pending", q)
	}

	// The owner's edits apply, and an owner override may lower a tier.
	w, err := ts.Confirm(ctx, ts.owner, p.ProposalID, input[custodian.ConfirmInput](ts, []byte(`{"personas":["work","work"],"edits":{"value":"Ada King","sensitivity":"public"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if string(w.Claim.Value) != `"Ada King"` || w.Claim.Sensitivity != custodian.SensitivityPublic || len(w.Claim.Personas) != 1 {
		t.Errorf("Confirm with edits = %+v; want the edited value, public, in one persona", w.Claim)
	}
}

// TestDeleteErases checks that a deletion leaves neither the value nor the
// key of any version anywhere in the store, and removes the claim from
// context.
func TestDeleteErases(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read", "contribute"}, keys: []string{"*"}})
	app := ts.mustPrincipal("app", "*", custodian.ModeReadWrite)

	const (
		key    = "zebra.stripe_pattern_unique"
		value1 = "first-value-QX7Z"
		value2 = "second-value-RW8Y"
		note   = "note-text-PV9K"
	)
	p := ts.mustPropose(app, proposal(t, key, value1, map[string]any{"note": note}))
	w := ts.mustConfirm(p.ProposalID, "work")
	if _, err := ts.Correct(ctx, ts.owner, w.Claim.ID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": value2}))); err != nil {
		t.Fatal(err)
	}
	keep := ts.mustClaim("identity.full_name", "Ada Lovelace", "work")
	if !bytes.Contains(ts.store.dump(t), []byte(value2)) {
		t.Fatalf("the store dump misses a live value; the test cannot see the store")
	}
	rev, err := ts.DeleteClaim(ctx, ts.owner, w.Claim.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The claims, the proposal and the log of metas lose the erased
	// content with the deletion's commit; a claim metas snapshot cut
	// before it (its key, subject and tier) with the snapshot the erasure
	// makes due at once (TestSnapshotAfterErasure).
	ts.await(ts.ErasuresSnapshotted)
	ts.SnapshotSettled()

	dump := ts.store.dump(t)
	for _, s := range []string{value1, value2, key, note} {
		if i := bytes.Index(dump, []byte(s)); i >= 0 {
			line := dump[bytes.LastIndexByte(dump[:i], '\n')+1:]
			if j := bytes.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			t.Errorf("after DeleteClaim the store still holds %q in: %.300s", s, line)
		}
	}
	if !bytes.Contains(dump, []byte("Ada Lovelace")) {
		t.Errorf("DeleteClaim erased another claim")
	}

	// The owner sees tombstones that keep only ids and versions.
	got, err := ts.GetClaim(ctx, ts.owner, w.Claim.ID, "")
	if err != nil || got.Claim.Status != custodian.StatusDeleted || got.Claim.Key != "" || got.Claim.Value != nil || got.Claim.Version != 2 {
		t.Errorf("GetClaim(owner, deleted) = %+v, %v; want a version-2 tombstone with no key or value", got.Claim, err)
	}
	vs, err := ts.Versions(ctx, ts.owner, w.Claim.ID)
	if err != nil || len(vs.Claims) != 2 {
		t.Fatalf("Versions(deleted) = %v, %v", vs, err)
	}
	for _, v := range vs.Claims {
		if v.Key != "" || v.Value != nil || v.Status != custodian.StatusDeleted || len(v.Personas) != 0 || v.Note != "" {
			t.Errorf("version %d after delete = %+v; want a bare tombstone", v.Version, v)
		}
	}

	// Recipients no longer receive it, and reading it looks like absence.
	res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist", MinRevision: rev})
	if err != nil || len(res.Claims) != 1 || res.Claims[0].ID != keep.Claim.ID {
		t.Errorf("Context after DeleteClaim = %v, %v; want only the other claim", res.Claims, err)
	}
	_, err = ts.GetClaim(ctx, app, w.Claim.ID, "assist")
	wantKind(t, "GetClaim(deleted)", err, custodian.KindNotFound)
	if l, _ := ts.ListClaims(ctx, ts.owner, "", "work"); len(l.Claims) != 1 {
		t.Errorf("ListClaims(persona work) = %d claims; want 1", len(l.Claims))
	}

	// Deletion survives a reload.
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	got, err = ts.GetClaim(ctx, ts.owner, w.Claim.ID, "")
	if err != nil || got.Claim.Status != custodian.StatusDeleted || got.Claim.Value != nil {
		t.Errorf("GetClaim(owner, deleted) after reload = %+v, %v; want the tombstone", got.Claim, err)
	}
}

// TestGetClaimPurposeBound checks that a recipient's free-text purpose, which
// lands in a receipt, is bounded on every read path as Context bounds it.
func TestGetClaimPurposeBound(t *testing.T) {
	ts := newTestService(t)
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	long := strings.Repeat("é", 201)
	_, err := ts.Context(t.Context(), app, custodian.ContextQuery{Purpose: long})
	wantKind(t, "Context(201-character purpose)", err, custodian.KindInvalid)
	_, err = ts.GetClaim(t.Context(), app, "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", long)
	wantKind(t, "GetClaim(201-character purpose)", err, custodian.KindInvalid)
	for _, r := range ts.receipts() {
		if n := utf8.RuneCountInString(r.Purpose); n > 200 {
			t.Errorf("receipt %d (%s) holds a %d-character purpose from the recipient", r.Seq, r.Operation, n)
		}
	}
}

func TestContextValidation(t *testing.T) {
	ts := newTestService(t)
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	ctx := t.Context()
	_, err := ts.Context(ctx, app, custodian.ContextQuery{})
	wantKind(t, "Context(no purpose)", err, custodian.KindInvalid)
	_, err = ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist", Persona: "Bad!"})
	wantKind(t, "Context(bad persona)", err, custodian.KindInvalid)
	_, err = ts.Context(ctx, custodian.Principal{}, custodian.ContextQuery{Purpose: "assist"})
	wantKind(t, "Context(anonymous)", err, custodian.KindUnauthenticated)
	_, err = ts.GetClaim(ctx, custodian.Principal{}, "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "assist")
	wantKind(t, "GetClaim(anonymous)", err, custodian.KindUnauthenticated)
	_, err = ts.GetClaim(ctx, app, "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", "")
	wantKind(t, "GetClaim(no purpose)", err, custodian.KindInvalid)
	// A recipient's purpose is untrusted text that lands in receipts: both
	// read paths accept only what the grant binding allows.
	for _, purpose := range []string{" assist", "assist ", "as\x00sist", "as\nsist", "\xff\xfe", "as\u202esist", "as\u2066sist", strings.Repeat("p", 201)} {
		_, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: purpose})
		wantKind(t, fmt.Sprintf("Context(purpose %q)", purpose), err, custodian.KindInvalid)
		_, err = ts.GetClaim(ctx, app, "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA", purpose)
		wantKind(t, fmt.Sprintf("GetClaim(purpose %q)", purpose), err, custodian.KindInvalid)
	}
	for _, purpose := range []string{"a", "Tax prep: 2025", "calendar.sync_v2", "-assist", "zweck-für", "Fill the form; page 2", strings.Repeat("é", 200)} {
		if _, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: purpose}); err != nil {
			t.Errorf("Context(purpose %q) = %v; want it accepted", purpose, err)
		}
	}
	res, err := ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist", MinRevision: ts.revision()})
	if err != nil || res.Claims == nil || len(res.Claims) != 0 {
		t.Errorf("Context(nothing granted) = %#v, %v; want an empty, non-nil list", res.Claims, err)
	}
	_, err = ts.Context(ctx, app, custodian.ContextQuery{Purpose: "assist", MinRevision: ts.revision() + 1})
	wantKind(t, "Context(min_revision ahead)", err, custodian.KindConflict)
	raw, _ := json.Marshal(res)
	if !bytes.Contains(raw, []byte(`"claims":[]`)) {
		t.Errorf("Context JSON = %s; want \"claims\":[]", raw)
	}
}

func TestRejectValidation(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	p := ts.mustPropose(ts.owner, proposal(t, "a.b", 1))
	tests := []struct {
		name string
		id   string
		body string
		want custodian.Kind
	}{
		{"reason too long", p.ProposalID, `{"reason":"` + strings.Repeat("r", 1025) + `"}`, custodian.KindInvalid},
		{"unknown member", p.ProposalID, `{"why":"x"}`, custodian.KindInvalid},
		{"malformed id", "prp_", ``, custodian.KindInvalid},
		{"unknown proposal", "prp_AAAAAAAAAAAAAAAAAAAAAAAAAA", ``, custodian.KindNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ts.Reject(ctx, ts.owner, tt.id, input[custodian.RejectInput](ts, []byte(tt.body)))
			wantKind(t, "Reject", err, tt.want)
		})
	}
	if _, err := ts.Reject(ctx, ts.owner, p.ProposalID, custodian.RejectInput{}); err != nil {
		t.Errorf("Reject(no body) = %v", err)
	}
	if _, err := ts.Reject(ctx, ts.owner, p.ProposalID, custodian.RejectInput{}); custodian.KindOf(err) != custodian.KindConflict {
		t.Errorf("Reject twice = %v; want conflict", err)
	}
}
