package custodian_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

// TestReadableNowIsTheRead checks that what ReadableNow shows the owner is,
// purpose by purpose, exactly what the recipient's context read serves
// (with a token of the widest scope), and that it follows grants as they
// are made and revoked, and the consumer's approval.
func TestReadableNowIsTheRead(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustClaim("name.display", "Ada", "work")
	ts.mustClaim("work.title", "Engineer", "work")
	ts.mustClaim("home.city", "Lisbon")
	ts.mustConsumer("app")
	ts.mustConsumer("other")
	reader := ts.mustPrincipal("app", "*", "read")

	readable := func() map[string][]string {
		t.Helper()
		r, err := ts.ReadableNow(ctx, ts.owner, "app")
		if err != nil {
			t.Fatalf("ReadableNow = %v", err)
		}
		out := map[string][]string{}
		for _, p := range r.Purposes {
			keys := []string{}
			for _, c := range p.Claims {
				keys = append(keys, c.Key)
			}
			slices.Sort(keys)
			out[p.Purpose] = keys
		}
		return out
	}
	read := func(purposes ...string) map[string][]string {
		t.Helper()
		out := map[string][]string{}
		for _, pu := range purposes {
			keys, err := ts.contextKeys(reader, custodian.ContextQuery{Purpose: pu})
			if err != nil {
				t.Fatalf("Context(%s) = %v", pu, err)
			}
			out[pu] = keys
		}
		return out
	}

	if got := readable(); len(got) != 0 {
		t.Fatalf("ReadableNow before any grant = %v; want nothing", got)
	}
	g1 := ts.mustGrant(grantSpec{recipient: "app", purpose: "assist", ops: []string{"read"}, personas: []string{"work"}})
	ts.mustGrant(grantSpec{recipient: "app", purpose: "travel", ops: []string{"read"}, keys: []string{"home.*"}})
	ts.mustGrant(grantSpec{recipient: "other", purpose: "assist", ops: []string{"read"}, keys: []string{"*"}})
	want := map[string][]string{"assist": {"name.display", "work.title"}, "travel": {"home.city"}}
	if got := readable(); !cmp.Equal(got, want) {
		t.Errorf("ReadableNow = %v; want %v", got, want)
	}
	if got, served := readable(), read("assist", "travel"); !cmp.Equal(got, served) {
		t.Errorf("ReadableNow = %v; the read serves %v", got, served)
	}

	if _, err := ts.RevokeGrant(ctx, ts.owner, g1.ID); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{"travel": {"home.city"}}
	if got := readable(); !cmp.Equal(got, want) {
		t.Errorf("ReadableNow after revoking = %v; want %v", got, want)
	}
	if keys, _ := ts.contextKeys(reader, custodian.ContextQuery{Purpose: "assist"}); len(keys) != 0 {
		t.Errorf("the read for assist after revoking serves %v; want nothing", keys)
	}

	// Not for anyone but the owner.
	_, err := ts.ReadableNow(ctx, reader, "app")
	wantKind(t, "ReadableNow(consumer)", err, custodian.KindSessionRequired)
	_, err = ts.ReadableNow(ctx, ts.owner, "")
	wantKind(t, "ReadableNow(no recipient)", err, custodian.KindInvalid)
}

// TestSessionOpen checks that a lock ends the owner's session as
// SessionOpen reports it.
func TestSessionOpen(t *testing.T) {
	ts := newTestService(t)
	if !ts.SessionOpen(ts.owner) {
		t.Fatal("SessionOpen(owner) = false on an unlocked vault")
	}
	reader := func() custodian.Principal { ts.mustConsumer("app"); return ts.mustPrincipal("app", "*", "read") }()
	if ts.SessionOpen(reader) {
		t.Error("SessionOpen(consumer) = true")
	}
	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatal(err)
	}
	if ts.SessionOpen(ts.owner) {
		t.Error("SessionOpen(owner) = true after lock")
	}
	old := ts.owner
	ts.unlock()
	if ts.SessionOpen(old) {
		t.Error("SessionOpen(old session) = true after lock and unlock")
	}
	if !ts.SessionOpen(ts.owner) {
		t.Error("SessionOpen(new session) = false")
	}
}
