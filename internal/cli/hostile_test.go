package cli

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/internal/httpapi"
	"github.com/phc-project/phc/internal/vault"
)

// hostileMarker is planted in hostile values. No answer may repeat it: error
// texts name fields and offsets, never values.
const hostileMarker = "ZZHOSTILEZZ"

// Special values of hostileCase.host.
const (
	hostEmpty = "\x00empty" // a Host header with an empty value
	hostNone  = "\x00none"  // no Host header at all (HTTP/1.0)
)

// wireStatus is docs/design.md §6's error table: the status of each constraint.
var wireStatus = map[string]int{
	"invalid_request":  400,
	"schema_violation": 400,
	"unauthenticated":  401,
	"vault_locked":     403,
	"session_required": 403,
	"scope_exceeded":   403,
	"mode_denied":      403,
	"not_found":        404,
	"conflict":         409,
	"too_large":        413,
	"rate_limited":     429,
}

// hostileCase is one hostile request, written byte for byte on a fresh
// connection so that the server sees exactly what is below (no client-side
// path cleaning, Host rewriting or body framing).
type hostileCase struct {
	name       string      // family/variant
	method     string      // request method
	target     string      // request-target, written verbatim
	host       string      // Host header: "" is the daemon's address; see hostEmpty, hostNone
	header     [][2]string // further header fields, Authorization included
	body       []byte      // nil: no body
	chunked    bool        // send the body with chunked transfer coding
	status     int         // 0: the status of constraint in wireStatus
	constraint string      // the expected constraint code
	// violationAt, for schema_violation, is a JSON Pointer at or below which
	// at least one violation must be reported.
	violationAt string
}

func bearer(tok string) [][2]string {
	return [][2]string{{"Authorization", "Bearer " + tok}}
}

func jsonBytes(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// setAt sets the member or element at ptr ("a/b/0") inside doc, creating
// missing objects on the way.
func setAt(t *testing.T, doc map[string]any, ptr string, v any) {
	t.Helper()
	var cur any = doc
	toks := strings.Split(ptr, "/")
	for i, tok := range toks {
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[tok] = v
				return
			}
			next, ok := c[tok]
			if !ok {
				next = map[string]any{}
				c[tok] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n >= len(c) {
				t.Fatalf("setAt %q: no element %q", ptr, tok)
			}
			if last {
				c[n] = v
				return
			}
			cur = c[n]
		default:
			t.Fatalf("setAt %q: cannot descend into %T", ptr, cur)
		}
	}
}

// hostileFixture is the vault under attack and the handles on its data.
type hostileFixture struct {
	h                        *harness
	secretKey                string
	tomorrow                 string
	tutorW, tutorRW, coachR  string // service tokens
	budgetR                  string
	pending, pending2        string // proposals waiting for review
	confirmedPrp, rejected   string // decided proposals
	claim, corrected         string // active claims (corrected has version 2)
	deleted, workClaim       string // a deleted claim; a claim in persona work
	grant, revoked, contrib  string // coach's read grant; a revoked grant; tutor's contribute grant
	claimIDs                 []string
	absentClaim, absentGrant string // well-formed ids that name nothing
	absentProposal           string
}

func newID(t *testing.T, prefix string) string {
	t.Helper()
	var b [16]byte
	rand.Read(b[:])
	return prefix + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// setupHostileVault fills a fresh daemon through the API: personas,
// consumers with tokens of each mode, grants (one revoked), proposals
// (pending, confirmed, rejected), confirmed claims, a correction and a
// deletion.
func setupHostileVault(t *testing.T, h *harness) *hostileFixture {
	t.Helper()
	f := &hostileFixture{h: h, tomorrow: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}
	sk, err := vault.ReadSecretKeyFile(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.secretKey = sk
	for _, p := range []map[string]any{
		{"id": "learning", "name": "Learning", "preferences": []string{"short answers"}},
		{"id": "work", "name": "Work", "guardrails": []any{map[string]any{"type": "no_training"}}},
		{"id": "personal", "name": "Personal"},
	} {
		h.must(201, "POST", "/phc/v1/personas", h.owner, p, nil)
	}
	f.tutorW = h.consumer("tutor", "learning.*", "write")
	f.tutorRW = h.token("tutor", "secret-of-tutor-0123456789", "learning.*", "read-write")
	f.coachR = h.consumer("coach", "*", "read")
	f.budgetR = h.consumer("budget", "*", "read")

	grant := func(body map[string]any) string {
		var g struct{ ID string }
		h.must(201, "POST", "/phc/v1/grants", h.owner, body, &g)
		return g.ID
	}
	f.contrib = grant(map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "tutor"}, "purpose": "learning",
		"operations": []string{"contribute"}, "selectors": map[string]any{"keys": []string{"learning.*"}},
		"expires_at": f.tomorrow})
	f.grant = grant(map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "coach"}, "purpose": "learning",
		"operations": []string{"read"}, "selectors": map[string]any{"personas": []string{"learning"}},
		"expires_at": f.tomorrow, "usage": "multi"})
	f.revoked = grant(map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "coach"}, "purpose": "work",
		"operations": []string{"read"}, "selectors": map[string]any{"personas": []string{"work"}},
		"expires_at": f.tomorrow})

	propose := func(tok, key, value string, extra map[string]any) string {
		body := map[string]any{"key": key, "value": value, "kind": "goal", "assertion": "reported",
			"evidence": []map[string]string{{"ref": "chat://tutor/session/1"}},
			"reported": map[string]string{"app": "tutor", "run_id": "run-1"}}
		for k, v := range extra {
			body[k] = v
		}
		var p struct {
			ProposalID string `json:"proposal_id"`
		}
		h.must(201, "POST", "/phc/v1/proposals", tok, body, &p)
		return p.ProposalID
	}
	confirm := func(prp string, personas ...string) string {
		var w struct{ Claim struct{ ID string } }
		h.must(200, "POST", "/phc/v1/proposals/"+prp+"/confirm", h.owner, map[string]any{"personas": personas}, &w)
		return w.Claim.ID
	}
	f.confirmedPrp = propose(f.tutorW, "learning.spanish.schedule", "Practice Spanish twice a week", nil)
	f.claim = confirm(f.confirmedPrp, "learning")
	f.corrected = confirm(propose(f.tutorW, "learning.spanish.level", "A2", nil), "learning", "personal")
	h.must(200, "PUT", "/phc/v1/claims/"+f.corrected, h.owner, map[string]any{"value": "B1", "note": "passed the exam"}, nil)
	f.deleted = confirm(propose(f.tutorW, "learning.temp", "temporary", nil), "learning")
	h.must(200, "DELETE", "/phc/v1/claims/"+f.deleted, h.owner, nil, nil)
	f.workClaim = confirm(propose(h.owner, "work.role", "Engineer", map[string]any{"kind": "fact", "sensitivity": "standard"}), "work")
	f.pending = propose(f.tutorW, "learning.french.goal", "Read a novel in French", nil)
	f.pending2 = propose(f.tutorW, "learning.italian.goal", "Order dinner in Italian", map[string]any{
		"restrictions":  []map[string]any{{"type": "no_training", "mandatory": true}},
		"personas_hint": []string{"learning"}, "note": "from the tutor"})
	f.rejected = propose(f.tutorW, "learning.german.goal", "Learn German", nil)
	h.must(200, "POST", "/phc/v1/proposals/"+f.rejected+"/reject", h.owner, map[string]string{"reason": "not now"}, nil)
	h.must(200, "DELETE", "/phc/v1/grants/"+f.revoked, h.owner, nil, nil)

	f.claimIDs = []string{f.claim, f.corrected, f.deleted, f.workClaim}
	f.absentClaim, f.absentGrant, f.absentProposal = newID(t, "clm_"), newID(t, "grt_"), newID(t, "prp_")

	// The data is there and readable the legitimate way.
	var ctx contextAnswer
	h.must(200, "GET", "/phc/v1/context?purpose=learning", f.coachR, nil, &ctx)
	if len(ctx.Claims) != 2 {
		t.Fatalf("coach reads %d claims after setup; want 2", len(ctx.Claims))
	}
	return f
}

// vaultSnapshot reads the vault's contents through the owner API: status
// (revision, counts), active claims, every version of every claim, the
// review queue, grants, personas and consumers. It requires the receipt
// chain to verify and returns its length.
func vaultSnapshot(t *testing.T, h *harness, claimIDs []string) (map[string]string, uint64) {
	t.Helper()
	paths := []string{"/context/status", "/phc/v1/claims", "/phc/v1/review", "/phc/v1/grants",
		"/phc/v1/personas", "/phc/v1/consumers"}
	for _, id := range claimIDs {
		paths = append(paths, "/phc/v1/claims/"+id, "/phc/v1/claims/"+id+"/versions")
	}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		raw := h.must(200, "GET", p, h.owner, nil, nil)
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		out[p] = string(jsonIndent(t, v))
	}
	var v struct {
		OK       bool     `json:"ok"`
		Count    uint64   `json:"count"`
		Problems []string `json:"problems"`
	}
	h.must(200, "GET", "/phc/v1/receipts/verify", h.owner, nil, &v)
	if !v.OK {
		t.Errorf("GET /phc/v1/receipts/verify = %+v; want ok", v)
	}
	return out, v.Count
}

func jsonIndent(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// sendRaw writes c on a new connection to addr and reads the answer. The
// body is written concurrently, so that a server that stops reading (a body
// over the limit) cannot stall the test.
func sendRaw(t *testing.T, addr string, c hostileCase) (int, http.Header, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))

	var head bytes.Buffer
	proto := "HTTP/1.1"
	if c.host == hostNone {
		proto = "HTTP/1.0"
	}
	fmt.Fprintf(&head, "%s %s %s\r\n", c.method, c.target, proto)
	switch c.host {
	case hostNone:
	case "":
		fmt.Fprintf(&head, "Host: %s\r\n", addr)
	case hostEmpty:
		head.WriteString("Host:\r\n")
	default:
		fmt.Fprintf(&head, "Host: %s\r\n", c.host)
	}
	for _, kv := range c.header {
		fmt.Fprintf(&head, "%s: %s\r\n", kv[0], kv[1])
	}
	if c.body != nil {
		head.WriteString("Content-Type: application/json\r\n")
		if c.chunked {
			head.WriteString("Transfer-Encoding: chunked\r\n")
		} else {
			fmt.Fprintf(&head, "Content-Length: %d\r\n", len(c.body))
		}
	}
	head.WriteString("Connection: close\r\n\r\n")

	written := make(chan struct{})
	go func() {
		defer close(written)
		w := bufio.NewWriterSize(conn, 64<<10)
		w.Write(head.Bytes())
		if c.chunked {
			for b := c.body; len(b) > 0; {
				n := min(len(b), 32<<10)
				fmt.Fprintf(w, "%x\r\n", n)
				w.Write(b[:n])
				w.WriteString("\r\n")
				b = b[n:]
			}
			w.WriteString("0\r\n\r\n")
		} else {
			w.Write(c.body)
		}
		w.Flush() // errors are expected once the server stops reading
	}()
	defer func() { conn.Close(); <-written }()

	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %.80q: reading the answer: %v", c.method, c.target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %.80q: reading the body: %v", c.method, c.target, err)
	}
	return resp.StatusCode, resp.Header, body
}

// checkRefusal asserts that an answer is the wire error c expects: a 4xx
// with a JSON {"error","constraint"} body that repeats nothing secret and
// no hostile value.
func checkRefusal(t *testing.T, c hostileCase, status int, hdr http.Header, body []byte, secrets ...string) {
	t.Helper()
	want := c.status
	if want == 0 {
		want = wireStatus[c.constraint]
	}
	var e struct {
		Error      *string `json:"error"`
		Constraint string  `json:"constraint"`
		Violations []struct {
			Path    *string `json:"path"`
			Keyword string  `json:"keyword"`
			Message string  `json:"message"`
		} `json:"violations"`
	}
	err := json.Unmarshal(body, &e)
	if status >= 500 {
		t.Errorf("%s %.120q = %d %.300s; a server error, want %d %s", c.method, c.target, status, body, want, c.constraint)
		return
	}
	if status != want || err != nil || e.Constraint != c.constraint {
		t.Errorf("%s %.120q = %d %.300s; want %d %s", c.method, c.target, status, body, want, c.constraint)
		return
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	if e.Error == nil || *e.Error == "" {
		t.Errorf("body %s has no error text", body)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Errorf("body %s is not a JSON object: %v", body, err)
	}
	for k := range members {
		switch k {
		case "error", "constraint", "violations", "request_id", "revision":
		default:
			t.Errorf("body %s has an unexpected member %q", body, k)
		}
	}
	lower := bytes.ToLower(body)
	for _, s := range append([]string{hostileMarker, "<script"}, secrets...) {
		if s != "" && bytes.Contains(lower, bytes.ToLower([]byte(s))) {
			t.Errorf("answer %.300s repeats %.40q", body, s)
		}
	}
	if len(body) > 16<<10 {
		t.Errorf("answer is %d bytes long", len(body))
	}
	if c.constraint != "schema_violation" {
		if _, ok := members["violations"]; ok {
			t.Errorf("a %s answer carries violations: %s", c.constraint, body)
		}
		return
	}
	if len(e.Violations) == 0 {
		t.Errorf("schema_violation without violations: %s", body)
		return
	}
	found := c.violationAt == ""
	for _, v := range e.Violations {
		if v.Path == nil || v.Keyword == "" || v.Message == "" {
			t.Errorf("violation %+v lacks path, keyword or message", v)
			continue
		}
		if *v.Path == c.violationAt || strings.HasPrefix(*v.Path, c.violationAt+"/") {
			found = true
		}
	}
	if !found {
		t.Errorf("violations %s name nothing at %q", body, c.violationAt)
	}
}

// bodyRoute is a route that reads a JSON body, with a valid body for it
// (never sent as is: every case below breaks it).
type bodyRoute struct {
	name   string
	method string
	path   string
	token  string
	schema bool // validated against the binding: type errors are schema_violation
	field  string
	base   func() map[string]any
}

func (r bodyRoute) header() [][2]string {
	if r.token == "" {
		return nil
	}
	return bearer(r.token)
}

// typeErr is the constraint for a value of the wrong form on r.
func (r bodyRoute) typeErr() string {
	if r.schema {
		return "schema_violation"
	}
	return "invalid_request"
}

func hostileBodyRoutes(f *hostileFixture) []bodyRoute {
	h := f.h
	return []bodyRoute{
		{"proposal", "POST", "/phc/v1/proposals", f.tutorW, true, "key", func() map[string]any {
			return map[string]any{"key": "learning.hostile.note", "value": "v", "kind": "note", "assertion": "reported",
				"subject": "self", "evidence": []any{map[string]any{"ref": "chat://x", "digest": "sha256:0123456789abcdef0123"}},
				"reported": map[string]any{"app": "tutor"}, "valid_from": "2025-01-01T00:00:00Z", "valid_to": "2030-01-01T00:00:00Z",
				"sensitivity": "standard", "restrictions": []any{map[string]any{"type": "no_training", "mandatory": false}},
				"personas_hint": []any{"learning"}, "note": "n"}
		}},
		{"persona", "POST", "/phc/v1/personas", h.owner, true, "id", func() map[string]any {
			return map[string]any{"id": "hostile", "name": "Hostile", "preferences": []any{"p"}, "guardrails": []any{map[string]any{"type": "max_sensitivity", "params": map[string]any{"tier": "standard"}}}}
		}},
		{"grant", "POST", "/phc/v1/grants", h.owner, true, "purpose", func() map[string]any {
			return map[string]any{"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning",
				"operations": []any{"read"}, "selectors": map[string]any{"keys": []any{"learning.*"}, "personas": []any{"learning"}},
				"expires_at": f.tomorrow, "usage": "multi", "route": "local"}
		}},
		{"correction", "PUT", "/phc/v1/claims/" + f.claim, h.owner, true, "value", func() map[string]any {
			return map[string]any{"value": "v", "valid_from": "2025-01-01T00:00:00Z", "sensitivity": "standard",
				"restrictions": []any{map[string]any{"type": "no_training", "mandatory": false}}, "kind": "note",
				"assertion": "reported", "note": "n", "expected_version": 1}
		}},
		{"consumer", "POST", "/phc/v1/consumers", h.owner, false, "name", func() map[string]any {
			return map[string]any{"name": "hostile", "secret": "0123456789abcdef-hostile"}
		}},
		{"confirm", "POST", "/phc/v1/proposals/" + f.pending + "/confirm", h.owner, false, "personas", func() map[string]any {
			return map[string]any{"personas": []any{"learning"}, "edits": map[string]any{"sensitivity": "standard"}}
		}},
		{"reject", "POST", "/phc/v1/proposals/" + f.pending2 + "/reject", h.owner, false, "reason", func() map[string]any {
			return map[string]any{"reason": "no"}
		}},
		{"claim-personas", "POST", "/phc/v1/claims/" + f.claim + "/personas", h.owner, false, "personas", func() map[string]any {
			return map[string]any{"personas": []any{"learning", "personal"}}
		}},
		{"entity", "POST", "/phc/v1/entities", h.owner, false, "type", func() map[string]any {
			return map[string]any{"type": "person", "name": "Ana", "key": "people.hostile.name", "sensitivity": "standard",
				"personas": []any{"learning"}}
		}},
		{"summary", "POST", "/phc/v1/summaries", h.owner, false, "derived_from", func() map[string]any {
			return map[string]any{"value": "a summary", "derived_from": []any{f.claim + "@1"}}
		}},
		{"token", "POST", "/context/tokens/service", "", false, "consumer", func() map[string]any {
			return map[string]any{"consumer": "coach", "secret": "secret-of-coach-0123456789", "scope": "*", "ttl": 3600, "mode": "read"}
		}},
		// The vault is unlocked, so a well-formed unlock is a conflict; a
		// malformed one is refused before that.
		{"unlock", "POST", "/context/unlock", "", false, "password", func() map[string]any {
			return map[string]any{"password": testPassword, "secret_key": f.secretKey}
		}},
	}
}

// hostileCases builds the table, family by family.
func hostileCases(t *testing.T, f *hostileFixture) []hostileCase {
	var cases []hostileCase
	seen := map[string]bool{}
	add := func(c hostileCase) {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		if c.method == "" {
			c.method = "GET"
		}
		cases = append(cases, c)
	}
	owner := f.h.owner
	routes := hostileBodyRoutes(f)
	routeNamed := func(name string) bodyRoute {
		for _, r := range routes {
			if r.name == name {
				return r
			}
		}
		t.Fatalf("no route %q", name)
		return bodyRoute{}
	}
	onRoute := func(family, variant string, r bodyRoute, body []byte, constraint string) hostileCase {
		return hostileCase{name: family + "/" + r.name + "/" + variant, method: r.method, target: r.path,
			header: r.header(), body: body, constraint: constraint}
	}
	m := hostileMarker

	// malformed: syntactically broken JSON, each on two routes.
	malformed := []struct{ name, body string }{
		{"truncated", `{"key":"` + m + `"`},
		{"truncated-in-string", `{"key":"` + m},
		{"trailing-garbage", `{"key":"` + m + `"} trailing`},
		{"two-documents", `{"key":"` + m + `"}{"key":"b"}`},
		{"trailing-comma", `{"key":"` + m + `",}`},
		{"trailing-comma-in-array", `{"personas":["` + m + `",]}`},
		{"nan", `{"value":NaN,"key":"` + m + `"}`},
		{"infinity", `{"value":Infinity}`},
		{"negative-infinity", `{"value":-Infinity}`},
		{"line-comment", "// " + m + "\n{}"},
		{"block-comment", `{/* ` + m + ` */}`},
		{"single-quotes", `{'key':'` + m + `'}`},
		{"byte-order-mark", "\xef\xbb\xbf{\"key\":\"" + m + "\"}"},
		{"unquoted-member-name", `{key:"` + m + `"}`},
		{"leading-zero", `{"value":0123}`},
		{"hex-number", `{"value":0x1F}`},
		{"plus-sign", `{"value":+1}`},
		{"raw-newline-in-string", "{\"key\":\"" + m + "\nx\"}"},
		{"raw-nul-in-string", "{\"key\":\"" + m + "\x00x\"}"},
		{"bad-escape", `{"key":"\q` + m + `"}`},
		{"short-unicode-escape", `{"key":"\u12` + m + `"}`},
		{"capitalised-true", `{"value":True}`},
		{"missing-colon", `{"key" "` + m + `"}`},
		{"missing-comma", `{"key":"` + m + `" "value":"b"}`},
		{"unclosed-array", `{"personas":["` + m + `"}`},
		{"empty", ``},
		{"white-space-only", " \r\n\t "},
		{"number-over-128-bytes", `{"value":` + strings.Repeat("9", 200) + `}`},
		{"exponent-beyond-999", `{"value":1e999999}`},
		{"number-member-name", `{1:"` + m + `"}`},
		{"undefined", `{"value":undefined}`},
		{"python-none", `{"value":None}`},
	}
	for i, mf := range malformed {
		for _, k := range []int{i, i + 5} {
			r := routes[k%len(routes)]
			if r.name == "reject" && mf.name == "empty" {
				r = routes[(k+1)%len(routes)] // an empty reject body is a valid reject
			}
			add(onRoute("malformed", mf.name, r, []byte(mf.body), "invalid_request"))
		}
	}

	// types: a value of the wrong type in every field of every body.
	wrongs := map[byte][]any{
		's': {12345, []any{m}},
		'a': {m, map[string]any{"x": m}},
		'o': {m, []any{m}},
		'b': {m, 1},
		'i': {m, 1.5},
		'd': {m, true}, // a TTL: seconds or a duration string; 12345 would be valid
		't': {12345, []any{m}},
	}
	fields := map[string][]string{
		"proposal": {"key:s", "kind:s", "assertion:s", "subject:s", "evidence:a", "evidence/0:o", "evidence/0/ref:s",
			"evidence/0/digest:s", "reported:o", "reported/app:s", "valid_from:s", "valid_to:s", "sensitivity:s",
			"restrictions:a", "restrictions/0:o", "restrictions/0/type:s", "restrictions/0/mandatory:b",
			"restrictions/0/params:o", "personas_hint:a", "personas_hint/0:s", "note:s"},
		"persona": {"id:s", "name:s", "preferences:a", "preferences/0:s", "guardrails:a", "guardrails/0:o", "guardrails/0/type:s", "guardrails/0/params:o", "guardrails/0/params/tier:s"},
		"grant": {"recipient:o", "recipient/kind:s", "recipient/id:s", "recipient/issuer:s", "purpose:s", "operations:a",
			"operations/0:s", "selectors:o", "selectors/keys:a", "selectors/keys/0:s", "selectors/personas:a",
			"selectors/claims:a", "expires_at:s", "usage:s", "route:s"},
		"correction": {"valid_from:s", "valid_to:s", "sensitivity:s", "restrictions:a", "kind:s", "assertion:s",
			"note:s", "expected_version:i"},
		"consumer":       {"name:s", "secret:s"},
		"confirm":        {"personas:a", "personas/0:s", "edits:o", "edits/sensitivity:s", "edits/valid_from:t", "edits/valid_to:t"},
		"reject":         {"reason:s"},
		"claim-personas": {"personas:a", "personas/0:s"},
		"token":          {"consumer:s", "secret:s", "scope:s", "mode:s", "ttl:d"},
		"unlock":         {"password:s", "secret_key:s"},
	}
	for _, r := range routes {
		for _, spec := range fields[r.name] {
			ptr, kind, _ := strings.Cut(spec, ":")
			for i, bad := range wrongs[kind[0]] {
				doc := r.base()
				setAt(t, doc, ptr, bad)
				c := onRoute("types", fmt.Sprintf("%s/%d", ptr, i), r, jsonBytes(t, doc), r.typeErr())
				if r.schema {
					c.violationAt = "/" + ptr
				}
				add(c)
			}
		}
	}

	// unknown: members no schema or Go shape takes, top level and nested,
	// including names that differ from a known one only in case.
	unknown := []struct {
		route, ptr string
		caseOf     string // the member replaced by its case variant, if any
	}{
		{"proposal", "zz_extra", ""}, {"proposal", "evidence/0/url", ""}, {"proposal", "reported/ip", ""},
		{"proposal", "restrictions/0/extra", ""}, {"proposal", "KEY", "key"},
		{"persona", "zz_extra", ""}, {"persona", "guardrails/0/extra", ""}, {"persona", "Name", "name"},
		{"grant", "zz_extra", ""}, {"grant", "recipient/extra", ""}, {"grant", "selectors/extra", ""},
		{"grant", "Purpose", "purpose"},
		{"correction", "zz_extra", ""}, {"correction", "restrictions/0/extra", ""},
		{"consumer", "zz_extra", ""}, {"consumer", "Name", "name"}, {"consumer", "NAME", ""},
		{"confirm", "zz_extra", ""}, {"confirm", "edits/extra", ""}, {"confirm", "Personas", "personas"},
		{"reject", "zz_extra", ""}, {"reject", "Reason", "reason"},
		{"claim-personas", "zz_extra", ""}, {"claim-personas", "PERSONAS", "personas"},
		{"token", "zz_extra", ""}, {"token", "Mode", "mode"},
		{"unlock", "zz_extra", ""}, {"unlock", "Password", "password"}, {"unlock", "SECRET_KEY", "secret_key"},
	}
	for _, u := range unknown {
		r := routeNamed(u.route)
		doc := r.base()
		v := any(m)
		if u.caseOf != "" {
			v = doc[u.caseOf]
			delete(doc, u.caseOf)
		}
		setAt(t, doc, u.ptr, v)
		c := onRoute("unknown", strings.ReplaceAll(u.ptr, "/", "."), r, jsonBytes(t, doc), r.typeErr())
		if r.schema {
			c.violationAt = "/" + u.ptr
		}
		add(c)
	}
	// A member name that is markup, and one 10,000 bytes long: neither may
	// come back raw or whole.
	for _, r := range []bodyRoute{routeNamed("persona"), routeNamed("consumer")} {
		for _, n := range []struct{ variant, name string }{
			{"markup-name", "<script>alert(1)</script>"},
			{"long-name", strings.Repeat("n", 10_000)},
		} {
			doc := r.base()
			doc[n.name] = m
			add(onRoute("unknown", n.variant, r, jsonBytes(t, doc), r.typeErr()))
		}
	}

	// duplicate: the same member twice, literally or once escaped, at the
	// top level of every body and nested.
	for _, r := range routes {
		raw := jsonBytes(t, r.base())
		val := jsonBytes(t, m)
		lit := append([]byte(`{"`+r.field+`":`), append(val, ',')...)
		add(onRoute("duplicate", "top", r, append(lit, raw[1:]...), "invalid_request"))
		esc := fmt.Sprintf(`{"\u%04x%s":%s,`, r.field[0], r.field[1:], val)
		add(onRoute("duplicate", "escaped", r, append([]byte(esc), raw[1:]...), "invalid_request"))
	}
	for _, d := range []struct{ route, variant, body string }{
		{"proposal", "nested-reported", `{"key":"learning.x","value":1,"kind":"note","assertion":"reported","reported":{"app":"a","app":"` + m + `"}}`},
		{"proposal", "in-value", `{"key":"learning.x","value":{"a":1,"a":"` + m + `"},"kind":"note","assertion":"reported"}`},
		{"grant", "nested-recipient", `{"recipient":{"kind":"consumer","id":"budget","id":"coach"},"purpose":"learning","operations":["read"],"selectors":{"keys":["learning.*"]},"expires_at":"` + f.tomorrow + `"}`},
		{"confirm", "nested-edits", `{"personas":["learning"],"edits":{"sensitivity":"public","sensitivity":"critical"}}`},
		{"correction", "in-value", `{"value":{"x":{"y":1,"y":2}}}`},
	} {
		add(onRoute("duplicate", d.variant, routeNamed(d.route), []byte(d.body), "invalid_request"))
	}

	// huge: bodies over the 1 MiB limit on every body route, framed by
	// Content-Length and chunked; and the limits inside a smaller body.
	pad := strings.Repeat("A", httpapi.MaxBody+MiB/2)
	for _, r := range routes {
		doc := r.base()
		doc["zz_pad"] = pad
		big := jsonBytes(t, doc)
		add(onRoute("huge", "content-length", r, big, "too_large"))
		c := onRoute("huge", "chunked", r, big, "too_large")
		c.chunked = true
		add(c)
	}
	{
		r := routeNamed("proposal")
		doc := r.base()
		doc["value"] = pad
		add(onRoute("huge", "value-over-limit", r, jsonBytes(t, doc), "too_large"))
		raw := jsonBytes(t, r.base())
		over := append(bytes.Repeat([]byte(" "), httpapi.MaxBody+1-len(raw)), raw...)
		add(onRoute("huge", "limit-plus-one", r, over, "too_large"))
		c := routeNamed("consumer")
		at := append(bytes.Repeat([]byte(" "), httpapi.MaxBody-len(`{"zz":1}`)), `{"zz":1}`...)
		add(onRoute("huge", "at-limit-still-checked", c, at, "invalid_request"))
		doc = r.base()
		doc["value"] = strings.Repeat("v", 64<<10+1)
		add(onRoute("huge", "string-over-64KiB", r, jsonBytes(t, doc), "invalid_request"))
		doc = r.base()
		doc["value"] = make([]int, 10_001)
		add(onRoute("huge", "over-10000-members", r, jsonBytes(t, doc), "invalid_request"))
		name := strings.Repeat("k", 64<<10+1)
		add(onRoute("huge", "member-name-over-64KiB", routeNamed("token"), []byte(`{"`+name+`":1}`), "invalid_request"))
		doc = routeNamed("persona").base()
		prefs := make([]string, 65)
		for i := range prefs {
			prefs[i] = m
		}
		doc["preferences"] = prefs
		pc := onRoute("huge", "persona-65-preferences", routeNamed("persona"), jsonBytes(t, doc), "schema_violation")
		pc.violationAt = "/preferences"
		add(pc)
	}

	// deep: 10,000-deep arrays and objects as whole documents on every
	// route, inside values, unclosed, and one level over the limit.
	deepArr := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
	deepObj := strings.Repeat(`{"a":`, 10_000) + `"` + m + `"` + strings.Repeat("}", 10_000)
	for _, r := range routes {
		add(onRoute("deep", "arrays", r, []byte(deepArr), "invalid_request"))
		add(onRoute("deep", "objects", r, []byte(deepObj), "invalid_request"))
	}
	inValue := func(route, field, deep string) []byte {
		raw := jsonBytes(t, routeNamed(route).base())
		pre := fmt.Sprintf(`{"%s":%s,`, field, deep)
		var d map[string]any
		json.Unmarshal(raw, &d)
		delete(d, field)
		return append([]byte(pre), jsonBytes(t, d)[1:]...)
	}
	add(onRoute("deep", "proposal-value-arrays", routeNamed("proposal"), inValue("proposal", "value", deepArr), "invalid_request"))
	add(onRoute("deep", "proposal-value-objects", routeNamed("proposal"), inValue("proposal", "value", deepObj), "invalid_request"))
	add(onRoute("deep", "correction-value", routeNamed("correction"), inValue("correction", "value", deepArr), "invalid_request"))
	add(onRoute("deep", "confirm-edits", routeNamed("confirm"), []byte(`{"personas":["learning"],"edits":{"value":`+deepObj+`}}`), "invalid_request"))
	add(onRoute("deep", "grant-selectors", routeNamed("grant"), inValue("grant", "selectors", deepObj), "invalid_request"))
	add(onRoute("deep", "unclosed-arrays", routeNamed("proposal"), []byte(strings.Repeat("[", 10_000)), "invalid_request"))
	add(onRoute("deep", "unclosed-objects", routeNamed("unlock"), []byte(strings.Repeat(`{"a":`, 10_000)), "invalid_request"))
	add(onRoute("deep", "depth-33", routeNamed("proposal"),
		inValue("proposal", "value", strings.Repeat("[", 32)+strings.Repeat("]", 32)), "invalid_request"))

	// utf8: invalid UTF-8 in a value and in a member name of every body,
	// and the classic forms in a proposal.
	for _, r := range routes {
		doc := r.base()
		doc[r.field] = "@@BAD@@"
		raw := jsonBytes(t, doc)
		add(onRoute("utf8", "in-value", r, bytes.Replace(raw, []byte("@@BAD@@"), []byte(m+"\xff"), 1), "invalid_request"))
		add(onRoute("utf8", "in-member-name", r, append([]byte("{\"k\xfe\xff\":1,"), jsonBytes(t, r.base())[1:]...), "invalid_request"))
	}
	for _, u := range []struct{ variant, bad string }{
		{"overlong-slash", "\xc0\xaf"}, {"overlong-nul", "\xc0\x80"}, {"utf8-surrogate", "\xed\xa0\x80"},
		{"truncated-sequence", "\xe2\x82"}, {"continuation-only", "\x80\x80"}, {"beyond-u10ffff", "\xf4\x90\x80\x80"},
		{"lone-high-surrogate-escape", `\ud800`}, {"lone-low-surrogate-escape", `\udc00`},
		{"reversed-surrogate-escapes", `\udc00\ud800`},
	} {
		r := routeNamed("proposal")
		doc := r.base()
		doc["value"] = "@@BAD@@"
		raw := bytes.Replace(jsonBytes(t, doc), []byte("@@BAD@@"), []byte(m+u.bad), 1)
		add(onRoute("utf8", u.variant, r, raw, "invalid_request"))
	}

	// ids: path traversal and malformed ids in every {id} route. The
	// request line is written verbatim, so the server sees the dots.
	type idRoute struct {
		name, method, before, after, token string
		body                               []byte
		real, other, prefix, absent        string
	}
	confirmBody := []byte(`{"personas":["learning"]}`)
	idRoutes := []idRoute{
		{"grant-revoke", "DELETE", "/phc/v1/grants/", "", owner, nil, f.grant, f.claim, "grt_", f.absentGrant},
		{"proposal-confirm", "POST", "/phc/v1/proposals/", "/confirm", owner, confirmBody, f.pending, f.grant, "prp_", f.absentProposal},
		{"proposal-reject", "POST", "/phc/v1/proposals/", "/reject", owner, []byte(`{"reason":"x"}`), f.pending2, f.claim, "prp_", f.absentProposal},
		{"claim-get", "GET", "/phc/v1/claims/", "", owner, nil, f.claim, f.pending, "clm_", f.absentClaim},
		{"claim-get-consumer", "GET", "/phc/v1/claims/", "?purpose=learning", f.coachR, nil, f.claim, f.grant, "clm_", f.absentClaim},
		{"claim-versions", "GET", "/phc/v1/claims/", "/versions", owner, nil, f.claim, f.grant, "clm_", f.absentClaim},
		{"claim-correct", "PUT", "/phc/v1/claims/", "", owner, []byte(`{"value":"` + m + `"}`), f.claim, f.grant, "clm_", f.absentClaim},
		{"claim-delete", "DELETE", "/phc/v1/claims/", "", owner, nil, f.claim, f.pending, "clm_", f.absentClaim},
		{"claim-personas", "POST", "/phc/v1/claims/", "/personas", owner, confirmBody, f.claim, f.grant, "clm_", f.absentClaim},
	}
	for _, ir := range idRoutes {
		variants := []struct{ name, id, constraint string }{
			{"dotdot", "..", "invalid_request"},
			{"dotdot-up-and-over", "../../review", "invalid_request"},
			{"dot", ".", "invalid_request"},
			{"dotdot-encoded", "%2e%2e", "invalid_request"},
			{"dotdot-encoded-upper", "%2E%2E", "invalid_request"},
			{"encoded-slash", ir.real + "%2F..%2F..%2Freview", "invalid_request"},
			{"encoded-slash-clean", ir.real + "%2f" + ir.real, "invalid_request"},
			{"backslash", "..%5C..%5Creview", "invalid_request"},
			{"double-encoded", "%252e%252e%252f", "invalid_request"},
			{"overlong", ir.prefix + "ZZHOSTILEZZ" + strings.Repeat("A", 4096), "invalid_request"},
			{"wrong-prefix", ir.other, "invalid_request"},
			{"lower-case", strings.ToLower(ir.real), "invalid_request"},
			{"cyrillic-lookalike", ir.real[:len(ir.real)-1] + "%D0%90", "invalid_request"},
			{"fullwidth-lookalike", ir.real[:len(ir.real)-1] + "%EF%BC%A1", "invalid_request"},
			{"nul-suffix", ir.real + "%00", "invalid_request"},
			{"nul-inside", ir.prefix + "%00" + ir.real[len(ir.prefix)+1:], "invalid_request"},
			{"one-short", ir.real[:len(ir.real)-1], "invalid_request"},
			{"absent", ir.absent, "not_found"},
		}
		for _, v := range variants {
			add(hostileCase{name: "ids/" + ir.name + "/" + v.name, method: ir.method, target: ir.before + v.id + ir.after,
				header: bearer(ir.token), body: ir.body, constraint: v.constraint})
		}
	}
	for _, p := range []struct{ name, target, constraint string }{
		{"deep-traversal", "/phc/v1/claims/../../../../etc/passwd", "invalid_request"},
		{"encoded-root-traversal", "/%2e%2e/%2e%2e/etc/passwd", "invalid_request"},
		{"dot-segment", "/phc/v1/./review", "invalid_request"},
		{"double-slash", "//phc/v1/review", "invalid_request"},
		{"trailing-slash", "/phc/v1/review/", "invalid_request"},
		{"versions-dotdot", "/phc/v1/claims/" + f.claim + "/versions/..", "invalid_request"},
		{"asterisk", "*", "invalid_request"},
		{"under-versions", "/phc/v1/claims/" + f.claim + "/versions/extra", "not_found"},
		{"unknown-route", "/phc/v1/" + m, "not_found"},
		{"unknown-version", "/phc/v2/claims", "not_found"},
	} {
		add(hostileCase{name: "ids/path/" + p.name, target: p.target, header: bearer(owner), constraint: p.constraint})
	}

	// tokens: missing, malformed, wrong, forged, revoked and misplaced
	// credentials.
	flip := owner[:len(owner)-1] + string("AB"[strings.IndexByte("A", owner[len(owner)-1])+1])
	badTokens := []struct{ name, value string }{
		{"none", ""},
		{"scheme-only", "Bearer"},
		{"scheme-and-spaces", "Bearer    "},
		{"basic", "Basic b3duZXI6cGFzc3dvcmQ="},
		{"garbage", "Bearer " + m},
		{"truncated", "Bearer " + owner[:len(owner)-1]},
		{"extended", "Bearer " + owner + "A"},
		{"last-char-changed", "Bearer " + flip},
		{"owner-as-service", "Bearer ctxs_" + owner[4:]},
		{"upper-case-prefix", "Bearer CTX_" + owner[4:]},
		{"forged-owner", "Bearer ctx_" + strings.Repeat("A", 43)},
		{"forged-service", "Bearer ctxs_" + strings.Repeat("A", 43)},
		{"8KiB", "Bearer ctx_" + strings.Repeat("A", 8<<10)},
		{"invalid-utf8", "Bearer ctx_\xff\xfe" + owner[6:]},
		{"cyrillic-lookalike", "Bearer " + owner[:len(owner)-1] + "\xd0\x90"},
		{"no-scheme", owner},
		{"token-scheme", "Token " + owner},
	}
	for i, bt := range badTokens {
		var hdr [][2]string
		if bt.value != "" {
			hdr = [][2]string{{"Authorization", bt.value}}
		}
		targets := []struct{ method, target string }{{"GET", "/phc/v1/review"}, {"GET", "/phc/v1/grants"}, {"GET", "/phc/v1/context?purpose=learning"}}
		tg := targets[i%len(targets)]
		add(hostileCase{name: "tokens/" + bt.name, method: tg.method, target: tg.target, header: hdr, constraint: "unauthenticated"})
	}
	add(hostileCase{name: "tokens/two-headers-bad-first", target: "/phc/v1/review",
		header: [][2]string{{"Authorization", "Bearer " + m}, {"Authorization", "Bearer " + owner}}, constraint: "unauthenticated"})
	add(hostileCase{name: "tokens/in-query", target: "/phc/v1/review?access_token=" + owner, constraint: "unauthenticated"})
	add(hostileCase{name: "tokens/in-cookie", target: "/phc/v1/review", header: [][2]string{{"Cookie", "token=" + owner}}, constraint: "unauthenticated"})
	add(hostileCase{name: "tokens/propose-without-token", method: "POST", target: "/phc/v1/proposals",
		body: jsonBytes(t, routeNamed("proposal").base()), constraint: "unauthenticated"})
	validGrant := jsonBytes(t, routeNamed("grant").base())
	validPersona := jsonBytes(t, routeNamed("persona").base())
	validConsumer := jsonBytes(t, routeNamed("consumer").base())
	ownerRoutes := []struct {
		name, method, target string
		body                 []byte
	}{
		{"review", "GET", "/phc/v1/review", nil},
		{"grants-list", "GET", "/phc/v1/grants", nil},
		{"grants-create", "POST", "/phc/v1/grants", validGrant},
		{"grant-revoke", "DELETE", "/phc/v1/grants/" + f.grant, nil},
		{"personas-create", "POST", "/phc/v1/personas", validPersona},
		{"personas-list", "GET", "/phc/v1/personas", nil},
		{"consumers-create", "POST", "/phc/v1/consumers", validConsumer},
		{"consumers-list", "GET", "/phc/v1/consumers", nil},
		{"confirm", "POST", "/phc/v1/proposals/" + f.pending + "/confirm", confirmBody},
		{"reject", "POST", "/phc/v1/proposals/" + f.pending + "/reject", []byte(`{}`)},
		{"claims-list", "GET", "/phc/v1/claims", nil},
		{"claim-versions", "GET", "/phc/v1/claims/" + f.claim + "/versions", nil},
		{"claim-correct", "PUT", "/phc/v1/claims/" + f.claim, []byte(`{"value":"` + m + `"}`)},
		{"claim-delete", "DELETE", "/phc/v1/claims/" + f.claim, nil},
		{"claim-personas", "POST", "/phc/v1/claims/" + f.claim + "/personas", []byte(`{"personas":[]}`)},
		{"receipts", "GET", "/phc/v1/receipts", nil},
		{"receipts-verify", "GET", "/phc/v1/receipts/verify", nil},
		{"lock", "POST", "/context/lock", nil},
	}
	for i, or := range ownerRoutes {
		tok := []string{f.coachR, f.tutorW, f.tutorRW}[i%3]
		add(hostileCase{name: "tokens/consumer-on-owner-route/" + or.name, method: or.method, target: or.target,
			header: bearer(tok), body: or.body, constraint: "session_required"})
	}
	learningProposal := jsonBytes(t, map[string]any{"key": "learning.hostile", "value": m, "kind": "note", "assertion": "reported"})
	add(hostileCase{name: "tokens/mode/write-token-reads-context", target: "/phc/v1/context?purpose=learning",
		header: bearer(f.tutorW), constraint: "mode_denied"})
	add(hostileCase{name: "tokens/mode/write-token-reads-claim", target: "/phc/v1/claims/" + f.claim + "?purpose=learning",
		header: bearer(f.tutorW), constraint: "mode_denied"})
	add(hostileCase{name: "tokens/mode/read-token-proposes", method: "POST", target: "/phc/v1/proposals",
		header: bearer(f.coachR), body: learningProposal, constraint: "mode_denied"})
	add(hostileCase{name: "tokens/scope/key-outside-token-scope", method: "POST", target: "/phc/v1/proposals", header: bearer(f.tutorW),
		body:       jsonBytes(t, map[string]any{"key": "identity.full_name", "value": m, "kind": "fact", "assertion": "reported"}),
		constraint: "scope_exceeded"})
	add(hostileCase{name: "tokens/scope/key-outside-contribute-grant", method: "POST", target: "/phc/v1/proposals", header: bearer(f.tutorRW),
		body:       jsonBytes(t, map[string]any{"key": "work.salary", "value": m, "kind": "fact", "assertion": "reported"}),
		constraint: "scope_exceeded"})
	add(hostileCase{name: "tokens/revoked-grant", target: "/phc/v1/claims/" + f.workClaim + "?purpose=work",
		header: bearer(f.coachR), constraint: "not_found"})
	add(hostileCase{name: "tokens/no-grant", target: "/phc/v1/claims/" + f.claim + "?purpose=learning",
		header: bearer(f.budgetR), constraint: "not_found"})
	add(hostileCase{name: "tokens/deleted-claim", target: "/phc/v1/claims/" + f.deleted + "?purpose=learning",
		header: bearer(f.coachR), constraint: "not_found"})
	add(hostileCase{name: "tokens/contributor-reads-claim", target: "/phc/v1/claims/" + f.claim + "?purpose=learning",
		header: bearer(f.tutorRW), constraint: "not_found"})
	add(hostileCase{name: "tokens/owner-on-recipient-route", target: "/phc/v1/context?purpose=learning",
		header: bearer(owner), constraint: "invalid_request"})
	for _, mt := range []struct {
		name string
		body map[string]any
	}{
		{"unknown-consumer", map[string]any{"consumer": m, "secret": "secret-of-coach-0123456789", "scope": "*"}},
		{"wrong-secret", map[string]any{"consumer": "coach", "secret": "secret-of-tutor-0123456789", "scope": "*"}},
		{"empty-secret", map[string]any{"consumer": "coach", "secret": "", "scope": "*"}},
		{"secret-over-256-bytes", map[string]any{"consumer": "coach", "secret": strings.Repeat(m, 30), "scope": "*"}},
	} {
		add(hostileCase{name: "tokens/mint/" + mt.name, method: "POST", target: "/context/tokens/service",
			body: jsonBytes(t, mt.body), constraint: "unauthenticated"})
	}
	for _, mt := range []struct {
		name string
		body map[string]any
	}{
		{"scope-traversal", map[string]any{"scope": "../*"}},
		{"scope-empty", map[string]any{"scope": " , ,"}},
		{"scope-65-patterns", map[string]any{"scope": strings.Repeat("a,", 65)}},
		{"mode-admin", map[string]any{"mode": "admin"}},
		{"ttl-negative", map[string]any{"ttl": -60}},
		{"ttl-zero", map[string]any{"ttl": 0}},
		{"ttl-exponent", map[string]any{"ttl": json.Number("1e3")}},
		{"ttl-overflow", map[string]any{"ttl": "99999999999999h"}},
		{"ttl-unit-unknown", map[string]any{"ttl": "3 fortnights"}},
		{"ttl-not-duration", map[string]any{"ttl": m}},
	} {
		doc := routeNamed("token").base()
		for k, v := range mt.body {
			doc[k] = v
		}
		add(hostileCase{name: "tokens/mint/" + mt.name, method: "POST", target: "/context/tokens/service",
			body: jsonBytes(t, doc), constraint: "invalid_request"})
	}

	// hygiene: a Host that is not loopback (DNS rebinding), a foreign
	// Origin, a cross-site fetch — on routes that would otherwise succeed.
	mint := jsonBytes(t, routeNamed("token").base())
	unlock := jsonBytes(t, routeNamed("unlock").base())
	_, port, _ := net.SplitHostPort(f.h.d.addr)
	hygieneTargets := []struct {
		name, method, target string
		hdr                  [][2]string
		body                 []byte
	}{
		{"review", "GET", "/phc/v1/review", bearer(owner), nil},
		{"persona", "POST", "/phc/v1/personas", bearer(owner), validPersona},
		{"mint", "POST", "/context/tokens/service", nil, mint},
		{"context", "GET", "/phc/v1/context?purpose=learning", bearer(f.coachR), nil},
		{"unlock", "POST", "/context/unlock", nil, unlock},
	}
	hosts := []struct{ name, host string }{
		{"evil", "evil.com"}, {"evil-with-port", "evil.com:" + port}, {"loopback-prefix", "127.0.0.1.evil.com"},
		{"localhost-prefix", "localhost.evil.com"}, {"empty", hostEmpty}, {"absent", hostNone},
		{"any-address", "0.0.0.0:" + port}, {"private-address", "192.168.1.10"}, {"localhost-dot", "localhost."},
		{"short-loopback", "127.1"}, {"decimal-loopback", "2130706433"},
	}
	for i, hst := range hosts {
		tg := hygieneTargets[i%len(hygieneTargets)]
		add(hostileCase{name: "hygiene/host/" + hst.name, method: tg.method, target: tg.target, host: hst.host,
			header: tg.hdr, body: tg.body, constraint: "invalid_request"})
	}
	add(hostileCase{name: "hygiene/host/absolute-form-target", target: "http://evil.com/phc/v1/review",
		header: bearer(owner), constraint: "invalid_request"})
	origins := []struct{ name, origin string }{
		{"evil", "http://evil.com"}, {"evil-https", "https://evil.com:443"}, {"null", "null"},
		{"loopback-prefix", "http://127.0.0.1.evil.com"}, {"userinfo", "http://localhost@evil.com"},
		{"file", "file://"}, {"extension", "chrome-extension://abcdef"}, {"garbage", "%%" + m},
	}
	for i, o := range origins {
		tg := hygieneTargets[(i+2)%len(hygieneTargets)]
		add(hostileCase{name: "hygiene/origin/" + o.name, method: tg.method, target: tg.target,
			header: append([][2]string{{"Origin", o.origin}}, tg.hdr...), body: tg.body, constraint: "invalid_request"})
	}
	add(hostileCase{name: "hygiene/sec-fetch-site/cross-site", method: "POST", target: "/phc/v1/personas",
		header: append([][2]string{{"Sec-Fetch-Site", "cross-site"}}, bearer(owner)...), body: validPersona, constraint: "invalid_request"})

	// query: malformed, out-of-range and repeated parameters.
	queries := []struct {
		name, target, token, constraint string
	}{
		{"min-revision-negative", "/phc/v1/context?purpose=learning&min_revision=-1", f.coachR, "invalid_request"},
		{"min-revision-word", "/phc/v1/context?purpose=learning&min_revision=abc", f.coachR, "invalid_request"},
		{"min-revision-fraction", "/phc/v1/context?purpose=learning&min_revision=1.5", f.coachR, "invalid_request"},
		{"min-revision-hex", "/phc/v1/context?purpose=learning&min_revision=0x10", f.coachR, "invalid_request"},
		{"min-revision-plus", "/phc/v1/context?purpose=learning&min_revision=%2B1", f.coachR, "invalid_request"},
		{"min-revision-overflow", "/phc/v1/context?purpose=learning&min_revision=18446744073709551616", f.coachR, "invalid_request"},
		{"min-revision-empty-repeated", "/phc/v1/context?purpose=learning&min_revision=&min_revision=1", f.coachR, "invalid_request"},
		{"min-revision-repeated", "/phc/v1/context?purpose=learning&min_revision=1&min_revision=2", f.coachR, "invalid_request"},
		{"min-revision-ahead", "/phc/v1/context?purpose=learning&min_revision=18446744073709551615", f.coachR, "conflict"},
		{"purpose-missing", "/phc/v1/context", f.coachR, "invalid_request"},
		{"purpose-empty", "/phc/v1/context?purpose=", f.coachR, "invalid_request"},
		{"purpose-repeated", "/phc/v1/context?purpose=learning&purpose=work", f.coachR, "invalid_request"},
		{"purpose-201-characters", "/phc/v1/context?purpose=" + strings.Repeat("p", 201), f.coachR, "invalid_request"},
		{"purpose-invalid-utf8", "/phc/v1/context?purpose=learning%FF", f.coachR, "invalid_request"},
		{"purpose-nul", "/phc/v1/context?purpose=learning%00", f.coachR, "invalid_request"},
		{"purpose-bidi-override-markup", "/phc/v1/context?purpose=%E2%80%AE%3Cscript%3E", f.coachR, "invalid_request"},
		{"persona-traversal", "/phc/v1/context?purpose=learning&persona=../work", f.coachR, "invalid_request"},
		{"persona-upper-case", "/phc/v1/context?purpose=learning&persona=Learning", f.coachR, "invalid_request"},
		{"persona-repeated", "/phc/v1/context?purpose=learning&persona=learning&persona=work", f.coachR, "invalid_request"},
		{"bad-escape", "/phc/v1/context?purpose=%zz", f.coachR, "invalid_request"},
		{"semicolon", "/phc/v1/context?purpose=learning;min_revision=1", f.coachR, "invalid_request"},
		{"claim-purpose-missing", "/phc/v1/claims/" + f.claim, f.coachR, "invalid_request"},
		{"claim-purpose-repeated", "/phc/v1/claims/" + f.claim + "?purpose=learning&purpose=learning", f.coachR, "invalid_request"},
		{"claim-purpose-invalid-utf8", "/phc/v1/claims/" + f.claim + "?purpose=learning%FF", f.coachR, "invalid_request"},
		{"claim-purpose-201-characters", "/phc/v1/claims/" + f.claim + "?purpose=" + strings.Repeat("p", 201), f.coachR, "invalid_request"},
		{"receipts-limit-word", "/phc/v1/receipts?limit=abc", owner, "invalid_request"},
		{"receipts-limit-negative", "/phc/v1/receipts?limit=-1", owner, "invalid_request"},
		{"receipts-limit-1001", "/phc/v1/receipts?limit=1001", owner, "invalid_request"},
		{"receipts-limit-max-uint", "/phc/v1/receipts?limit=18446744073709551615", owner, "invalid_request"},
		{"receipts-limit-exponent", "/phc/v1/receipts?limit=1e3", owner, "invalid_request"},
		{"receipts-limit-repeated", "/phc/v1/receipts?limit=1&limit=2", owner, "invalid_request"},
		{"claims-key-traversal", "/phc/v1/claims?key=../../etc", owner, "invalid_request"},
		{"claims-key-upper-case", "/phc/v1/claims?key=Learning.*", owner, "invalid_request"},
		{"claims-key-double-star", "/phc/v1/claims?key=learning.**", owner, "invalid_request"},
		{"claims-key-repeated", "/phc/v1/claims?key=learning.*&key=work.*", owner, "invalid_request"},
		{"claims-persona-traversal", "/phc/v1/claims?persona=..%2Fwork", owner, "invalid_request"},
	}
	for _, q := range queries {
		add(hostileCase{name: "query/" + q.name, target: q.target, header: bearer(q.token), constraint: q.constraint})
	}

	// schema: documents that decode but break the binding. Every answer
	// has violations that point at the fault and do not repeat the value.
	prop := func(edit func(map[string]any)) []byte {
		doc := map[string]any{"key": "learning.hostile.note", "value": m, "kind": "note", "assertion": "reported"}
		edit(doc)
		return jsonBytes(t, doc)
	}
	schemaCases := []struct {
		route, name, at string
		body            []byte
	}{
		{"proposal", "key-missing", "/key", prop(func(d map[string]any) { delete(d, "key") })},
		{"proposal", "value-missing", "/value", prop(func(d map[string]any) { delete(d, "value") })},
		{"proposal", "kind-missing", "/kind", prop(func(d map[string]any) { delete(d, "kind") })},
		{"proposal", "assertion-missing", "/assertion", prop(func(d map[string]any) { delete(d, "assertion") })},
		{"proposal", "key-traversal", "/key", prop(func(d map[string]any) { d["key"] = "learning/../../" + m })},
		{"proposal", "key-upper-case", "/key", prop(func(d map[string]any) { d["key"] = "learning." + m })},
		{"proposal", "key-17-segments", "/key", prop(func(d map[string]any) { d["key"] = "learning" + strings.Repeat(".a", 16) })},
		{"proposal", "key-over-256", "/key", prop(func(d map[string]any) { d["key"] = "learning." + strings.Repeat("abcdefgh.", 40) + "x" })},
		{"proposal", "key-lookalike", "/key", prop(func(d map[string]any) { d["key"] = "learn\u0456ng.x" })},
		{"proposal", "key-empty-segment", "/key", prop(func(d map[string]any) { d["key"] = "learning..x" })},
		{"proposal", "kind-unknown", "/kind", prop(func(d map[string]any) { d["kind"] = m })},
		{"proposal", "assertion-unknown", "/assertion", prop(func(d map[string]any) { d["assertion"] = "observed-" + m })},
		{"proposal", "subject-owner", "/subject", prop(func(d map[string]any) { d["subject"] = "owner" + m })},
		{"proposal", "evidence-ref-missing", "/evidence/0/ref", prop(func(d map[string]any) { d["evidence"] = []any{map[string]any{"digest": "sha256:0123456789abcdef"}} })},
		{"proposal", "evidence-ref-empty", "/evidence/0/ref", prop(func(d map[string]any) { d["evidence"] = []any{map[string]any{"ref": ""}} })},
		{"proposal", "evidence-33-items", "/evidence", prop(func(d map[string]any) {
			ev := make([]any, 33)
			for i := range ev {
				ev[i] = map[string]any{"ref": m}
			}
			d["evidence"] = ev
		})},
		{"proposal", "evidence-digest-md5", "/evidence/0/digest", prop(func(d map[string]any) { d["evidence"] = []any{map[string]any{"ref": "x", "digest": "md5:" + m}} })},
		{"proposal", "reported-app-over-256", "/reported/app", prop(func(d map[string]any) { d["reported"] = map[string]any{"app": strings.Repeat(m, 30)} })},
		{"proposal", "valid-from-not-a-date", "/valid_from", prop(func(d map[string]any) { d["valid_from"] = "yesterday " + m })},
		{"proposal", "valid-to-bad-month", "/valid_to", prop(func(d map[string]any) { d["valid_to"] = "2030-13-01T00:00:00Z" })},
		{"proposal", "sensitivity-unknown", "/sensitivity", prop(func(d map[string]any) { d["sensitivity"] = "ultra-" + m })},
		{"proposal", "purpose-only-without-params", "/restrictions/0/params", prop(func(d map[string]any) {
			d["restrictions"] = []any{map[string]any{"type": "purpose_only", "mandatory": true}}
		})},
		{"proposal", "expires-bad-at", "/restrictions/0/params/at", prop(func(d map[string]any) {
			d["restrictions"] = []any{map[string]any{"type": "expires", "mandatory": true, "params": map[string]any{"at": m}}}
		})},
		{"proposal", "source-controlled-without-holder", "/restrictions/0/holder", prop(func(d map[string]any) {
			d["restrictions"] = []any{map[string]any{"type": "source_controlled", "mandatory": true}}
		})},
		{"proposal", "restriction-type-markup", "/restrictions/0/type", prop(func(d map[string]any) {
			d["restrictions"] = []any{map[string]any{"type": "<script>" + m, "mandatory": true}}
		})},
		{"proposal", "restriction-mandatory-missing", "/restrictions/0/mandatory", prop(func(d map[string]any) {
			d["restrictions"] = []any{map[string]any{"type": "no_export"}}
		})},
		{"proposal", "personas-hint-traversal", "/personas_hint/0", prop(func(d map[string]any) { d["personas_hint"] = []any{"../" + m} })},
		{"proposal", "note-over-4096", "/note", prop(func(d map[string]any) { d["note"] = strings.Repeat(m, 400) })},
		{"proposal", "empty-object", "/key", []byte(`{}`)},
		{"grant", "oidc-without-issuer", "/recipient/issuer", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "oidc", "id": m}, "purpose": "learning", "operations": []any{"read"},
			"selectors": map[string]any{"keys": []any{"learning.*"}}, "expires_at": f.tomorrow})},
		{"grant", "operations-duplicated", "/operations", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning", "operations": []any{"read", "read"},
			"selectors": map[string]any{"keys": []any{"learning.*"}}, "expires_at": f.tomorrow})},
		{"grant", "operations-admin", "/operations/0", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning", "operations": []any{"admin"},
			"selectors": map[string]any{"keys": []any{"learning.*"}}, "expires_at": f.tomorrow})},
		{"grant", "selectors-empty", "/selectors", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning", "operations": []any{"read"},
			"selectors": map[string]any{}, "expires_at": f.tomorrow})},
		{"grant", "purpose-bidi-override-markup", "/purpose", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "\u202e<script>" + m, "operations": []any{"read"},
			"selectors": map[string]any{"keys": []any{"learning.*"}}, "expires_at": f.tomorrow})},
		{"grant", "selector-key-traversal", "/selectors/keys/0", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning", "operations": []any{"read"},
			"selectors": map[string]any{"keys": []any{"../" + m}}, "expires_at": f.tomorrow})},
		{"grant", "selector-claim-lower-case", "/selectors/claims/0", jsonBytes(t, map[string]any{
			"recipient": map[string]any{"kind": "consumer", "id": "budget"}, "purpose": "learning", "operations": []any{"read"},
			"selectors": map[string]any{"claims": []any{strings.ToLower(f.claim)}}, "expires_at": f.tomorrow})},
		{"persona", "id-traversal", "/id", []byte(`{"id":"../` + m + `","name":"x"}`)},
		{"persona", "name-empty", "/name", []byte(`{"id":"hostile","name":""}`)},
		{"correction", "empty-object", "", []byte(`{}`)},
		{"correction", "expected-version-zero", "/expected_version", []byte(`{"value":"` + m + `","expected_version":0}`)},
	}
	for _, sc := range schemaCases {
		c := onRoute("schema", sc.name, routeNamed(sc.route), sc.body, "schema_violation")
		c.violationAt = sc.at
		add(c)
	}

	// semantic: well-formed bodies the core must refuse (invalid values a
	// schema cannot see, and replays against decided records).
	for _, sc := range []struct {
		route, name, body, constraint string
		target                        string
	}{
		{"grant", "unknown-consumer", `{"recipient":{"kind":"consumer","id":"` + m + `"},"purpose":"learning","operations":["read"],"selectors":{"keys":["learning.*"]},"expires_at":"` + f.tomorrow + `"}`, "invalid_request", ""},
		{"grant", "expired", `{"recipient":{"kind":"consumer","id":"budget"},"purpose":"learning","operations":["read"],"selectors":{"keys":["learning.*"]},"expires_at":"2001-01-01T00:00:00Z"}`, "invalid_request", ""},
		{"grant", "unknown-persona", `{"recipient":{"kind":"consumer","id":"budget"},"purpose":"learning","operations":["read"],"selectors":{"personas":["` + strings.ToLower(m) + `"]},"expires_at":"` + f.tomorrow + `"}`, "invalid_request", ""},
		{"grant", "leap-second", `{"recipient":{"kind":"consumer","id":"budget"},"purpose":"learning","operations":["read"],"selectors":{"keys":["learning.*"]},"expires_at":"2030-12-31T23:59:60Z"}`, "invalid_request", ""},
		{"proposal", "leap-second", `{"key":"learning.x","value":"` + m + `","kind":"note","assertion":"reported","valid_from":"2016-12-31T23:59:60Z"}`, "invalid_request", ""},
		{"correction", "expected-version-overflow", `{"value":"` + m + `","expected_version":99999999999999999999999}`, "invalid_request", ""},
		{"correction", "expected-version-fractional-zero", `{"value":"` + m + `","expected_version":2.0}`, "invalid_request", ""},
		{"correction", "stale-expected-version", `{"value":"` + m + `","expected_version":1}`, "conflict", "/phc/v1/claims/" + f.corrected},
		{"correction", "deleted-claim", `{"value":"` + m + `"}`, "not_found", "/phc/v1/claims/" + f.deleted},
		{"consumer", "name-traversal", `{"name":"../` + m + `","secret":"0123456789abcdef0123"}`, "invalid_request", ""},
		{"consumer", "name-lookalike", `{"name":"со` + m + `","secret":"0123456789abcdef0123"}`, "invalid_request", ""},
		{"consumer", "name-65-bytes", `{"name":"` + strings.Repeat("n", 65) + `","secret":"0123456789abcdef0123"}`, "invalid_request", ""},
		{"consumer", "secret-short", `{"name":"hostile","secret":"short"}`, "invalid_request", ""},
		{"consumer", "secret-257-bytes", `{"name":"hostile","secret":"` + strings.Repeat("s", 257) + `"}`, "invalid_request", ""},
		{"consumer", "existing-name", `{"name":"coach","secret":"0123456789abcdef-other"}`, "conflict", ""},
		{"persona", "existing-id", `{"id":"learning","name":"` + m + `"}`, "conflict", ""},
		{"confirm", "unknown-persona", `{"personas":["` + strings.ToLower(m) + `"]}`, "invalid_request", ""},
		{"confirm", "persona-traversal", `{"personas":["../work"]}`, "invalid_request", ""},
		{"confirm", "sensitivity-unknown", `{"personas":["learning"],"edits":{"sensitivity":"` + m + `"}}`, "invalid_request", ""},
		{"confirm", "already-confirmed", `{"personas":["learning"]}`, "conflict", "/phc/v1/proposals/" + f.confirmedPrp + "/confirm"},
		{"confirm", "already-rejected", `{"personas":["learning"]}`, "conflict", "/phc/v1/proposals/" + f.rejected + "/confirm"},
		{"reject", "reason-over-1024", `{"reason":"` + strings.Repeat(m, 100) + `"}`, "invalid_request", ""},
		{"reject", "already-confirmed", `{"reason":"` + m + `"}`, "conflict", "/phc/v1/proposals/" + f.confirmedPrp + "/reject"},
		{"reject", "already-rejected", `{}`, "conflict", "/phc/v1/proposals/" + f.rejected + "/reject"},
		{"claim-personas", "unknown-persona", `{"personas":["learning","` + strings.ToLower(m) + `"]}`, "invalid_request", ""},
		{"claim-personas", "deleted-claim", `{"personas":["learning"]}`, "not_found", "/phc/v1/claims/" + f.deleted + "/personas"},
	} {
		c := onRoute("semantic", sc.name, routeNamed(sc.route), []byte(sc.body), sc.constraint)
		if sc.target != "" {
			c.target = sc.target
		}
		add(c)
	}
	add(hostileCase{name: "semantic/grant-revoke/already-revoked", method: "DELETE", target: "/phc/v1/grants/" + f.revoked,
		header: bearer(owner), constraint: "conflict"})
	add(hostileCase{name: "semantic/claim-delete/already-deleted", method: "DELETE", target: "/phc/v1/claims/" + f.deleted,
		header: bearer(owner), constraint: "not_found"})

	// unlock: the vault is unlocked, so any well-formed unlock is a
	// conflict and never a credential check.
	for _, u := range []struct{ name, body string }{
		{"correct", string(unlock)},
		{"wrong-password", `{"password":"` + m + `","secret_key":"` + f.secretKey + `"}`},
		{"malformed-secret-key", `{"password":"` + m + `","secret_key":"PHC1-` + m + `"}`},
		{"empty-object", `{}`},
	} {
		add(hostileCase{name: "unlock-unlocked/" + u.name, method: "POST", target: "/context/unlock", body: []byte(u.body), constraint: "conflict"})
	}

	// method: a route that exists, called with a method it does not have.
	for _, mm := range []struct{ name, method, target string }{
		{"patch-claim", "PATCH", "/phc/v1/claims/" + f.claim},
		{"delete-review", "DELETE", "/phc/v1/review"},
		{"put-grants", "PUT", "/phc/v1/grants"},
		{"post-receipts-verify", "POST", "/phc/v1/receipts/verify"},
		{"get-proposals", "GET", "/phc/v1/proposals"},
		{"get-unlock", "GET", "/context/unlock"},
	} {
		add(hostileCase{name: "method/" + mm.name, method: mm.method, target: mm.target,
			header: bearer(owner), status: 405, constraint: "invalid_request"})
	}

	// documents: bodies that are JSON but not an object. They come last:
	// were one accepted on a state-changing route, the cases above would
	// see its effect.
	for _, r := range routes {
		for _, doc := range []struct{ name, body string }{
			{"null", `null`}, {"array", `[{"key":"` + m + `"}]`}, {"string", `"` + m + `"`},
			{"number", `12345`}, {"boolean", `true`},
		} {
			c := onRoute("documents", doc.name, r, []byte(doc.body), r.typeErr())
			if r.schema {
				c.violationAt = ""
			}
			add(c)
		}
	}
	return cases
}

// MiB is a mebibyte.
const MiB = 1 << 20

// wrongSecretKey returns a Secret Key in the canonical format, with a
// valid checksum, that is not the vault's.
func wrongSecretKey(t *testing.T) string {
	t.Helper()
	var raw [18]byte
	rand.Read(raw[:16])
	sum := sha256.Sum256(raw[:16])
	copy(raw[16:], sum[:2])
	return "PHC1-" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:])
}

// TestHostileInput sends hundreds of malformed or hostile requests to a
// real daemon holding a realistic vault. Each must be refused with a 4xx and
// the constraint docs/design.md §6 names, never a 500, in a JSON error body that
// repeats no hostile value; afterwards the vault's contents are unchanged
// and its receipt chain verifies. Then, with the vault locked, wrong
// credentials are refused and rate limited, and the right ones still
// unlock; after a restart the contents are still the same.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	f := setupHostileVault(t, h)
	before, receiptsBefore := vaultSnapshot(t, h, f.claimIDs)

	cases := hostileCases(t, f)
	families := map[string]int{}
	for _, c := range cases {
		families[strings.SplitN(c.name, "/", 2)[0]]++
	}
	t.Logf("%d hostile cases: %v", len(cases), families)
	if len(cases) < 200 {
		t.Fatalf("only %d cases; want at least 200", len(cases))
	}
	secrets := []string{testPassword, f.secretKey, h.owner, f.coachR, f.tutorW}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := sendRaw(t, h.d.addr, c)
			checkRefusal(t, c, status, hdr, body, secrets...)
		})
	}

	t.Run("contents-unchanged", func(t *testing.T) {
		h := harnessFor(t, h)
		after, receiptsAfter := vaultSnapshot(t, h, f.claimIDs)
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("vault contents changed under hostile input (-before +after):\n%s", diff)
		}
		if receiptsAfter < receiptsBefore {
			t.Errorf("receipt chain shrank from %d to %d", receiptsBefore, receiptsAfter)
		}
		// The daemon still serves the legitimate reader.
		var ctx contextAnswer
		h.must(200, "GET", "/phc/v1/context?purpose=learning", f.coachR, nil, &ctx)
		if len(ctx.Claims) != 2 {
			t.Errorf("coach reads %d claims after the attack; want 2", len(ctx.Claims))
		}
	})

	oldOwner := h.owner
	t.Run("locked", func(t *testing.T) {
		h := harnessFor(t, h)
		h.constraint(403, "session_required", "POST", "/context/lock", f.coachR, nil)
		h.must(200, "POST", "/context/lock", h.owner, nil, nil)
		var st struct{ Locked bool }
		h.must(200, "GET", "/context/status", "", nil, &st)
		if !st.Locked {
			t.Fatalf("status after lock = %+v; want locked", st)
		}
		unlockBody := func(pw, sk string) []byte {
			return jsonBytes(t, map[string]string{"password": pw, "secret_key": sk})
		}
		run := func(c hostileCase) http.Header {
			t.Helper()
			if c.method == "" {
				c.method = "POST"
			}
			status, hdr, body := sendRaw(t, h.d.addr, c)
			checkRefusal(t, c, status, hdr, body, secrets...)
			return hdr
		}
		// While locked, every credential-bearing route says so, and
		// nothing is readable with the old session.
		for _, c := range []hostileCase{
			{name: "old-session", method: "GET", target: "/phc/v1/review", header: bearer(oldOwner)},
			{name: "no-token", method: "GET", target: "/phc/v1/claims"},
			{name: "garbage-token", method: "GET", target: "/phc/v1/grants", header: bearer(hostileMarker)},
			{name: "service-token", method: "GET", target: "/phc/v1/context?purpose=learning", header: bearer(f.coachR)},
			{name: "propose", target: "/phc/v1/proposals", header: bearer(f.tutorW),
				body: jsonBytes(t, map[string]any{"key": "learning.x", "value": hostileMarker, "kind": "note", "assertion": "reported"})},
			{name: "mint", target: "/context/tokens/service", body: jsonBytes(t, routeBase(f, "token"))},
			{name: "lock-again", target: "/context/lock", header: bearer(oldOwner)},
		} {
			c.constraint = "vault_locked"
			run(c)
		}
		// Malformed unlock bodies are refused before any credential check
		// and do not count as attempts.
		for _, body := range [][]byte{
			[]byte(strings.Repeat("[", 10_000)),
			[]byte("{\"password\":\"" + hostileMarker + "\xff\",\"secret_key\":\"x\"}"),
			[]byte(`{"Password":"` + testPassword + `","secret_key":"` + f.secretKey + `"}`),
			[]byte(`{"password":1,"secret_key":"` + f.secretKey + `"}`),
		} {
			run(hostileCase{target: "/context/unlock", body: body, constraint: "invalid_request"})
		}
		run(hostileCase{target: "/context/unlock", body: append(unlockBody(testPassword, f.secretKey), bytes.Repeat([]byte(" "), MiB)...), constraint: "too_large"})
		// Five wrong attempts, each 401: a wrong password, a wrong key of
		// the right format, and malformed keys.
		for _, body := range [][]byte{
			unlockBody(hostileMarker, f.secretKey),
			unlockBody(testPassword, wrongSecretKey(t)),
			unlockBody(testPassword, "PHC1-"+hostileMarker),
			unlockBody(testPassword, f.secretKey[:len(f.secretKey)-1]+string("AB"[strings.IndexByte("A", f.secretKey[len(f.secretKey)-1])+1])),
			unlockBody(testPassword, strings.Repeat("Z", 300)+hostileMarker),
		} {
			run(hostileCase{target: "/context/unlock", body: body, constraint: "unauthenticated"})
		}
		// Secret Keys that are not the vault's count per host, each
		// connection alike: a fifth is refused, a sixth rate limited.
		run(hostileCase{target: "/context/unlock", body: unlockBody(testPassword, wrongSecretKey(t)), constraint: "unauthenticated"})
		hdr := run(hostileCase{target: "/context/unlock", body: unlockBody(testPassword, wrongSecretKey(t)), constraint: "rate_limited"})
		if secs, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
			t.Errorf("Retry-After = %q; want 1 to 60 seconds", hdr.Get("Retry-After"))
		}
		h.must(200, "GET", "/context/status", "", nil, &st)
		if !st.Locked {
			t.Fatalf("status after the attempts = %+v; want locked", st)
		}
		// Nobody's failures refuse the owner: the right credentials
		// unlock at once (TestUnlockNoLockout has the attacks).
		var out struct {
			Token string `json:"token"`
		}
		h.must(200, "POST", "/context/unlock", "", map[string]string{"password": testPassword, "secret_key": f.secretKey}, &out)
		h.must(200, "POST", "/context/lock", out.Token, nil, nil)
	})

	// A restart unlocks with the right credentials (the limiter is in
	// memory); the old session is void and the contents are what they were.
	dir := h.dir
	h.stop()
	h = startHarness(t, dir)
	t.Run("after-restart", func(t *testing.T) {
		h := harnessFor(t, h)
		h.constraint(401, "unauthenticated", "GET", "/phc/v1/review", oldOwner, nil)
		after, _ := vaultSnapshot(t, h, f.claimIDs)
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("vault contents changed across the locked attack and restart (-before +after):\n%s", diff)
		}
	})
}

// harnessFor returns a view of h whose helpers report to t, for use inside
// a subtest (a subtest must not fail its parent from its own goroutine).
// Never stop the view: the daemon belongs to h.
func harnessFor(t *testing.T, h *harness) *harness {
	v := *h
	v.t = t
	return &v
}

func routeBase(f *hostileFixture, name string) map[string]any {
	for _, r := range hostileBodyRoutes(f) {
		if r.name == name {
			return r.base()
		}
	}
	panic("no route " + name)
}
