package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type requestAnswer struct {
	ID        string `json:"request_id"`
	Status    string `json:"status"`
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
}

// TestContextRequests: the PCP approval flow — granted at once for
// standard scopes, pending for sensitive ones until the owner approves
// (critical ones only with the password re-entered), one token per
// approval, single use spent by one read, and denial remembered.
func TestContextRequests(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	for id, v := range map[string]string{"preferences.tea": "earl grey", "identity.dob": "1815-12-10", "identity.ssn": "078-05-1120"} {
		h.must(200, "PUT", "/context/fields/"+id, h.owner, map[string]any{"value": v}, nil)
	}
	app := h.consumer("app", "*", "read")
	other := h.consumer("other", "*", "read")

	// Under PCP's own policy (auto_grant standard) a standard scope is
	// granted at once, with a token for that scope.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	var req requestAnswer
	h.must(201, "POST", "/context/requests", app, map[string]any{"scope": "preferences.*", "purpose": "assist", "duration": "1h"}, &req)
	if req.Status != "approved" || !strings.HasPrefix(req.Token, "ctxs_") || req.ExpiresAt == "" {
		t.Fatalf("standard request = %+v", req)
	}
	var f wireField
	h.must(200, "GET", "/context/fields/preferences.tea", req.Token, nil, &f)
	if f.Value != "earl grey" {
		t.Fatalf("read under the granted request = %+v", f)
	}
	h.constraint(403, "scope_exceeded", "GET", "/context/fields/identity.nickname", req.Token, nil)

	// A sensitive field needs a per-request approval: the app asks for it
	// (a read files none); its read then names the request to poll,
	// whether or not the field exists.
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.dob", app, nil)
	var e struct {
		RequestID string `json:"request_id"`
	}
	h.must(202, "POST", "/context/requests", app, map[string]any{"scope": "identity.dob", "purpose": "forms", "usage": "single"}, &req)
	raw := h.constraint(403, "approval_required", "GET", "/context/fields/identity.dob", app, nil)
	if json.Unmarshal(raw, &e) != nil || e.RequestID != req.ID {
		t.Fatalf("approval_required without the pending request_id %s: %s", req.ID, raw)
	}
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.date_of_birth", app, nil)
	req = requestAnswer{}
	h.must(200, "GET", "/context/requests/"+e.RequestID, app, nil, &req)
	if req.Status != "pending" || req.Token != "" {
		t.Fatalf("poll before approval = %+v", req)
	}
	h.constraint(404, "not_found", "GET", "/context/requests/"+e.RequestID, other, nil)
	if out := h.phcOK("requests"); !strings.Contains(out, e.RequestID) || !strings.Contains(out, "sensitive") {
		t.Fatalf("phc requests = %q", out)
	}
	h.phcOK("approve", e.RequestID)
	h.constraint(409, "conflict", "POST", "/context/requests/"+e.RequestID+"/approve", h.owner, nil)
	req = requestAnswer{}
	h.must(200, "GET", "/context/requests/"+e.RequestID, app, nil, &req)
	if req.Status != "approved" || req.Token == "" {
		t.Fatalf("poll after approval = %+v", req)
	}
	dobToken := req.Token
	req = requestAnswer{}
	h.must(200, "GET", "/context/requests/"+e.RequestID, app, nil, &req)
	if req.Token != "" {
		t.Fatal("a second poll returned the token again")
	}
	h.must(200, "GET", "/context/fields/identity.dob", dobToken, nil, &f)
	if f.Value != "1815-12-10" {
		t.Fatalf("approved sensitive read = %+v", f)
	}
	// The read-time request was single use: the second read needs another.
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.dob", dobToken, nil)

	// Critical data: approval needs the password again.
	req = requestAnswer{}
	h.must(202, "POST", "/context/requests", app, map[string]any{"scope": "identity.ssn", "purpose": "taxes", "usage": "single"}, &req)
	e.RequestID = req.ID
	h.constraint(401, "unauthenticated", "POST", "/context/requests/"+e.RequestID+"/approve", h.owner, nil)
	h.constraint(401, "unauthenticated", "POST", "/context/requests/"+e.RequestID+"/approve", h.owner, map[string]string{"password": "wrong"})
	h.phcOK("approve", e.RequestID, "--password")
	req = requestAnswer{}
	h.must(200, "GET", "/context/requests/"+e.RequestID, app, nil, &req)
	h.must(200, "GET", "/context/fields/identity.ssn", req.Token, nil, &f)
	// Critical data goes as a value reference by default (docs/formats/reference.md).
	if f.Value != "⟦SSN_1:07•••20⟧" {
		t.Fatalf("approved critical read = %+v", f)
	}

	// A denial is remembered, for present and absent fields alike.
	req = requestAnswer{}
	h.must(202, "POST", "/context/requests", app, map[string]any{"scope": "health.*", "purpose": "assist"}, &req)
	h.phcOK("deny", req.ID)
	h.constraint(403, "approval_denied", "GET", "/context/fields/health.allergies", app, nil)

	h.constraint(403, "session_required", "POST", "/context/requests/"+req.ID+"/approve", app, nil)
	h.constraint(403, "session_required", "GET", "/context/requests", app, nil)
	h.constraint(400, "invalid_request", "POST", "/context/requests", app, map[string]any{"scope": "", "purpose": "assist"})
	h.constraint(400, "invalid_request", "POST", "/context/requests", app, map[string]any{"scope": "a.*", "purpose": "assist", "usage": "twice"})
}

// TestPendingRequestsBounded: no more than twenty requests may wait for one
// consumer, whether it files them or its reads do.
func TestPendingRequestsBounded(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	app := h.consumer("app", "*", "read")
	for i := range 20 {
		h.must(202, "POST", "/context/requests", app, map[string]any{"scope": fmt.Sprintf("health.k%d", i), "purpose": "care"}, nil)
	}
	h.constraint(429, "rate_limited", "POST", "/context/requests", app, map[string]any{"scope": "health.k20", "purpose": "care"})
	h.constraint(429, "rate_limited", "GET", "/context/fields/health.k20", app, nil)     // a read would file a 21st
	h.constraint(403, "approval_required", "GET", "/context/fields/health.k3", app, nil) // its pending request answers
}
