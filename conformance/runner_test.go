package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/phc-project/phc/conformance"
)

// fake is a Target that answers from a function; a nil answer means the
// face cannot carry the request.
type fake func(r *conformance.Request) *conformance.Response

func (f fake) Do(_ context.Context, r *conformance.Request) (*conformance.Response, error) {
	if resp := f(r); resp != nil {
		return resp, nil
	}
	return nil, fmt.Errorf("fake: %s %s: %w", r.Method, r.Path, conformance.ErrUnsupported)
}
func (fake) String() string { return "fake" }

func answer(status int, v any) *conformance.Response {
	raw, _ := json.Marshal(v)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &conformance.Response{Status: status, Header: h, Body: raw}
}

// fakeCustodian answers status (unlocked), the owner check and a few
// canned routes.
func fakeCustodian(routes map[string]*conformance.Response) fake {
	return func(r *conformance.Request) *conformance.Response {
		key := r.Method + " " + r.Path
		if resp, ok := routes[key]; ok {
			return resp
		}
		switch key {
		case "GET /context/status":
			return answer(200, map[string]any{"initialized": true, "locked": false})
		case "GET /phc/v1/personas":
			if r.Header.Get("Authorization") == "Bearer ctx_OWNERTOKEN0123456789" {
				return answer(200, map[string]any{"personas": []any{}})
			}
			return answer(401, map[string]string{"error": "no", "constraint": "unauthenticated"})
		}
		return answer(404, map[string]string{"error": "not found", "constraint": "not_found"})
	}
}

func loadGroup(t *testing.T, cases string) []conformance.Group {
	t.Helper()
	groups, err := conformance.Load(fstest.MapFS{"g.json": {Data: []byte(
		`{"group": "g", "description": "test group", "cases": [` + cases + `]}`)}})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return groups
}

// TestRunnerOutcomes checks that the runner passes, fails, skips and
// declares known bugs as it should, and never prints a token.
func TestRunnerOutcomes(t *testing.T) {
	target := fakeCustodian(map[string]*conformance.Response{
		"GET /a":     answer(200, map[string]any{"token": "ctxs_SECRETSERVICETOKEN012345", "n": 3}),
		"GET /bad":   answer(400, map[string]any{"error": "bad", "constraint": "invalid_request"}),
		"GET /plain": {Status: 400, Header: http.Header{}, Body: []byte("bad request")},
		"GET /mcp":   nil,
	})
	groups := loadGroup(t, `
		{"id": "PHC-1-pass", "title": "t", "steps": [{"method": "GET", "path": "/a", "expect": {"class": "ok", "json": {"/n": {"$gt": 2}}}}]},
		{"id": "PHC-1-wrong-status", "title": "t", "steps": [{"method": "GET", "path": "/a", "expect": {"class": "not-found"}}]},
		{"id": "PHC-1-wrong-value", "title": "t", "steps": [{"method": "GET", "path": "/a", "expect": {"class": "ok", "json": {"/token": "x"}}}]},
		{"id": "PHC-1-wrong-constraint", "title": "t", "steps": [{"method": "GET", "path": "/bad", "expect": {"class": "schema-violation"}}]},
		{"id": "PHC-1-not-json-error", "title": "t", "steps": [{"method": "GET", "path": "/plain", "expect": {"class": "invalid-request"}}]},
		{"id": "PHC-1-known-bug", "title": "t", "known_bug": "it is broken", "steps": [{"method": "GET", "path": "/bad", "expect": {"class": "ok"}}]},
		{"id": "PHC-1-known-bug-fixed", "title": "t", "known_bug": "it was broken", "steps": [{"method": "GET", "path": "/a", "expect": {"class": "ok"}}]},
		{"id": "PHC-1-owner", "title": "t", "requires": ["owner"], "steps": [{"as": "owner", "method": "GET", "path": "/a", "expect": {"class": "ok"}}]},
		{"id": "PHC-1-lockable", "title": "t", "requires": ["owner", "lockable"], "steps": [{"as": "owner", "method": "GET", "path": "/a", "expect": {"class": "ok"}}]},
		{"id": "PHC-1-unsupported", "title": "t", "steps": [{"method": "GET", "path": "/mcp", "expect": {"class": "ok"}}]}
	`)
	rep, err := conformance.Run(context.Background(), target, conformance.Config{Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]conformance.Outcome{
		"PHC-1-pass": conformance.Pass, "PHC-1-wrong-status": conformance.Fail, "PHC-1-wrong-value": conformance.Fail,
		"PHC-1-wrong-constraint": conformance.Fail, "PHC-1-not-json-error": conformance.Fail,
		"PHC-1-known-bug": conformance.XFail, "PHC-1-known-bug-fixed": conformance.Fail,
		"PHC-1-owner": conformance.Skip, "PHC-1-lockable": conformance.Skip, "PHC-1-unsupported": conformance.Skip,
	}
	for _, res := range rep.Results {
		if res.Outcome != want[res.ID] {
			t.Errorf("%s = %s (%s); want %s", res.ID, res.Outcome, res.Detail, want[res.ID])
		}
		if res.Outcome != conformance.Pass && res.Detail == "" {
			t.Errorf("%s: %s without detail", res.ID, res.Outcome)
		}
	}
	if len(rep.Results) != len(want) {
		t.Errorf("%d results; want %d", len(rep.Results), len(want))
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "SECRETSERVICETOKEN") {
		t.Errorf("the table shows a service token:\n%s", out.String())
	}
	for _, s := range []string{"FAIL   PHC-1-wrong-status", "answered 200; want 404 not_found", "XFAIL", "needs the owner", "needs the password",
		"10 cases against fake: 1 passed, 5 failed, 3 skipped, 1 XFAIL (known bugs)", "not supported by this target"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, out.String())
		}
	}
	if rep.OK() {
		t.Error("report with failures is OK")
	}
}

// TestRunnerOwnerToken checks that a refused owner token stops the run
// before any case, and that an accepted one is never printed.
func TestRunnerOwnerToken(t *testing.T) {
	target := fakeCustodian(map[string]*conformance.Response{
		"GET /echo": answer(404, map[string]string{"error": "ctx_OWNERTOKEN0123456789", "constraint": "not_found"}),
	})
	groups := loadGroup(t, `{"id": "PHC-1-echo", "title": "t", "requires": ["owner"], "steps": [{"as": "owner", "method": "GET", "path": "/echo", "expect": {"class": "ok"}}]}`)
	if _, err := conformance.Run(context.Background(), target, conformance.Config{Groups: groups, OwnerToken: "ctx_WRONG"}); err == nil {
		t.Error("Run with a refused owner token did not fail")
	}
	rep, err := conformance.Run(context.Background(), target, conformance.Config{Groups: groups, OwnerToken: "ctx_OWNERTOKEN0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.WriteTable(&out)
	rep.WriteJSON(&out)
	if strings.Contains(out.String(), "OWNERTOKEN") || !strings.Contains(out.String(), "FAIL") {
		t.Errorf("report = %s", out.String())
	}
}

// TestLoadRejects checks that malformed case files do not load.
func TestLoadRejects(t *testing.T) {
	step := `{"method": "GET", "path": "/x", "expect": {"class": "ok"}}`
	for name, cases := range map[string]string{
		"unknown member":        `{"id": "PHC-1-a", "title": "t", "steps": [` + step + `], "extra": 1}`,
		"unknown step member":   `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "ok"}, "bogus": 1}]}`,
		"bad id":                `{"id": "phc-1-A", "title": "t", "steps": [` + step + `]}`,
		"duplicate id":          `{"id": "PHC-1-a", "title": "t", "steps": [` + step + `]}, {"id": "PHC-1-a", "title": "t", "steps": [` + step + `]}`,
		"no steps":              `{"id": "PHC-1-a", "title": "t", "steps": []}`,
		"no expect":             `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x"}]}`,
		"unknown class":         `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "fine"}}]}`,
		"class vs status":       `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "not-found", "status": 400}}]}`,
		"undefined variable":    `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x/${nope}", "expect": {"class": "ok"}}]}`,
		"owner not required":    `{"id": "PHC-1-a", "title": "t", "steps": [{"as": "owner", "method": "GET", "path": "/x", "expect": {"class": "ok"}}]}`,
		"password not lockable": `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "POST", "path": "/x", "body": {"p": "${password}"}, "expect": {"class": "ok"}}]}`,
		"unknown alias":         `{"id": "PHC-1-a", "title": "t", "steps": [{"as": "tutor", "method": "GET", "path": "/x", "expect": {"class": "ok"}}]}`,
		"same as later step":    `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "ok", "same_as_step": 0}}]}`,
		"unknown operator":      `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "ok", "json": {"/a": {"$regex": "x"}}}}]}`,
		"bad pointer":           `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "GET", "path": "/x", "expect": {"class": "ok", "json": {"a": 1}}}]}`,
		"unknown requirement":   `{"id": "PHC-1-a", "title": "t", "requires": ["fresh"], "steps": [` + step + `]}`,
		"body and body_raw":     `{"id": "PHC-1-a", "title": "t", "steps": [{"method": "POST", "path": "/x", "body": {}, "body_raw": "", "expect": {"class": "ok"}}]}`,
	} {
		_, err := conformance.Load(fstest.MapFS{"g.json": {Data: []byte(
			`{"group": "g", "description": "d", "cases": [` + cases + `]}`)}})
		if err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
	}
}
