package custodian_test

import (
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestChannelRules checks the rules that differ by face: the owner's
// session is refused on MCP, an answer on MCP never carries a token, and
// only a pending, non-critical request on MCP, with the owner's leave, may
// be put to the person in the app's host.
func TestChannelRules(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	appToken := ts.mustToken("app", "notes.*", custodian.ModeRead)

	for _, tc := range []struct {
		name   string
		ch     custodian.Channel
		bearer string
		want   custodian.Kind // KindInternal: accepted
	}{
		{"owner on HTTP", custodian.ChannelHTTP, ts.ownerToken, custodian.KindInternal},
		{"owner on MCP", custodian.ChannelMCP, ts.ownerToken, custodian.KindUnauthenticated},
		{"app on HTTP", custodian.ChannelHTTP, appToken, custodian.KindInternal},
		{"app on MCP", custodian.ChannelMCP, appToken, custodian.KindInternal},
		{"app on no channel", custodian.Channel(0), appToken, custodian.KindUnauthenticated},
		{"garbage on HTTP", custodian.ChannelHTTP, "ctx_nope", custodian.KindUnauthenticated},
	} {
		p, err := ts.AuthenticateOn(ctx, tc.ch, tc.bearer)
		if tc.want == custodian.KindInternal {
			if err != nil {
				t.Errorf("%s: AuthenticateOn = %v; want accepted", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: AuthenticateOn = %+v; want refused", tc.name, p)
			continue
		}
		wantKind(t, tc.name, err, tc.want)
	}

	// A standard scope is granted at once (auto_grant standard): with a
	// token over HTTP only.
	if _, _, err := ts.PutSettings(ctx, ts.owner, input[custodian.SettingsInput](ts, []byte(`{"auto_grant":"standard"}`))); err != nil {
		t.Fatal(err)
	}
	app, err := ts.AuthenticateOn(ctx, custodian.ChannelHTTP, appToken)
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"scope":"notes.*","purpose":"assist","duration":"1h"}`)
	v, err := ts.RequestContext(ctx, custodian.ChannelHTTP, app, input[custodian.RequestInput](ts, req))
	if err != nil || v.Status != custodian.RequestApproved || v.Token == "" {
		t.Errorf("RequestContext(HTTP) = %+v, %v; want approved with a token", v, err)
	}
	v, err = ts.RequestContext(ctx, custodian.ChannelMCP, app, input[custodian.RequestInput](ts, req))
	if err != nil || v.Status != custodian.RequestApproved || v.Token != "" {
		t.Errorf("RequestContext(MCP) = %+v, %v; want approved without a token", v, err)
	}
	if w, err := ts.PollRequest(ctx, custodian.ChannelMCP, app, v.ID); err != nil || w.Token != "" {
		t.Errorf("PollRequest(MCP) = %+v, %v; want no token", w, err)
	}
	if ts.MayAskInHost(custodian.ChannelMCP, v) {
		t.Errorf("MayAskInHost(an approved request) = true")
	}

	sensitive, err := ts.RequestContext(ctx, custodian.ChannelMCP, app, input[custodian.RequestInput](ts, []byte(`{"scope":"health.*","purpose":"assist"}`)))
	if err != nil || sensitive.Status != custodian.RequestPending {
		t.Fatalf("RequestContext(health.*) = %+v, %v; want pending", sensitive, err)
	}
	critical, err := ts.RequestContext(ctx, custodian.ChannelMCP, app, input[custodian.RequestInput](ts, []byte(`{"scope":"credentials.*","purpose":"assist"}`)))
	if err != nil || critical.Status != custodian.RequestPending || critical.Tier != custodian.SensitivityCritical {
		t.Fatalf("RequestContext(credentials.*) = %+v, %v; want pending, critical", critical, err)
	}
	if ts.MayAskInHost(custodian.ChannelMCP, sensitive) {
		t.Errorf("MayAskInHost(sensitive) = true before the owner allows elicited approvals")
	}
	if ts.MayTellInHost(custodian.ChannelMCP, critical) {
		t.Errorf("MayTellInHost(critical) = true before the owner allows elicited approvals")
	}
	if _, _, err := ts.PutSettings(ctx, ts.owner, input[custodian.SettingsInput](ts, []byte(`{"elicited_approvals":true}`))); err != nil {
		t.Fatal(err)
	}
	// Sensitive data is asked in the host; critical data is told, not
	// asked: on MCP, pending, with elicited approvals allowed.
	for _, tc := range []struct {
		name      string
		ch        custodian.Channel
		v         custodian.RequestView
		ask, tell bool
	}{
		{"sensitive on MCP", custodian.ChannelMCP, sensitive, true, false},
		{"sensitive on HTTP", custodian.ChannelHTTP, sensitive, false, false},
		{"critical on MCP", custodian.ChannelMCP, critical, false, true},
		{"critical on HTTP", custodian.ChannelHTTP, critical, false, false},
		{"approved", custodian.ChannelMCP, v, false, false},
	} {
		if got := ts.MayAskInHost(tc.ch, tc.v); got != tc.ask {
			t.Errorf("%s: MayAskInHost = %v; want %v", tc.name, got, tc.ask)
		}
		if got := ts.MayTellInHost(tc.ch, tc.v); got != tc.tell {
			t.Errorf("%s: MayTellInHost = %v; want %v", tc.name, got, tc.tell)
		}
	}
}

// TestSealedWhileLocked: while the vault is locked no token can be
// checked. Over MCP any well-formed service token is then a sealed
// principal — the same for a valid and a made-up one — whose every
// operation answers KindLocked and whose status says locked; over HTTP it
// is KindLocked. After the unlock the token is checked again, and its
// session binding is the same as before the lock.
func TestSealedWhileLocked(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	appToken := ts.mustToken("app", "notes.*", custodian.ModeRead)
	before, err := ts.AuthenticateOn(ctx, custodian.ChannelMCP, appToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	madeUp := "ctxs_" + strings.Repeat("A", 43)
	var bindings []string
	for _, bearer := range []string{appToken, madeUp} {
		p, err := ts.AuthenticateOn(ctx, custodian.ChannelMCP, bearer)
		if err != nil || p.Kind() != custodian.PrincipalSealed {
			t.Fatalf("AuthenticateOn(MCP, locked) = %+v, %v; want a sealed principal", p, err)
		}
		bindings = append(bindings, p.SessionBinding())
		if st := ts.Status(ctx, p); !st.Locked {
			t.Errorf("Status(sealed) = %+v; want locked", st)
		}
		_, err = ts.GetField(ctx, p, "notes.a", "")
		wantKind(t, "GetField(sealed)", err, custodian.KindLocked)
		_, err = ts.SearchFields(ctx, p, "notes", "", 0)
		wantKind(t, "SearchFields(sealed)", err, custodian.KindLocked)
		_, err = ts.OwnProposals(ctx, p, "")
		wantKind(t, "OwnProposals(sealed)", err, custodian.KindLocked)
		_, err = ts.RequestContext(ctx, custodian.ChannelMCP, p, input[custodian.RequestInput](ts, []byte(`{"scope":"notes.*","purpose":"assist"}`)))
		wantKind(t, "RequestContext(sealed)", err, custodian.KindLocked)
	}
	if bindings[0] != before.SessionBinding() || bindings[0] == bindings[1] {
		t.Errorf("session bindings %q (before the lock %q): want the token's own, the same across the lock", bindings, before.SessionBinding())
	}
	_, err = ts.AuthenticateOn(ctx, custodian.ChannelHTTP, appToken)
	wantKind(t, "AuthenticateOn(HTTP, locked)", err, custodian.KindLocked)
	_, err = ts.AuthenticateOn(ctx, custodian.ChannelMCP, "ctxs_short")
	wantKind(t, "AuthenticateOn(MCP, locked, malformed)", err, custodian.KindLocked)

	// A sealed principal kept past the unlock (its session not yet opened
	// again) still says locked and gets vault_locked from every operation.
	sealed, err := ts.AuthenticateOn(ctx, custodian.ChannelMCP, madeUp)
	if err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if st := ts.Status(ctx, sealed); !st.Locked {
		t.Errorf("Status(sealed) after the unlock = %+v; want locked", st)
	}
	_, _, err = ts.PutField(ctx, sealed, "notes.a", input[custodian.FieldInput](ts, []byte(`{"value":"x"}`)))
	wantKind(t, "PutField(sealed) after the unlock", err, custodian.KindLocked)
	_, err = ts.Context(ctx, sealed, custodian.ContextQuery{Purpose: "assist"})
	wantKind(t, "Context(sealed) after the unlock", err, custodian.KindLocked)
	if p, err := ts.AuthenticateOn(ctx, custodian.ChannelMCP, appToken); err != nil || p.Kind() != custodian.PrincipalConsumer {
		t.Errorf("AuthenticateOn(MCP) after unlock = %+v, %v", p, err)
	}
	_, err = ts.AuthenticateOn(ctx, custodian.ChannelMCP, madeUp)
	wantKind(t, "AuthenticateOn(MCP, made-up) after unlock", err, custodian.KindUnauthenticated)
}
