package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/phc-project/phc/internal/clientvault"
	"github.com/phc-project/phc/internal/httpapi"
	"github.com/phc-project/phc/internal/valueref"
	"github.com/phc-project/phc/internal/vault"
)

// loadOpenAPI loads docs/openapi.yaml and validates it as an OpenAPI 3.1
// document with kin-openapi.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(filepath.Join(docsDir, "openapi.yaml"))
	if err != nil {
		t.Fatalf("load docs/openapi.yaml: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("docs/openapi.yaml is OpenAPI %s; want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("docs/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// TestOpenAPIRoutes: docs/openapi.yaml describes every route the daemon
// serves — the HTTP API's route table and what the daemon mounts (MCP and
// its metadata) — and nothing else.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	h := startHarness(t, "")
	srv, ok := h.d.http.Handler.(*httpapi.Server)
	if !ok {
		t.Fatalf("the daemon's handler is a %T, not the HTTP API's *httpapi.Server", h.d.http.Handler)
	}
	served := map[string]bool{}    // "METHOD /path"
	anyMethod := map[string]bool{} // a mounted handler taking every method
	for _, pattern := range srv.Routes() {
		if method, path, ok := strings.Cut(pattern, " "); ok {
			served[method+" "+path] = true
		} else {
			anyMethod[pattern] = true
		}
	}
	if len(served) < 50 {
		t.Fatalf("the route table lists only %d routes", len(served))
	}
	described := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		ops := item.Operations()
		if len(ops) == 0 {
			t.Errorf("docs/openapi.yaml: %s has no operation", path)
		}
		for method := range ops {
			described[method+" "+path] = true
			if !served[method+" "+path] && !anyMethod[path] {
				t.Errorf("docs/openapi.yaml describes %s %s, which the daemon does not serve", method, path)
			}
		}
	}
	for route := range served {
		if !described[route] {
			t.Errorf("the daemon serves %s, which docs/openapi.yaml does not describe", route)
		}
	}
	for path := range anyMethod {
		if doc.Paths.Find(path) == nil {
			t.Errorf("the daemon serves %s (every method), which docs/openapi.yaml does not describe", path)
		}
	}
}

// validatingTransport checks every request the harness sends, and every
// answer it gets, against the OpenAPI description.
type validatingTransport struct {
	base   http.RoundTripper
	doc    *openapi3.T
	router routers.Router
	mu     sync.Mutex
	errs   []string
	seen   map[string]bool // "METHOD /path status" validated
}

func (v *validatingTransport) fail(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, fmt.Sprintf(format, args...))
}

// errorSchema checks body against the document's Error schema.
func (v *validatingTransport) errorSchema(body []byte) error {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return err
	}
	return v.doc.Components.Schemas["Error"].Value.VisitJSON(value, openapi3.EnableJSONSchema2020())
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))

	probe := req.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := v.router.FindRoute(probe)
	if err == nil && len(reqBody) > 0 && probe.Header.Get("Content-Type") == "" {
		// The harness names no media type: the daemon reads every body
		// the same way, so take the one the operation describes.
		if rb := route.Operation.RequestBody; rb != nil && len(rb.Value.Content) == 1 {
			for media := range rb.Value.Content {
				probe.Header.Set("Content-Type", media)
			}
		}
	}
	if err != nil {
		// A route the daemon does not serve answers the Error body.
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			v.fail("%s %s: no operation in docs/openapi.yaml: %v", req.Method, req.URL.Path, err)
		} else if err := v.errorSchema(body); err != nil {
			v.fail("%s %s → %d %s: %v", req.Method, req.URL.Path, resp.StatusCode, body, err)
		}
		return resp, nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts}
	// Requests that the daemon refuses are often malformed on purpose;
	// only those it accepted must match what the document asks for.
	if resp.StatusCode < 400 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			v.fail("%s %s request %s: %v", req.Method, req.URL.Path, reqBody, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.fail("%s %s → %d %s: %v", req.Method, req.URL.Path, resp.StatusCode, body, err)
	}
	v.mu.Lock()
	v.seen[fmt.Sprintf("%s %s %d", req.Method, route.Path, resp.StatusCode)] = true
	v.mu.Unlock()
	return resp, nil
}

// validateAgainst makes h's client check every exchange against doc.
func validateAgainst(t *testing.T, h *harness, doc *openapi3.T) *validatingTransport {
	t.Helper()
	local := *doc
	local.Servers = openapi3.Servers{{URL: h.base}}
	router, err := legacy.NewRouter(&local)
	if err != nil {
		t.Fatal(err)
	}
	v := &validatingTransport{base: h.http.Transport, doc: doc, router: router, seen: map[string]bool{}}
	h.http.Transport = v
	return v
}

// TestOpenAPIAnswers drives an app's integration and the owner's side of
// it over real HTTP, and checks every request the daemon accepted and every
// answer it gave — errors included — against docs/openapi.yaml.
func TestOpenAPIAnswers(t *testing.T) {
	t.Parallel()
	// Bodies that are not JSON: a migration bundle (compact JWE), the
	// graph as N-Quads and an MCP event stream are checked as strings.
	openapi3filter.RegisterBodyDecoder("application/jose", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/n-quads", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder) // MCP's answer
	doc := loadOpenAPI(t)
	h := startHarness(t, "")
	v := validateAgainst(t, h, doc)
	b := startHarness(t, "") // a second custodian, for migration
	vb := validateAgainst(t, b, doc)

	// Anyone: status and metadata; the owner's status has counts.
	h.must(200, "GET", "/context/status", "", nil, nil)
	h.must(200, "GET", "/context/status", h.owner, nil, nil)
	h.must(200, "GET", "/.well-known/oauth-protected-resource", "", nil, nil)
	h.must(200, "GET", "/.well-known/oauth-protected-resource/mcp", "", nil, nil)

	// An app registers itself; the owner approves it and lets it contribute.
	const secret = "tutor-secret-0123456789"
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": secret}, nil)
	h.must(200, "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": secret}, nil)
	h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": "another-secret-0123456789"})
	h.constraint(401, "unauthenticated", "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor", "secret": secret, "scope": "*"})
	h.must(200, "POST", "/phc/v1/consumers/tutor/approve", h.owner, nil, nil)
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "coach", "secret": "coach-secret-0123456789"}, nil)
	h.must(200, "GET", "/phc/v1/consumers", h.owner, nil, nil)
	h.must(200, "GET", "/context/consumers", h.owner, nil, nil)
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "learning", "name": "Learning", "preferences": []string{"short answers"}}, nil)
	h.must(200, "GET", "/phc/v1/personas", h.owner, nil, nil)
	h.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, nil)

	// Its token; a proposal; its status.
	var tok struct{ Token string }
	h.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor", "secret": secret, "scope": "learning.*",
		"mode": "read-write", "purpose": "learning", "ttl": "2h"}, &tok)
	h.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor", "secret": secret, "scope": []string{"learning.*"},
		"ttl": 8760 * 3600}, nil) // clamped, with a warning
	var prp struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tok.Token, map[string]any{"key": "learning.spanish.goal", "value": "Practice Spanish twice a week",
		"kind": "goal", "assertion": "reported", "evidence": []map[string]string{{"ref": "chat://tutor/session/42"}},
		"reported": map[string]string{"app": "tutor"}, "personas_hint": []string{"learning"}}, &prp)
	h.constraint(400, "schema_violation", "POST", "/phc/v1/proposals", tok.Token, map[string]any{"key": "learning.x", "value": 1, "kind": "wish"})
	h.must(200, "GET", "/phc/v1/proposals/"+prp.ID, tok.Token, nil, nil)
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, nil)
	h.must(200, "POST", "/phc/v1/proposals/"+prp.ID+"/confirm", h.owner, map[string]any{"personas": []string{"learning"}}, nil)
	var withdrawn struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tok.Token, map[string]any{"key": "learning.level", "value": "B1", "kind": "fact", "assertion": "inferred"}, &withdrawn)
	h.must(200, "POST", "/phc/v1/proposals/"+withdrawn.ID+"/withdraw", tok.Token, nil, nil)

	// PCP writes: pending for the owner; a synonym's hint.
	h.must(202, "PUT", "/context/fields/learning.level", tok.Token, map[string]any{"value": "B2"}, nil)
	var wide struct{ Token string }
	h.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor", "secret": secret, "scope": "*", "mode": "read-write"}, &wide)
	h.constraint(403, "user_only_write", "PUT", "/context/fields/identity.ssn", wide.Token, map[string]any{"value": "1"})
	h.must(200, "PUT", "/context/fields/identity.name", h.owner, map[string]any{"value": "Ana"}, nil)
	h.must(200, "PUT", "/context/fields/preferences.tea", h.owner, map[string]any{"value": "green"}, nil)

	// The app asks for access; before approval its read is refused.
	h.constraint(403, "scope_exceeded", "GET", "/phc/v1/context?purpose=other", tok.Token, nil)
	var req struct {
		ID string `json:"request_id"`
	}
	h.must(202, "POST", "/context/requests", tok.Token, map[string]any{"scope": "learning.*", "purpose": "learning", "duration": "1h", "usage": "multi"}, &req)
	h.must(200, "GET", "/context/requests/"+req.ID, tok.Token, nil, nil)
	h.must(200, "GET", "/context/requests", h.owner, nil, nil)
	h.must(200, "POST", "/context/requests/"+req.ID+"/approve", h.owner, nil, nil)
	var granted struct{ Token string }
	h.must(200, "GET", "/context/requests/"+req.ID, tok.Token, nil, &granted)
	var denied struct {
		ID string `json:"request_id"`
	}
	h.must(202, "POST", "/context/requests", tok.Token, map[string]any{"scope": "health.*", "purpose": "learning"}, &denied)
	h.must(200, "POST", "/context/requests/"+denied.ID+"/deny", h.owner, nil, nil)

	// Reads, through both faces.
	h.must(200, "GET", "/phc/v1/context?purpose=learning", granted.Token, nil, nil)
	h.must(200, "GET", "/phc/v1/context?purpose=learning&persona=learning", granted.Token, nil, nil)
	h.must(200, "GET", "/context/fields", granted.Token, nil, nil)
	h.must(200, "GET", "/context/fields/learning.spanish.goal", granted.Token, nil, nil)
	h.must(200, "GET", "/context/fields/category/learning", granted.Token, nil, nil)
	h.must(200, "GET", "/context/context", granted.Token, nil, nil)
	h.must(200, "GET", "/context/search?q=spanish", granted.Token, nil, nil)
	h.constraint(404, "not_found", "GET", "/context/fields/learning.nothing", granted.Token, nil)
	h.constraint(403, "mode_denied", "PUT", "/context/fields/learning.level", granted.Token, map[string]any{"value": "C1"})
	h.constraint(401, "unauthenticated", "GET", "/context/context", "ctxs_not-a-token", nil)
	h.constraint(403, "session_required", "GET", "/phc/v1/grants", granted.Token, nil)
	h.constraint(404, "not_found", "GET", "/phc/v1/no-such-route", h.owner, nil)
	h.constraint(405, "invalid_request", "DELETE", "/context/context", h.owner, nil)

	// The owner's side.
	var claims struct {
		Claims []struct{ ID string } `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims?key=learning.spanish.goal", h.owner, nil, &claims)
	id := claims.Claims[0].ID
	h.must(200, "GET", "/phc/v1/claims/"+id, h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/claims/"+id+"?purpose=learning", granted.Token, nil, nil)
	h.must(200, "GET", "/phc/v1/claims/"+id+"/versions", h.owner, nil, nil)
	h.must(200, "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"value": "Practice Spanish three times a week"}, nil)
	h.must(200, "POST", "/phc/v1/claims/"+id+"/dispute", h.owner, nil, nil)
	h.must(200, "DELETE", "/phc/v1/claims/"+id+"/dispute", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/settings", h.owner, nil, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"long_lived_tokens": true}, nil)
	h.must(200, "GET", "/context/tokens/service", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/receipts?limit=5", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/receipts/verify", h.owner, nil, nil)
	h.must(200, "GET", "/context/audit?limit=5", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/graph/neighbors/self", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/graph/neighbors/self?purpose=learning", granted.Token, nil, nil)
	h.must(201, "POST", "/phc/v1/entities", h.owner, map[string]any{"type": "person", "name": "Ana", "key": "people.ana.name"}, nil)
	h.must(200, "GET", "/phc/v1/entities", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/summaries", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/check", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/trust", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/custodians", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/quarantine", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/dec/trust", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/dec/presentations", h.owner, nil, nil)
	h.must(200, "POST", "/phc/v1/claims/"+id+"/personas", h.owner, map[string]any{"personas": []string{}}, nil)
	h.must(200, "PUT", "/context/sensitivity/preferences.tea", h.owner, map[string]any{"tier": "sensitive"}, nil)
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.dob", wide.Token, nil)
	h.must(200, "PUT", "/phc/v1/personas/learning", h.owner, map[string]any{"name": "Languages",
		"guardrails": []map[string]any{{"type": "max_sensitivity", "params": map[string]string{"tier": "standard"}}}}, nil)

	// The review queue, one by one and in bulk.
	var queue struct {
		Proposals []struct {
			ID string `json:"proposal_id"`
		} `json:"proposals"`
	}
	for range 3 {
		h.must(201, "POST", "/phc/v1/proposals", tok.Token, map[string]any{"key": "learning.note", "value": "x", "kind": "note", "assertion": "observed"}, nil)
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &queue)
	if len(queue.Proposals) < 4 {
		t.Fatalf("review queue = %+v", queue)
	}
	h.must(200, "POST", "/phc/v1/proposals/"+queue.Proposals[0].ID+"/reject", h.owner, map[string]string{"reason": "no"}, nil)
	h.must(200, "POST", "/phc/v1/review/confirm", h.owner, map[string]any{"ids": []string{queue.Proposals[1].ID, "prp_AAAAAAAAAAAAAAAAAAAAAAAAAA"}, "personas": []string{}}, nil)
	h.must(200, "POST", "/phc/v1/review/reject", h.owner, map[string]any{"ids": []string{queue.Proposals[2].ID}, "reason": "no"}, nil)
	h.constraint(409, "conflict", "POST", "/phc/v1/proposals/"+queue.Proposals[0].ID+"/withdraw", tok.Token, nil)

	// The graph: an entity, a relationship to it, a traversal, a summary.
	var ana struct {
		Entity struct{ ID string } `json:"entity"`
	}
	h.must(201, "POST", "/phc/v1/entities", h.owner, map[string]any{"type": "person", "name": "Ana", "key": "people.ana.name"}, &ana)
	var rel struct {
		Claim struct {
			ID      string
			Version int
		} `json:"claim"`
	}
	var relp struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "people.ana.relation", "kind": "relationship", "assertion": "reported",
		"value": map[string]string{"from": "self", "to": ana.Entity.ID, "relation": "friend"}}, &relp)
	h.must(200, "POST", "/phc/v1/proposals/"+relp.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, &rel)
	h.must(200, "GET", "/phc/v1/graph/neighbors/self?depth=2", h.owner, nil, nil)
	var sum struct {
		Summary struct{ ID string } `json:"summary"`
	}
	h.must(201, "POST", "/phc/v1/summaries", h.owner, map[string]any{"value": "Ana is a friend",
		"derived_from": []string{rel.Claim.ID + "@" + strconv.Itoa(rel.Claim.Version)}}, &sum)
	h.must(200, "GET", "/phc/v1/summaries/"+sum.Summary.ID, h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/summaries", h.owner, nil, nil)

	// Backup and restore; the card.
	h.must(200, "GET", "/phc/v1/card", h.owner, nil, nil)
	archive := h.must(200, "GET", "/context/export", h.owner, nil, nil)
	sk, err := vault.ReadSecretKeyFile(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/context/import", h.owner, map[string]any{"archive": json.RawMessage(archive), "mode": "merge",
		"password": testPassword, "secret_key": sk}, nil)

	// Rates: past the app's writes a minute, 429 with Retry-After.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"writes_per_minute": 1}, nil)
	for {
		status, raw := h.do("POST", "/phc/v1/proposals", tok.Token, map[string]any{"key": "learning.note", "value": "y", "kind": "note", "assertion": "observed"})
		if status == 429 {
			break
		}
		if status != 201 {
			t.Fatalf("propose = %d %s", status, raw)
		}
	}
	h.unlimited()

	// MCP without a token: 401 naming the metadata.
	if status, _ := h.do("POST", "/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}); status != 401 {
		t.Errorf("POST /mcp without a token = %d; want 401", status)
	}

	// The graph as data.
	h.must(200, "GET", "/phc/v1/graph/export", h.owner, nil, nil)
	h.must(200, "GET", "/phc/v1/graph/export?format=prov-jsonld", h.owner, nil, nil)
	h.must(200, "POST", "/phc/v1/graph/rebuild", h.owner, nil, nil)

	// DEC: pin an issuer's keys, verify its chain, add a policy; a chain
	// about another client is refused to the app.
	raw, err := os.ReadFile("../../dec/testdata/vectors/valid-1.json")
	if err != nil {
		t.Fatal(err)
	}
	var vec struct {
		Document string `json:"document"`
		Trust    map[string]struct {
			Keys []any `json:"keys"`
		} `json:"trust"`
	}
	if err := json.Unmarshal(raw, &vec); err != nil || len(vec.Trust) != 1 {
		t.Fatalf("valid-1.json: %v", err)
	}
	for issuer, jwks := range vec.Trust {
		h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": issuer, "jwks": map[string]any{"keys": jwks.Keys}}, nil)
		h.must(201, "POST", "/phc/v1/dec/policies", h.owner, map[string]any{"id": "tutor", "issuer": issuer, "client_id": "tutor", "max_age": "720h"}, nil)
		h.constraint(404, "not_found", "POST", "/phc/v1/dec/trust/unrevoke", h.owner, map[string]string{"issuer": issuer, "kid": "ed-1"})
	}
	h.must(200, "POST", "/phc/v1/dec/verify", h.owner, vec.Document, nil)
	h.must(200, "GET", "/phc/v1/dec/trust", h.owner, nil, nil)
	h.constraint(403, "qualification_required", "POST", "/phc/v1/dec/present", tok.Token, vec.Document)

	// Migration: B pins this custodian's card, which exports a bundle for
	// B's; B holds it in the quarantine, rejects one record and adopts
	// the rest.
	var cardA, cardB json.RawMessage
	h.must(200, "GET", "/phc/v1/card", h.owner, nil, &cardA)
	b.must(200, "GET", "/phc/v1/card", b.owner, nil, &cardB)
	b.must(201, "POST", "/phc/v1/custodians", b.owner, cardA, nil)
	b.must(200, "GET", "/phc/v1/custodians", b.owner, nil, nil)
	bundle := h.must(200, "POST", "/phc/v1/export", h.owner, map[string]any{"to": cardB}, nil)
	b.must(201, "POST", "/phc/v1/import", b.owner, bundle, nil)
	var page struct {
		Records []struct{ ID, Kind, Key string } `json:"records"`
	}
	b.must(200, "GET", "/phc/v1/quarantine", b.owner, nil, &page)
	// Reject a claim nothing else depends on: not the entity's (people.…),
	// whose relationship would then be about an entity not adopted.
	reject := ""
	for _, r := range page.Records {
		if r.Kind == "claim" && !strings.HasPrefix(r.Key, "people.") {
			reject = r.ID
			break
		}
	}
	if len(page.Records) < 2 || reject == "" {
		t.Fatalf("quarantine = %+v", page)
	}
	b.must(200, "POST", "/phc/v1/quarantine/"+reject+"/reject", b.owner, nil, nil)
	b.must(200, "POST", "/phc/v1/quarantine/adopt", b.owner, map[string]any{"all": true}, nil)
	b.must(200, "POST", "/phc/v1/quarantine/reject", b.owner, map[string]any{"all": true}, nil)
	var custodians struct {
		Custodians []struct {
			ID string `json:"custodian_id"`
		} `json:"custodians"`
	}
	b.must(200, "GET", "/phc/v1/custodians", b.owner, nil, &custodians)
	b.must(200, "DELETE", "/phc/v1/custodians/"+custodians.Custodians[0].ID, b.owner, nil, nil)

	h.must(200, "POST", "/phc/v1/claims/"+id+"/retract", h.owner, nil, nil)
	var grants struct {
		Grants []struct{ ID string } `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	h.must(200, "DELETE", "/phc/v1/grants/"+grants.Grants[0].ID, h.owner, nil, nil)
	h.must(200, "DELETE", "/phc/v1/personas/learning", h.owner, nil, nil)
	var toks struct {
		Tokens []struct{ Prefix string } `json:"tokens"`
	}
	h.must(200, "GET", "/context/tokens/service", h.owner, nil, &toks)
	h.must(200, "DELETE", "/context/tokens/service/"+toks.Tokens[0].Prefix, h.owner, nil, nil)
	h.must(200, "DELETE", "/context/consumers/coach", h.owner, nil, nil)
	h.must(200, "POST", "/context/lock", h.owner, nil, nil)
	h.constraint(403, "vault_locked", "GET", "/context/context", granted.Token, nil)
	h.constraint(401, "unauthenticated", "POST", "/context/unlock", "", map[string]string{"password": "wrong password", "secret_key": sk})
	h.must(200, "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": sk}, nil)
	h.constraint(409, "conflict", "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": sk})
	h.must(200, "GET", "/context/fields", wide.Token, nil, nil) // an app's token outlives the lock

	// Reference mode and Client-Vault v=1, on a third custodian: the
	// resolve endpoint's errors, the vault keys, the new settings and
	// grant fields, and client_vault_endpoint in the metadata.
	f := newCVFixture(t)
	c := f.h
	vc := validateAgainst(t, c, doc)
	k := f.key("travel")
	status, _, off := f.resolve(k, f.refs(time.Now(), "PASSPORT_1"))
	if status != 503 || off["error"] != "disabled" {
		t.Errorf("resolve while local vaults are off = %d %v; want 503 disabled", status, off)
	}
	c.must(200, "PUT", "/phc/v1/settings", c.owner, map[string]any{"local_vaults": true, "disclosure": map[string]string{"sensitive": "reference"}}, nil)
	c.must(200, "GET", "/phc/v1/settings", c.owner, nil, nil)
	var meta struct {
		Endpoint string `json:"client_vault_endpoint"`
	}
	c.must(200, "GET", "/.well-known/oauth-protected-resource/mcp", "", nil, &meta)
	if meta.Endpoint != c.base+"/phc/v1/vault/resolve" {
		t.Errorf("client_vault_endpoint = %q", meta.Endpoint)
	}
	app := c.consumer("travel", "*", "read")
	var cvReq requestAnswer
	c.must(202, "POST", "/context/requests", app, map[string]any{"scope": "identity.passport_number", "purpose": "travel",
		"usage": "multi", "duration": "1h", "disclosure": "reference"}, &cvReq)
	c.must(200, "POST", "/context/requests/"+cvReq.ID+"/approve", c.owner, map[string]string{"password": testPassword, "disclosure": "reference"}, nil)
	c.must(200, "GET", "/context/requests", c.owner, nil, nil)
	c.must(200, "GET", "/phc/v1/grants", c.owner, nil, nil)
	var cvTok requestAnswer
	c.must(200, "GET", "/context/requests/"+cvReq.ID, app, nil, &cvTok)
	c.must(200, "GET", "/phc/v1/context?purpose=travel&disclosure=reference", cvTok.Token, nil, nil)
	ref := f.readPassport(cvTok.Token)
	keys := valueref.Keys(ref)
	if len(keys) != 1 || strings.Contains(ref, passport) {
		t.Fatalf("the passport read as %q; want one reference", ref)
	}
	f.showKey(cvTok.Token, k)
	if status, _, body := f.resolve(k, f.refs(time.Now(), keys...)); status != 403 || body["error"] != "pending" {
		t.Errorf("resolve before activation = %d %v; want 403 pending", status, body)
	}
	c.must(200, "GET", "/phc/v1/vault-keys", c.owner, nil, nil)
	c.must(200, "POST", "/phc/v1/vault-keys/activate", c.owner, map[string]string{"key": clientvault.Kid(k)}, nil)
	if status, _, body := f.resolve(k, f.refs(time.Now(), keys...)); status != 200 {
		t.Errorf("resolve = %d %v; want 200", status, body)
	}
	for _, tc := range []struct {
		status int
		code   string
		body   any
	}{
		{404, "unknown_ref", f.refs(time.Now(), "PASSPORT_9")},
		{410, "expired", f.refs(time.Now().Add(-time.Hour), keys...)},
		{403, "clock_skew", map[string]any{"now": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "refs": []any{}}},
		{400, "bad_request", map[string]any{"now": "yesterday", "refs": []any{}}},
	} {
		if status, _, body := f.resolve(k, tc.body); status != tc.status || body["error"] != tc.code {
			t.Errorf("resolve %v = %d %v; want %d %s", tc.body, status, body, tc.status, tc.code)
		}
	}
	if status, _, body := f.resolve(make([]byte, 32), f.refs(time.Now(), keys...)); status != 401 || body["error"] != "unknown_key" {
		t.Errorf("resolve with an unknown K = %d %v; want 401 unknown_key", status, body)
	}
	c.must(200, "POST", "/phc/v1/vault-keys/revoke", c.owner, map[string]string{"key": clientvault.Kid(k)}, nil)
	c.constraint(409, "conflict", "POST", "/phc/v1/vault-keys/activate", c.owner, map[string]string{"key": clientvault.Kid(k)})

	for s := range vb.seen {
		v.seen[s] = true
	}
	for s := range vc.seen {
		v.seen[s] = true
	}
	if len(v.seen) < 90 {
		t.Errorf("only %d route and status pairs were checked", len(v.seen))
	}
	for _, e := range slices.Concat(v.errs, vb.errs, vc.errs) {
		// kin-openapi's errors quote the whole schema: keep what failed.
		var short []string
		for i, line := range strings.Split(e, "\n") {
			if i == 0 || strings.Contains(line, "Error at") {
				short = append(short, line)
			}
		}
		t.Error(strings.Join(short, "\n"))
	}
	if testing.Verbose() {
		seen := make([]string, 0, len(v.seen))
		for s := range v.seen {
			seen = append(seen, s)
		}
		slices.Sort(seen)
		t.Logf("checked %d route and status pairs:\n%s", len(seen), strings.Join(seen, "\n"))
	}
}
