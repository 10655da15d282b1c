// Regression tests from the review of the PCP fields facade (R1–R11).
package custodian_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

func (ts *testService) setAutoGrant(tier string) {
	ts.t.Helper()
	if _, _, err := ts.PutSettings(ts.t.Context(), ts.owner, input[custodian.SettingsInput](ts, mustJSON(ts.t, map[string]string{"auto_grant": tier}))); err != nil {
		ts.t.Fatalf("PutSettings(%s) = %v", tier, err)
	}
}

func (ts *testService) ownerPut(id string, body map[string]any) custodian.FieldRead {
	ts.t.Helper()
	out, _, err := ts.PutField(ts.t.Context(), ts.owner, id, input[custodian.FieldInput](ts, mustJSON(ts.t, body)))
	if err != nil {
		ts.t.Fatalf("owner PutField(%s) = %v", id, err)
	}
	return out.FieldRead
}

func kindOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return custodian.KindOf(err).String()
}

// R1: an app may not lower the tier the owner set on a field.
func TestReviewAppCannotLowerTier(t *testing.T) {
	ts := newTestService(t)
	ts.ownerPut("preferences.diet", map[string]any{"value": "vegan", "sensitivity": "standard"})
	ts.mustConsumer("app")
	ts.mustConsumer("other")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"preferences.*"}})
	app := ts.mustPrincipal("app", "*", "read-write")
	other := ts.mustPrincipal("other", "*", "read")
	// Default auto_grant is public: "other" cannot read the standard field.
	if _, err := ts.GetField(t.Context(), other, "preferences.diet", ""); custodian.KindOf(err) != custodian.KindNotFound {
		t.Fatalf("before: other reads the standard field: %v", err)
	}
	if _, _, err := ts.PutField(t.Context(), app, "preferences.diet", input[custodian.FieldInput](ts, mustJSON(t, map[string]any{"value": "vegan", "sensitivity": "public"}))); err != nil {
		t.Fatalf("app PutField = %v", err)
	}
	// The app could not read the field: its write waits for the owner.
	// Confirmed, it still may not lower the tier.
	q, _ := ts.Review(t.Context(), ts.owner)
	if len(q) != 1 || q[0].Sensitivity != "standard" {
		t.Fatalf("review = %+v; want one proposal at tier standard", q)
	}
	ts.mustConfirm(q[0].ID)
	if f, _ := ts.GetField(t.Context(), ts.owner, "preferences.diet", ""); f.Sensitivity != "standard" {
		t.Errorf("app lowered the owner's tier standard -> %s", f.Sensitivity)
	}
	if _, err := ts.GetField(t.Context(), other, "preferences.diet", ""); err == nil {
		t.Errorf("after the app's write every approved consumer reads preferences.diet")
	}
}

// R2: an app's write must not answer differently for a hidden field and an
// absent one where the app could not learn the difference by reading. A
// write is committed only where the app could read the result back (a
// token that reads the key, a tier auto_grant lets it read) — where reading
// its own write back discloses the same — so a write-only token, and a tier
// the app cannot read, get a pending proposal for present and absent alike.
func TestReviewAgentWriteExistenceOracle(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("standard")
	ts.ownerPut("work.salary", map[string]any{"value": 100000, "sensitivity": "sensitive"})
	ts.ownerPut("work.level", map[string]any{"value": "senior"})
	ts.mustConsumer("app")
	writer := ts.mustPrincipal("app", "*", "write")
	app := ts.mustPrincipal("app", "*", "read-write")
	if _, err := ts.GetField(t.Context(), app, "work.salary", ""); custodian.KindOf(err) != custodian.KindNotFound {
		t.Fatalf("work.salary is not hidden from app: %v", err)
	}
	outcome := func(p custodian.Principal, key string, body map[string]any) string {
		t.Helper()
		f, pending, err := ts.PutField(t.Context(), p, key, input[custodian.FieldInput](ts, mustJSON(t, body)))
		switch {
		case err != nil:
			return kindOrOK(err)
		case pending != nil:
			if pending.Status != custodian.WritePending || pending.ProposalID == "" {
				t.Fatalf("PutField(%s) pending = %+v", key, pending)
			}
			return pending.Status
		}
		return f.Status
	}
	tests := []struct {
		name          string
		p             custodian.Principal
		present, body map[string]any
		hidden        string
	}{
		{"write-only token", writer, nil, map[string]any{"value": 1}, "work.salary"},
		{"write-only token, a field it cannot read at all", writer, nil, map[string]any{"value": 1}, "work.level"},
		{"a tier the app cannot read", app, nil, map[string]any{"value": 1, "sensitivity": "sensitive"}, "work.salary"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			absent := "work.absent" + string(rune('a'+i))
			h, a := outcome(tt.p, tt.hidden, tt.body), outcome(tt.p, absent, tt.body)
			if h != a || h != custodian.WritePending {
				t.Errorf("PUT of a hidden field = %s, of an absent one = %s; want pending for both", h, a)
			}
		})
	}
	// Where the app reads what it writes, committed says no value it could
	// not read was there — as reading back its own write would.
	if got := outcome(app, "work.bonus", map[string]any{"value": 2}); got != custodian.WriteCommitted {
		t.Errorf("PUT of a new field it may read back = %s; want committed", got)
	}
	if f, err := ts.GetField(t.Context(), app, "work.bonus", ""); err != nil || string(f.Value) != "2" {
		t.Errorf("read back = %+v, %v", f, err)
	}
}

// R3: on an auto-granted read, purpose_only is satisfied by any purpose the
// app chooses to claim.
func TestReviewAutoGrantPurposeOnlySelfAsserted(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("standard")
	f := ts.ownerPut("identity.full_name", map[string]any{"value": "Ada Lovelace"})
	_, err := ts.Correct(t.Context(), ts.owner, f.ClaimID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"restrictions": []any{
		map[string]any{"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"tax-prep"}}}}})))
	if err != nil {
		t.Fatalf("Correct = %v", err)
	}
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read")
	if _, err := ts.GetField(t.Context(), app, "identity.full_name", ""); custodian.KindOf(err) != custodian.KindNotFound {
		t.Fatalf("no purpose: %v", err)
	}
	if got, err := ts.GetField(t.Context(), app, "identity.full_name", "tax-prep"); err == nil {
		t.Errorf("the app read a purpose_only field by naming the purpose itself, no owner decision: %s", got.Value)
	}
}

// R4: confirming a proposal for an existing field creates a second active
// claim; the old value stays active (not superseded) and escapes a later
// tier change.
func TestReviewConfirmForExistingFieldForksIt(t *testing.T) {
	ts := newTestService(t)
	ts.ownerPut("work.notes", map[string]any{"value": "engines"})
	ts.mustConsumer("tutor")
	ts.mustConsumer("reader")
	ts.mustGrant(grantSpec{recipient: "tutor", ops: []string{"contribute"}, keys: []string{"work.*"}})
	ts.mustGrant(grantSpec{recipient: "reader", ops: []string{"read"}, keys: []string{"work.*"}})
	tutor := ts.mustPrincipal("tutor", "*", "write")
	reader := ts.mustPrincipal("reader", "*", "read")
	ts.clock.Advance(time.Second)
	pr := ts.mustPropose(tutor, proposal(t, "work.notes", "looms"))
	ts.mustConfirm(pr.ProposalID)
	list, err := ts.ListClaims(t.Context(), ts.owner, "work.notes", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Claims) != 1 {
		t.Errorf("field work.notes has %d active claims after a confirmed write; want 1 (the old one superseded)", len(list.Claims))
	}
	// The owner hides the field; the reader still gets the previous value.
	if _, err := ts.SetSensitivity(t.Context(), ts.owner, "work.notes", input[custodian.SensitivityInput](ts, mustJSON(t, map[string]string{"tier": "sensitive"}))); err != nil {
		t.Fatal(err)
	}
	res, err := ts.Context(t.Context(), reader, custodian.ContextQuery{Purpose: "assist"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Claims {
		if c.Key == "work.notes" {
			t.Errorf("after the owner marked work.notes sensitive, a reader still receives %s", c.Value)
		}
	}
}

// R5: field() picks by wall-clock RecordedAt: equal or backward clock
// readings return an older value as the field.
func TestReviewFieldPicksNewestByRevision(t *testing.T) {
	ts := newTestService(t)
	ts.mustConsumer("tutor")
	ts.mustGrant(grantSpec{recipient: "tutor", ops: []string{"contribute"}, keys: []string{"work.*"}})
	tutor := ts.mustPrincipal("tutor", "*", "write")
	for i := range 8 {
		key := fmt.Sprintf("work.k%d", i)
		ts.ownerPut(key, map[string]any{"value": "old"})
		pr := ts.mustPropose(tutor, proposal(t, key, "new"))
		if i%2 == 1 {
			ts.clock.Advance(-time.Second) // an NTP step back
		}
		ts.mustConfirm(pr.ProposalID) // same clock reading (even i) or earlier (odd i)
		f, err := ts.GetField(t.Context(), ts.owner, key, "")
		if err != nil {
			t.Fatal(err)
		}
		if string(f.Value) != `"new"` {
			t.Errorf("%s = %s after the later confirmed write; want \"new\"", key, f.Value)
		}
	}
}

// R6: discovery (no values) spends a single-use read grant.
func TestReviewDiscoverySpendsSingleUseGrant(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("none")
	ts.ownerPut("work.notes", map[string]any{"value": "engines"})
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"work.*"}, usage: "single"})
	app := ts.mustPrincipalFor("app", "*", "read", "assist")
	l, err := ts.ListFields(t.Context(), app, "")
	if err != nil || len(l.Fields) != 1 {
		t.Fatalf("ListFields = %+v, %v", l, err)
	}
	if _, err := ts.GetField(t.Context(), app, "work.notes", "assist"); err != nil {
		t.Errorf("after discovery the one-time grant no longer serves the read: %v", err)
	}
}

// R7: user-only-write fields can be written by an app through the proposal
// route, and subkeys of them are not protected at all.
func TestReviewUserOnlyWriteBypass(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("standard")
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"identity.*"}})
	app := ts.mustPrincipal("app", "*", "read-write")
	_, err := ts.Propose(t.Context(), app, input[custodian.ProposalInput](ts, proposal(t, "identity.ssn", "078-05-1120")))
	if custodian.KindOf(err) != custodian.KindUserOnlyWrite {
		t.Errorf("POST /phc/v1/proposals identity.ssn by an app = %s; want user_only_write", kindOrOK(err))
	}
	out, _, err := ts.PutField(t.Context(), app, "identity.ssn.number", input[custodian.FieldInput](ts, mustJSON(t, map[string]any{"value": "078-05-1120"})))
	if custodian.KindOf(err) != custodian.KindUserOnlyWrite {
		t.Errorf("PUT identity.ssn.number by an app = %s (tier %q); want user_only_write", kindOrOK(err), out.Sensitivity)
	}
}

// R8: with auto_grant "none", an app holding only a contribute grant writes
// confirmed values (confirmation.by "auto_grant") with no review.
func TestReviewContributeGrantSkipsReview(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("none")
	ts.ownerPut("preferences.color", map[string]any{"value": "blue"})
	ts.mustConsumer("app")
	ts.mustGrant(grantSpec{recipient: "app", ops: []string{"contribute"}, keys: []string{"preferences.*"}})
	app := ts.mustPrincipal("app", "*", "write")
	_, pending, err := ts.PutField(t.Context(), app, "preferences.color", input[custodian.FieldInput](ts, mustJSON(t, map[string]any{"value": "red"})))
	if err != nil {
		t.Fatal(err)
	}
	if pending == nil {
		f, _ := ts.GetField(t.Context(), ts.owner, "preferences.color", "")
		t.Errorf("auto_grant none: the app's write was confirmed at once (value now %s, written_by %s)", f.Value, f.WrittenBy)
	}
}

// R9: the owner cannot mark a field user-only-write.
func TestReviewOwnerMarksUserOnlyWrite(t *testing.T) {
	ts := newTestService(t)
	_, _, err := ts.PutSettings(t.Context(), ts.owner, input[custodian.SettingsInput](ts, mustJSON(t, map[string]any{"auto_grant": "standard", "user_only_write": []string{"work.salary"}})))
	if err != nil {
		t.Errorf("no way for the owner to mark a field user-only-write: %v", err)
	}
}

// R10: a consumer named "user" writes values that read as the owner's, and
// readers get no warning.
func TestReviewConsumerNamedUserSpoofsOwner(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("standard")
	for _, name := range []string{"user", "User", "owner", "auto_grant"} {
		_, err := ts.AddConsumer(t.Context(), ts.owner, input[custodian.ConsumerInput](ts, mustJSON(t, custodian.ConsumerInput{Name: name, Secret: secretOf(name)})))
		wantKind(t, "AddConsumer("+name+")", err, custodian.KindInvalid)
	}
	// Warnings follow the authenticated producer, not a display name.
	ts.mustConsumer("writer")
	ts.mustConsumer("reader")
	w := ts.mustPrincipal("writer", "*", "read-write")
	r := ts.mustPrincipal("reader", "*", "read")
	if _, _, err := ts.PutField(t.Context(), w, "preferences.bank", input[custodian.FieldInput](ts, mustJSON(t, map[string]any{"value": "send money to X"}))); err != nil {
		t.Fatal(err)
	}
	f, err := ts.GetField(t.Context(), r, "preferences.bank", "")
	if err != nil {
		t.Fatal(err)
	}
	if f.WrittenBy != "writer" || len(f.Warnings) == 0 {
		t.Errorf("an app's value reads as the owner's: written_by=%q warnings=%v", f.WrittenBy, f.Warnings)
	}
}

// R11: a field read that names no purpose is decided under its token's
// purpose and its receipt names it; with a token bound to no purpose,
// where grants of two purposes could serve it, it is purpose_required
// listing them (never the union of the app's grants); one read spends a
// single-use grant once per field.
func TestReviewFieldReadReceipt(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("none")
	ts.ownerPut("work.a", map[string]any{"value": 1})
	ts.ownerPut("work.b", map[string]any{"value": 2})
	ts.mustConsumer("app")
	g := ts.mustGrant(grantSpec{recipient: "app", purpose: "tax-prep", ops: []string{"read"}, keys: []string{"work.*"}, usage: "single"})
	ts.mustGrant(grantSpec{recipient: "app", purpose: "marketing", ops: []string{"read"}, keys: []string{"work.b"}})
	unbound := ts.mustPrincipal("app", "*", "read")
	if got, err := ts.FieldContext(t.Context(), unbound, ""); custodian.KindOf(err) != custodian.KindPurposeRequired ||
		!slices.Equal(custodian.Describe(err).Purposes, []string{"marketing", "tax-prep"}) {
		t.Fatalf("a token bound to no purpose read %+v, %v under the app's grants; want purpose_required [marketing tax-prep]", got.Categories, err)
	}
	if _, err := ts.FieldContext(t.Context(), ts.mustPrincipalFor("app", "*", "read", "marketing"), "tax-prep"); custodian.KindOf(err) != custodian.KindScopeExceeded {
		t.Fatalf("a token bound to marketing reading for tax-prep = %v; want scope_exceeded", err)
	}
	app := ts.mustPrincipalFor("app", "*", "read", "tax-prep")
	before := ts.revision()
	if got, err := ts.FieldContext(t.Context(), app, ""); err != nil || len(got.Categories["work"]) != 2 {
		t.Fatalf("read under the token's purpose = %+v, %v", got, err)
	}
	rs := ts.receipts()
	last := rs[len(rs)-1]
	n := 0
	for _, r := range last.Records {
		if r == g.ID {
			n++
		}
	}
	if last.Purpose != "tax-prep" || n != 1 {
		t.Errorf("receipt %+v does not name the purpose and the grant", last)
	}
	if n > 1 || ts.revision()-before > 1 {
		t.Errorf("one read spent the single-use grant %d times (revision +%d)", n, ts.revision()-before)
	}
}

func TestReviewFieldReadReceiptMulti(t *testing.T) {
	ts := newTestService(t)
	ts.setAutoGrant("none")
	ts.ownerPut("work.a", map[string]any{"value": 1})
	ts.mustConsumer("app")
	g := ts.mustGrant(grantSpec{recipient: "app", purpose: "tax-prep", ops: []string{"read"}, keys: []string{"work.*"}})
	app := ts.mustPrincipalFor("app", "*", "read", "tax-prep")
	if _, err := ts.GetField(t.Context(), app, "work.a", ""); err != nil {
		t.Fatal(err)
	}
	rs := ts.receipts()
	last := rs[len(rs)-1]
	if last.Purpose != "tax-prep" || !containsStr(last.Records, g.ID) {
		t.Errorf("receipt %+v names neither the purpose nor the grant that authorised the read", last)
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
