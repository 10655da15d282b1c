package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/schema"
)

func TestLoopbackHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"127.0.0.1:7200", true},
		{"127.0.0.1", true},
		{"127.1.2.3:80", true},
		{"localhost:7200", true},
		{"LOCALHOST", true},
		{"[::1]:7200", true},
		{"::1", true},
		{"", false},
		{"evil.com", false},
		{"evil.com:7200", false},
		{"127.0.0.1.evil.com", false},
		{"localhost.evil.com:7200", false},
		{"10.0.0.1:7200", false},
		{"0.0.0.0:7200", false},
		{"[::ffff:8.8.8.8]:7200", false},
	}
	for _, tt := range tests {
		if got := loopbackHost(tt.host); got != tt.want {
			t.Errorf("loopbackHost(%q) = %v; want %v", tt.host, got, tt.want)
		}
	}
}

func TestCheckRequest(t *testing.T) {
	tests := []struct {
		name    string
		host    string
		target  string
		headers map[string]string
		ok      bool
	}{
		{"plain", "127.0.0.1:7200", "/context/status", nil, true},
		{"localhost", "localhost:7200", "/phc/v1/claims?key=a.*", nil, true},
		{"foreign host", "evil.com", "/context/status", nil, false},
		{"rebinding host", "127.0.0.1.nip.io:7200", "/context/status", nil, false},
		{"same origin", "127.0.0.1:7200", "/context/status", map[string]string{"Origin": "http://127.0.0.1:7200"}, true},
		{"same origin, other name", "127.0.0.1:7200", "/context/status", map[string]string{"Origin": "http://localhost:7200"}, false},
		{"another loopback port", "127.0.0.1:7200", "/context/status", map[string]string{"Origin": "http://127.0.0.1:3000"}, false},
		{"same-site fetch", "127.0.0.1:7200", "/context/status", map[string]string{"Sec-Fetch-Site": "same-site"}, false},
		{"user-initiated fetch", "127.0.0.1:7200", "/context/status", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"foreign origin", "127.0.0.1:7200", "/context/status", map[string]string{"Origin": "https://evil.com"}, false},
		{"null origin", "127.0.0.1:7200", "/context/status", map[string]string{"Origin": "null"}, false},
		{"cross-site fetch", "127.0.0.1:7200", "/context/status", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"same-origin fetch", "127.0.0.1:7200", "/context/status", map[string]string{"Sec-Fetch-Site": "same-origin"}, true},
		{"dot dot", "127.0.0.1:7200", "/phc/v1/claims/../grants", nil, false},
		{"double slash", "127.0.0.1:7200", "/phc/v1//claims", nil, false},
		{"encoded slash", "127.0.0.1:7200", "/phc/v1/claims/a%2Fb", nil, false},
		{"trailing slash", "127.0.0.1:7200", "/phc/v1/claims/", nil, false},
		{"bad query", "127.0.0.1:7200", "/phc/v1/claims?key=%zz", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://x"+tt.target, nil)
			r.Host = tt.host
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			err := checkRequest(r)
			if (err == nil) != tt.ok {
				t.Fatalf("checkRequest(%s %s) = %v; want ok=%v", tt.host, tt.target, err, tt.ok)
			}
			if err != nil && custodian.KindOf(err) != custodian.KindInvalid {
				t.Fatalf("checkRequest kind = %v; want invalid_request", custodian.KindOf(err))
			}
		})
	}
}

// TestWriteError: every Kind is translated through the one table; public
// text only; causes never reach the client.
func TestWriteError(t *testing.T) {
	s := New(nil, nil)
	for _, k := range custodian.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			secret := "SECRET-VALUE-" + k.String()
			err := fmt.Errorf("handler: %w", &custodian.Error{Op: "test", Kind: k, Subject: secret, Err: errors.New(secret), RetryAfter: 1500 * time.Millisecond})
			rec := httptest.NewRecorder()
			s.writeError(rec, httptest.NewRequest("GET", "/", nil), err)
			row := k.Row()
			if rec.Code != row.Status {
				t.Errorf("status = %d; want %d", rec.Code, row.Status)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if body["constraint"] != row.Constraint || body["error"] != row.Message {
				t.Errorf("body = %v; want %s %q", body, row.Constraint, row.Message)
			}
			if strings.Contains(rec.Body.String(), secret) {
				t.Errorf("body leaks the cause: %s", rec.Body)
			}
			if k == custodian.KindRateLimited && rec.Header().Get("Retry-After") != "2" {
				t.Errorf("Retry-After = %q; want 2", rec.Header().Get("Retry-After"))
			}
		})
	}
	t.Run("unknown error", func(t *testing.T) {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), errors.New("disk on fire at /secret/path"))
		if rec.Code != 500 || strings.Contains(rec.Body.String(), "secret") {
			t.Fatalf("unknown error = %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("violations", func(t *testing.T) {
		rec := httptest.NewRecorder()
		err := &custodian.Error{Op: "propose", Kind: custodian.KindSchema, Violations: []schema.Violation{{Path: "/kind", Keyword: "enum", Message: "must be one of the allowed values"}}}
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), err)
		var body struct {
			Constraint string             `json:"constraint"`
			Violations []schema.Violation `json:"violations"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Constraint != "schema_violation" || len(body.Violations) != 1 || body.Violations[0].Path != "/kind" {
			t.Fatalf("schema error body = %s", rec.Body)
		}
	})
}

// TestRouteTable: every route has a distinct pattern, and owner-only routes
// are marked so.
func TestRouteTable(t *testing.T) {
	s := New(nil, nil)
	seen := map[string]bool{}
	for _, rt := range s.routes() {
		if seen[rt.pattern] {
			t.Errorf("route %q twice", rt.pattern)
		}
		seen[rt.pattern] = true
		method, _, _ := strings.Cut(rt.pattern, " ")
		if method != http.MethodGet && method != http.MethodPost && method != http.MethodPut && method != http.MethodDelete {
			t.Errorf("route %q has no method", rt.pattern)
		}
	}
	for _, p := range []string{"GET /phc/v1/review", "POST /phc/v1/grants", "GET /phc/v1/receipts/verify"} {
		found := false
		for _, rt := range s.routes() {
			if rt.pattern == p {
				found = true
				if rt.access != owner {
					t.Errorf("%s is not owner-only", p)
				}
			}
		}
		if !found {
			t.Errorf("route %s missing", p)
		}
	}
}

// A read of a stored claim that no longer reads back (a damaged store) is
// answered 500 internal, naming none of what was stored, and the daemon
// goes on answering.
func TestUnreadableStoredClaimOverHTTP(t *testing.T) {
	mem := store.NewMemory()
	e := newExchangeEnv(t, func(c *custodian.Config) {
		// A cache of one byte keeps no head resident: reads go to the store.
		c.Store, c.ClaimCacheBytes = mem, 1
	})
	// The second write evicts the first's head.
	var id string
	for _, k := range []string{"work.role", "work.team"} {
		status, body := e.do("PUT", "/context/fields/"+k, e.owner, "application/json", []byte(`{"value":"engineer"}`))
		if status != 200 {
			t.Fatalf("PUT %s = %d %v", k, status, body)
		}
		if id == "" {
			id, _ = body["claim_id"].(string)
		}
	}
	err := mem.Update(func(tx custodian.Tx) error {
		return tx.Put("claims", id+"@00000001", []byte(`{"value":"the secret stored value", broken`))
	})
	if err != nil || id == "" {
		t.Fatalf("damaging claim %q: %v", id, err)
	}
	for range 2 {
		status, body := e.do("GET", "/context/fields/work.role", e.owner, "", nil)
		if status != 500 || body["constraint"] != "internal" {
			t.Errorf("GET of the damaged claim = %d %v; want 500 internal", status, body)
		}
		if raw, _ := json.Marshal(body); strings.Contains(string(raw), "secret") {
			t.Errorf("the answer %s quotes the stored bytes", raw)
		}
	}
	if status, body := e.do("GET", "/context/fields/work.team", e.owner, "", nil); status != 200 {
		t.Errorf("GET of the other claim = %d %v; want 200", status, body)
	}
	// The failed reads left nothing locked: a write goes through.
	if status, body := e.do("PUT", "/context/fields/work.team", e.owner, "application/json", []byte(`{"value":"platform"}`)); status != 200 {
		t.Errorf("PUT after the failed reads = %d %v; want 200", status, body)
	}
}
