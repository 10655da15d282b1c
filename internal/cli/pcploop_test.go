package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Issue 28, "PCP clients": a client written from the PCP text meets the
// rules of reuse without a retry loop. Each test sends what a spec client
// sends, over a real daemon.

// wireErr is an error answer as a client reads it.
type wireErr struct {
	Error      string   `json:"error"`
	Constraint string   `json:"constraint"`
	RequestID  string   `json:"request_id"`
	Purposes   []string `json:"purposes"`
}

// refused sends a request that must answer status and constraint, and
// decodes the error.
func (h *harness) refused(status int, constraint, method, path, token string, body any) wireErr {
	h.t.Helper()
	raw := h.constraint(status, constraint, method, path, token, body)
	var e wireErr
	if err := json.Unmarshal(raw, &e); err != nil {
		h.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
	}
	return e
}

// fieldReceipts returns the purposes and decisions of consumer's field
// read receipts, oldest first.
func (h *harness) fieldReceipts(consumer string) (purposes, decisions []string) {
	h.t.Helper()
	var receipts struct {
		Receipts []struct {
			Operation string `json:"operation"`
			Recipient string `json:"recipient"`
			Purpose   string `json:"purpose"`
			Decision  string `json:"decision"`
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &receipts)
	for _, r := range receipts.Receipts {
		if r.Recipient == consumer && r.Operation == "field.get" {
			purposes, decisions = append(purposes, r.Purpose), append(decisions, r.Decision)
		}
	}
	return purposes, decisions
}

// TestNoRetryLoop (issue 28, acceptance 2): a long-lived PCP token (§10),
// minted without a purpose, reads the field on its next try once the owner
// approved its app's request, without naming a purpose; the receipt names
// the request's purpose. Where grants of several purposes could serve a
// read, the answer is 403 purpose_required listing only the app's own
// purposes that could serve it, over HTTP and over MCP, and the hint names
// no route the app cannot use.
func TestNoRetryLoop(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/identity.dob", h.owner, map[string]any{"value": "1990-06-15"}, nil)
	h.must(200, "PUT", "/context/fields/identity.full_name", h.owner, map[string]any{"value": "Cool Cucumber"}, nil)
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "life-daemon", "secret": specSecret}, nil)
	h.must(200, "POST", "/phc/v1/consumers/life-daemon/approve", h.owner, nil, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"long_lived_tokens": true}, nil)
	// PCP §10 "Long-lived", as written (with the secret §4 requires).
	var tok struct {
		Token string `json:"token"`
	}
	h.must(201, "POST", "/context/tokens/service", "", []byte(`{
  "consumer": "life-daemon",
  "secret": "`+specSecret+`",
  "scope": "*",
  "ttl": "8760h"
}`), &tok)
	daemon := tok.Token

	// The app asks for the sensitive field (PCP §4's request); the owner
	// approves; the same token reads it on its next try, naming no purpose.
	const visa = "Fill Australian visa application form"
	var req requestAnswer
	h.must(202, "POST", "/context/requests", daemon, map[string]any{"scope": "identity.dob", "purpose": visa, "duration": "30 minutes"}, &req)
	h.must(200, "POST", "/context/requests/"+req.ID+"/approve", h.owner, nil, nil)
	var f wireField
	if status, raw := h.do("GET", "/context/fields/identity.dob", daemon, nil); status != 200 || json.Unmarshal(raw, &f) != nil || f.Value != "1990-06-15" {
		t.Fatalf("the read after approval = %d %s; want 200 with the value", status, raw)
	}
	purposes, decisions := h.fieldReceipts("life-daemon")
	if n := len(purposes); n == 0 || purposes[n-1] != visa || decisions[n-1] != "allow" {
		t.Fatalf("the read's receipt names purpose %q (%v); want %q", purposes, decisions, visa)
	}

	// Two grants, for two purposes, could serve identity.full_name: the
	// app names one. A grant of another app, and one of its own that
	// serves nothing here, are not listed.
	h.grant("life-daemon", "letters", "read", map[string]any{"keys": []string{"identity.full_name"}})
	h.grant("life-daemon", "assist", "read", map[string]any{"keys": []string{"identity.*"}})
	h.grant("life-daemon", "work planning", "read", map[string]any{"keys": []string{"work.*"}})
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "other", "secret": specSecret}, nil)
	h.grant("other", "secret project", "read", map[string]any{"keys": []string{"identity.*"}})
	e := h.refused(403, "purpose_required", "GET", "/context/fields/identity.full_name", daemon, nil)
	if !slices.Equal(e.Purposes, []string{"assist", "letters"}) {
		t.Fatalf("purposes = %q; want the app's own serving purposes [assist letters]", e.Purposes)
	}
	if !strings.Contains(e.Error, "purpose") || strings.Contains(e.Error, "/context/requests") || strings.Contains(e.Error, "Cool") {
		t.Fatalf("hint = %q; want it to say to pass purpose, naming no route", e.Error)
	}
	h.must(200, "GET", "/context/fields/identity.full_name?purpose=letters", daemon, nil, &f)
	if f.Value != "Cool Cucumber" {
		t.Fatalf("the read naming a listed purpose = %+v", f)
	}
	// The sensitive field is still served under the one grant that can.
	h.must(200, "GET", "/context/fields/identity.dob", daemon, nil, nil)

	// Over MCP, the same refusal carries the same purposes.
	cs, err := mcpSession(t, h, daemon)
	if err != nil {
		t.Fatal(err)
	}
	out, isErr := call(t, cs, "context_get", map[string]any{"id": "identity.full_name"})
	if raw := asJSON(out); !isErr || out["constraint"] != "purpose_required" || !strings.Contains(string(raw), `"purposes":["assist","letters"]`) {
		t.Fatalf("context_get over MCP = %s; want purpose_required with the purposes", raw)
	}
}

// TestVaultFilesApproval (PCP §10 "Your agent doesn't need to handle
// approval flows"): a read inside the token's scope that needs the owner's
// approval files one pending request, or joins the one already open, and
// answers its request_id; the answer is the same for a present field and
// an absent one; a read outside the scope files nothing; the approval lets
// the same token read on its next try; a denial stands; the app's quota of
// pending requests bounds them.
func TestVaultFilesApproval(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/health.allergy", h.owner, map[string]any{"value": "peanuts"}, nil)
	app := h.consumer("carer", "health.*, identity.*", "read")

	present := h.refused(403, "approval_required", "GET", "/context/fields/health.allergy", app, nil)
	absent := h.refused(403, "approval_required", "GET", "/context/fields/health.blood_type", app, nil)
	if present.RequestID == "" || absent.RequestID == "" || present.RequestID == absent.RequestID {
		t.Fatalf("request ids %q, %q; want one filed per key", present.RequestID, absent.RequestID)
	}
	if present.Error != absent.Error {
		t.Fatalf("a present field answers %q, an absent one %q; want the same", present.Error, absent.Error)
	}
	for range 5 {
		if again := h.refused(403, "approval_required", "GET", "/context/fields/health.allergy", app, nil); again.RequestID != present.RequestID {
			t.Fatalf("a second read filed %s; want it to join %s", again.RequestID, present.RequestID)
		}
	}
	// Outside the token's scope: scope_exceeded, nothing filed.
	if e := h.refused(403, "scope_exceeded", "GET", "/context/fields/financial.income", app, nil); e.RequestID != "" {
		t.Fatalf("an out-of-scope read named a request: %+v", e)
	}
	var reqs struct {
		Requests []struct {
			ID      string   `json:"request_id"`
			Scope   []string `json:"scope"`
			Purpose string   `json:"purpose"`
			Status  string   `json:"status"`
		} `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &reqs)
	if len(reqs.Requests) != 2 {
		t.Fatalf("the owner sees %d requests; want 2: %+v", len(reqs.Requests), reqs.Requests)
	}
	var req requestAnswer
	h.must(200, "GET", "/context/requests/"+present.RequestID, app, nil, &req)
	if req.Status != "pending" {
		t.Fatalf("poll = %+v; want pending", req)
	}

	// The owner approves: the next read, same token, no purpose, reads.
	h.phcOK("approve", present.RequestID)
	var f wireField
	h.must(200, "GET", "/context/fields/health.allergy", app, nil, &f)
	if f.Value != "peanuts" {
		t.Fatalf("the read after approval = %+v", f)
	}
	// An approved request for an absent field leaves nothing to ask for.
	h.phcOK("approve", absent.RequestID)
	h.constraint(404, "not_found", "GET", "/context/fields/health.blood_type", app, nil)

	// A denial stands until the app asks anew.
	denied := h.refused(403, "approval_required", "GET", "/context/fields/identity.dob", app, nil)
	h.phcOK("deny", denied.RequestID)
	h.constraint(403, "approval_denied", "GET", "/context/fields/identity.dob", app, nil)

	// The pending-request quota (20) bounds what reads file; a read of a
	// key whose request is open still answers its id.
	var first string
	for i := range 20 {
		e := h.refused(403, "approval_required", "GET", "/context/fields/health.k"+string(rune('a'+i)), app, nil)
		if i == 0 {
			first = e.RequestID
		}
	}
	h.retryAfter("GET", "/context/fields/health.overflow", app, nil)
	if e := h.refused(403, "approval_required", "GET", "/context/fields/health.ka", app, nil); e.RequestID != first {
		t.Fatalf("a read of a key with an open request = %+v; want request %s", e, first)
	}
}

// TestAutoGrantMeansIt: under the default policy (auto_grant public), a
// request for a field the owner set public is granted at once, with a
// token that reads it. A field the app cannot see counts like an absent
// one: raising a field's tier changes nothing an app can observe.
func TestAutoGrantMeansIt(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/preferences.timezone", h.owner, map[string]any{"value": "America/Los_Angeles"}, nil)
	h.must(200, "PUT", "/context/sensitivity/preferences.timezone", h.owner, map[string]any{"tier": "public"}, nil)
	app := h.consumer("scheduler", "*", "read")
	var req struct {
		requestAnswer
		Tier string `json:"tier"`
	}
	h.must(201, "POST", "/context/requests", app, map[string]any{"scope": "preferences.timezone", "purpose": "scheduling", "duration": "1h"}, &req)
	if req.Status != "approved" || req.Token == "" || req.Tier != "public" {
		t.Fatalf("a request for a public field = %+v; want approved at once, with a token", req)
	}
	var f wireField
	h.must(200, "GET", "/context/fields/preferences.timezone", req.Token, nil, &f)
	if f.Value != "America/Los_Angeles" {
		t.Fatalf("the granted read = %+v", f)
	}
	// A token of a narrower scope asks the same and is answered the same.
	narrow := h.token("scheduler", "secret-of-scheduler-0123456789", "identity.*", "read")
	h.must(201, "POST", "/context/requests", narrow, map[string]any{"scope": "preferences.timezone", "purpose": "calendar"}, &req)
	if req.Status != "approved" || req.Token == "" {
		t.Fatalf("a request for a public field, by a token scoped elsewhere = %+v; want approved", req)
	}

	// A field raised above what the app may read answers like an absent
	// key of the same default, under either policy.
	h.must(200, "PUT", "/context/fields/preferences.diary", h.owner, map[string]any{"value": "private"}, nil)
	h.must(200, "PUT", "/context/sensitivity/preferences.diary", h.owner, map[string]any{"tier": "critical"}, nil)
	for _, policy := range []string{"public", "standard"} {
		h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": policy}, nil)
		var hidden, missing struct {
			Status string `json:"status"`
			Tier   string `json:"tier"`
			Token  string `json:"token"`
		}
		st1, raw1 := h.do("POST", "/context/requests", app, map[string]any{"scope": "preferences.diary", "purpose": "p-" + policy})
		st2, raw2 := h.do("POST", "/context/requests", app, map[string]any{"scope": "preferences.nothing", "purpose": "p-" + policy})
		_ = json.Unmarshal(raw1, &hidden)
		_ = json.Unmarshal(raw2, &missing)
		if st1 != st2 || hidden.Status != missing.Status || hidden.Tier != missing.Tier || hidden.Tier != "standard" {
			t.Fatalf("auto_grant %s: a hidden field's request = %d %s, an absent one's %d %s; want the same, tier standard", policy, st1, raw1, st2, raw2)
		}
		if hidden.Token != "" {
			raw := h.constraint(404, "not_found", "GET", "/context/fields/preferences.diary", hidden.Token, nil)
			if strings.Contains(string(raw), "private") {
				t.Fatalf("the hidden value leaked: %s", raw)
			}
		}
	}
}

// TestFieldIDFormat: a field id is category.field_name (PCP §2): a key
// without a period is a format error (400 invalid_request) on every route
// that takes a field id, for the owner and for an app, never 404.
func TestFieldIDFormat(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	app := h.consumer("app", "*", "read-write")
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/context/fields/noperiod", nil},
		{"PUT", "/context/fields/noperiod", map[string]any{"value": "x"}},
		{"DELETE", "/context/fields/noperiod", nil},
		{"PUT", "/context/sensitivity/noperiod", map[string]any{"tier": "public"}},
		{"GET", "/context/fields/Bad.Key", nil},
	} {
		h.constraint(400, "invalid_request", tc.method, tc.path, h.owner, tc.body)
	}
	h.constraint(400, "invalid_request", "GET", "/context/fields/noperiod", app, nil)
	h.constraint(400, "invalid_request", "PUT", "/context/fields/noperiod", app, map[string]any{"value": "x"})
}

// TestRatesPerToken (PCP §7 "Read endpoints 60 requests/minute per token",
// "Write endpoints 10 requests/minute per token"): each token gets the
// spec's limits; a fresh token's first request is never refused because
// another token spent its own; the app's total is bounded by its
// live-token quota, since it cannot hold more tokens than that.
func TestRatesPerToken(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 0, "writes_per_minute": 0, "live_tokens_per_app": 2}, nil)
	const secret = "secret-of-agent-0123456789"
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "agent", "secret": secret}, nil)
	first := h.token("agent", secret, "*", "read-write")
	for i := range 10 {
		h.must(202, "PUT", "/context/fields/notes.a"+string(rune('a'+i)), first, map[string]any{"value": i}, nil)
	}
	h.retryAfter("PUT", "/context/fields/notes.overflow", first, map[string]any{"value": 1})
	for range 60 {
		h.must(404, "GET", "/context/fields/notes.none", first, nil, nil)
	}
	second := h.token("agent", secret, "*", "read-write")
	h.must(404, "GET", "/context/fields/notes.none", second, nil, nil)
	for i := range 10 {
		h.must(202, "PUT", "/context/fields/notes.b"+string(rune('a'+i)), second, map[string]any{"value": i}, nil)
	}
	h.retryAfter("PUT", "/context/fields/notes.overflow", second, map[string]any{"value": 1})
	// Two live tokens at most: the app's total stays within twice a
	// token's rate however often it mints.
	h.retryAfter("POST", "/context/tokens/service", "", map[string]any{"consumer": "agent", "secret": secret, "scope": "*", "mode": "read-write"})
}
