package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/humanfmt"
)

// A client written from the PCP 0.1.0 text (issue 13, "PCP clients"), over
// a real daemon: the spec's example requests are sent as the spec writes
// them, and the answers are the ones the spec shows or the documented
// deviations of docs/pcp-compatibility.md.

// stoppedClock is a clock that stays where it is set.
type stoppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stoppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// registerConsumer registers name with its test secret and returns the
// secret.
func (h *harness) registerConsumer(name string) string {
	h.t.Helper()
	secret := "secret-of-" + name + "-0123456789"
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": name, "secret": secret}, nil)
	return secret
}

// TestPCPScopePrefixes: a scope names a field or a dotted prefix; a field
// covers the keys below it (PCP §4's request grants addresses.current; §10
// returns addresses.current.street and .city).
func TestPCPScopePrefixes(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	for key, value := range map[string]string{
		"identity.full_name": "Cool Cucumber", "identity.dob": "1990-06-15", "identity.citizenship": "AU",
		"addresses.current.street": "123 Main St", "addresses.current.city": "Seattle",
		"addresses.currently": "elsewhere", "addresses.previous.city": "Portland",
	} {
		h.must(200, "PUT", "/context/fields/"+key, h.owner, map[string]any{"value": value}, nil)
	}
	secret := h.registerConsumer("visa-agent")
	agent := h.token("visa-agent", secret, "*", "read")

	// One field at a time, under a service token scoped to a field.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	for key, value := range map[string]string{"work.project": "Atlas", "work.project.lead": "Ada", "work.projects": "many", "work.project-x": "x"} {
		h.must(200, "PUT", "/context/fields/"+key, h.owner, map[string]any{"value": value}, nil)
	}
	scoped := h.token("visa-agent", secret, "work.project", "read")
	tests := []struct {
		key        string
		status     int
		constraint string
	}{
		{"work.project", 200, ""},
		{"work.project.lead", 200, ""},
		{"work.projects", 403, "scope_exceeded"},
		{"work.project-x", 403, "scope_exceeded"},
		{"work", 400, "invalid_request"}, // a field id is category.field_name
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if tt.status == 200 {
				h.must(200, "GET", "/context/fields/"+tt.key, scoped, nil, nil)
				return
			}
			h.constraint(tt.status, tt.constraint, "GET", "/context/fields/"+tt.key, scoped, nil)
		})
	}

	// PCP §4's request, as written.
	var req struct {
		ID     string   `json:"request_id"`
		Status string   `json:"status"`
		Scope  []string `json:"scope"`
		Token  string   `json:"token"`
	}
	h.must(202, "POST", "/context/requests", agent, []byte(`{
  "scope": "identity.full_name, identity.dob, addresses.current, identity.citizenship",
  "purpose": "Fill Australian visa application form",
  "duration": "30 minutes",
  "usage": "single-use"
}`), &req)
	if req.Status != "pending" {
		t.Fatalf("the request = %+v; want pending (it reaches sensitive data)", req)
	}
	h.must(200, "POST", "/context/requests/"+req.ID+"/approve", h.owner, nil, nil)
	h.must(200, "GET", "/context/requests/"+req.ID, agent, nil, &req)
	if req.Token == "" {
		t.Fatalf("approved request = %+v; want a token", req)
	}
	var bundle struct {
		Categories map[string][]wireField `json:"categories"`
	}
	h.must(200, "GET", "/context/context", req.Token, nil, &bundle)
	got := map[string]any{}
	for _, fs := range bundle.Categories {
		for _, f := range fs {
			got[f.ID] = f.Value
		}
	}
	want := map[string]any{
		"identity.full_name": "Cool Cucumber", "identity.dob": "1990-06-15", "identity.citizenship": "AU",
		"addresses.current.street": "123 Main St", "addresses.current.city": "Seattle",
	}
	if len(got) != len(want) {
		t.Fatalf("GET /context/context = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("GET /context/context = %v; want %v", got, want)
		}
	}
}

// TestPCPOutOfScopeIsNotPending: a read outside the token's scope answers
// 403 scope_exceeded — the same for a field that exists and one that does
// not, since the token's scope is all it depends on — never
// approval_required, and files no request; inside the scope, the vault
// files one for sensitive data.
func TestPCPOutOfScopeIsNotPending(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/health.allergy", h.owner, map[string]any{"value": "peanuts"}, nil)
	h.must(200, "PUT", "/context/fields/identity.ssn", h.owner, map[string]any{"value": "078-05-1120"}, nil)
	// PCP §4's tax agent: identity.*, financial.*.
	agent := h.consumer("tax-prep-agent", "identity.*, financial.*", "read")
	tests := []struct {
		name, path string
	}{
		{"present, sensitive", "/context/fields/health.allergy"},
		{"absent, sensitive", "/context/fields/health.blood_type"},
		{"absent, standard", "/context/fields/work.employer"},
		{"absent, with a purpose", "/context/fields/health.allergy?purpose=read"},
	}
	var first []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := h.constraint(403, "scope_exceeded", "GET", tt.path, agent, nil)
			if strings.Contains(string(raw), "request_id") || strings.Contains(string(raw), "peanuts") {
				t.Fatalf("answer = %s", raw)
			}
			if first == nil {
				first = raw
			} else if !bytes.Equal(raw, first) {
				t.Fatalf("answer = %s; want the same as %s", raw, first)
			}
		})
	}
	// Inside the scope, sensitive data still waits for an approval, which
	// the vault asks for (PCP §10): the one request filed is for that key.
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.ssn", agent, nil)
	var reqs struct {
		Requests []struct {
			Scope []string `json:"scope"`
		} `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &reqs)
	if len(reqs.Requests) != 1 || !slices.Equal(reqs.Requests[0].Scope, []string{"identity.ssn"}) {
		t.Fatalf("reads filed %+v; want one request, for identity.ssn", reqs.Requests)
	}
}

// writeAnswer is what a field write answers.
type writeAnswer struct {
	Status     string `json:"status"`
	ProposalID string `json:"proposal_id"`
	Revision   uint64 `json:"revision"`
	Value      any    `json:"value"`
	WrittenBy  string `json:"written_by"`
}

// TestPCPAgentWrites: PCP §5/§9's write, as written, with a read-write
// token: public and standard writes are committed where the owner's
// auto_grant covers them (PCP's policy), else — and always for sensitive
// data — they become a proposal; the answer says which.
func TestPCPAgentWrites(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/identity.nickname", h.owner, map[string]any{"value": "Cuke"}, nil)
	secret := h.registerConsumer("tax-prep-agent")
	rw := h.token("tax-prep-agent", secret, "*", "read-write")
	tshirt := []byte(`{"value": "M", "sensitivity": "public"}`)
	tests := []struct {
		name      string
		autoGrant string
		key       string
		body      []byte
		status    int
		outcome   string
	}{
		{"PCP §5 example, default auto_grant public", "public", "identity.tshirt_size", tshirt, 202, "pending"},
		{"PCP §5 example, auto_grant standard", "standard", "identity.tshirt_size", tshirt, 200, "committed"},
		{"again: its own field", "standard", "identity.tshirt_size", []byte(`{"value": "L"}`), 200, "committed"},
		{"sensitive data waits for consent", "standard", "health.allergy", []byte(`{"value": "peanuts"}`), 202, "pending"},
		{"a value the owner wrote is not overwritten", "standard", "identity.nickname", []byte(`{"value": "Pickle"}`), 202, "pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": tt.autoGrant}, nil)
			var out writeAnswer
			h.must(tt.status, "PUT", "/context/fields/"+tt.key, rw, tt.body, &out)
			if out.Status != tt.outcome || out.Revision == 0 {
				t.Fatalf("PUT %s = %+v; want status %s with a revision", tt.key, out, tt.outcome)
			}
			switch tt.outcome {
			case "pending":
				if !strings.HasPrefix(out.ProposalID, "prp_") {
					t.Fatalf("PUT %s = %+v; want a proposal_id", tt.key, out)
				}
			case "committed":
				if out.WrittenBy != "tax-prep-agent" || out.ProposalID != "" {
					t.Fatalf("PUT %s = %+v; want the field, written_by tax-prep-agent", tt.key, out)
				}
			}
		})
	}
	var f wireField
	h.must(200, "GET", "/context/fields/identity.nickname", h.owner, nil, &f)
	if f.Value != "Cuke" {
		t.Fatalf("the owner's value became %v", f.Value)
	}
}

// TestPCPLongLivedTokens: PCP §10's long-lived token ("ttl": "8760h") is
// clamped to 30 days, with a warning and the real expires_at, unless the
// owner allows long-lived tokens; then it lives a year. phc token
// --long-lived asks for it.
func TestPCPLongLivedTokens(t *testing.T) {
	t.Parallel()
	t0 := time.Now().UTC().Truncate(time.Second)
	h := startHarnessClock(t, "", testPassword, &stoppedClock{t: t0})
	secret := h.registerConsumer("life-daemon")
	// PCP §10's body, with the secret §4 requires of token creation.
	body := []byte(`{
  "consumer": "life-daemon",
  "secret": "` + secret + `",
  "scope": "*",
  "ttl": "8760h"
}`)
	var tok struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
		Warnings  []string  `json:"warnings"`
	}
	tests := []struct {
		name      string
		longLived bool
		want      time.Duration
		warned    bool
	}{
		{"not allowed: clamped", false, 30 * 24 * time.Hour, true},
		{"allowed", true, 8760 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"long_lived_tokens": tt.longLived}, nil)
			tok.Warnings = nil
			h.must(201, "POST", "/context/tokens/service", "", body, &tok)
			if got := tok.ExpiresAt.Sub(t0); got != tt.want || (len(tok.Warnings) > 0) != tt.warned {
				t.Fatalf("token lives %v, warnings %q; want %v, warned %v", got, tok.Warnings, tt.want, tt.warned)
			}
			h.must(200, "GET", "/context/fields", tok.Token, nil, nil)
		})
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"long_lived_tokens": false}, nil)
	code, out, errs := h.phc("token", "--consumer", "life-daemon", "--secret", secret, "--long-lived")
	if code != 0 || !strings.HasPrefix(out, "ctxs_") || !strings.Contains(errs, "warning: ttl clamped") ||
		!strings.Contains(errs, humanfmt.Time(t0.Add(30*24*time.Hour))) {
		t.Fatalf("phc token --long-lived = %d %q %q", code, out, errs)
	}
}

// TestPCPRequestBodies: request bodies as the spec writes them — PCP §4's
// "30 minutes" and "single-use", PCP §9's scope as an array — are accepted
// alongside phc's own forms, and mean the same.
func TestPCPRequestBodies(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	agent := h.consumer("visa-agent", "*", "read")
	tests := []struct {
		name     string
		body     string
		scope    []string
		duration int64
		usage    string
	}{
		{"PCP §4", `{"scope": "identity.full_name, identity.dob, addresses.current, identity.citizenship", "purpose": "Fill Australian visa application form", "duration": "30 minutes", "usage": "single-use"}`,
			[]string{"identity.full_name", "identity.dob", "addresses.current", "identity.citizenship"}, 1800, "single"},
		{"PCP §9", `{"scope": ["identity.full_name", "addresses.current", "identity.dob"], "purpose": "Fill Australian visa application"}`,
			[]string{"identity.full_name", "addresses.current", "identity.dob"}, 3600, "multi"},
		{"phc's own", `{"scope": "identity.dob", "purpose": "visa", "duration": 120, "usage": "multi"}`,
			[]string{"identity.dob"}, 120, "multi"},
		{"multi-use, 2 hours", `{"scope": ["identity.dob"], "purpose": "visa", "duration": "2 hours", "usage": "multi-use"}`,
			[]string{"identity.dob"}, 7200, "multi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req struct {
				ID     string   `json:"request_id"`
				Status string   `json:"status"`
				Scope  []string `json:"scope"`
			}
			h.must(202, "POST", "/context/requests", agent, []byte(tt.body), &req)
			var all struct {
				Requests []struct {
					ID       string   `json:"request_id"`
					Scope    []string `json:"scope"`
					Duration int64    `json:"duration_seconds"`
					Usage    string   `json:"usage"`
				} `json:"requests"`
			}
			h.must(200, "GET", "/context/requests", h.owner, nil, &all)
			for _, r := range all.Requests {
				if r.ID != req.ID {
					continue
				}
				if strings.Join(r.Scope, ",") != strings.Join(tt.scope, ",") || r.Duration != tt.duration || r.Usage != tt.usage {
					t.Fatalf("request = %+v; want scope %v, %ds, usage %s", r, tt.scope, tt.duration, tt.usage)
				}
				return
			}
			t.Fatalf("request %s is not listed", req.ID)
		})
	}
	// PCP §9's request_context call, as written, over MCP.
	cs, err := mcpSession(t, h, agent)
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(`{
    "scope": ["identity.full_name", "addresses.current", "identity.dob"],
    "purpose": "Fill Australian visa application"
  }`), &args); err != nil {
		t.Fatal(err)
	}
	out, isErr := call(t, cs, "request_context", args)
	if isErr || out["status"] != "pending" || !strings.HasPrefix(fmt.Sprint(out["request_id"]), "req_") {
		t.Fatalf("request_context (PCP §9) = %v (error %v); want a pending request", out, isErr)
	}
	for _, bad := range []string{
		`{"scope": ["identity.dob, health.*"], "purpose": "visa"}`,
		`{"scope": [], "purpose": "visa"}`,
		`{"scope": "identity.dob", "purpose": "visa", "duration": "30 fortnights"}`,
		`{"scope": "identity.dob", "purpose": "visa", "usage": "twice"}`,
	} {
		h.constraint(400, "invalid_request", "POST", "/context/requests", agent, []byte(bad))
	}
}
