package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/clientvault"
)

// cvFixture is a daemon holding a critical passport number, an app with an
// approved per-request grant for it, and helpers for the Client-Vault side.
type cvFixture struct {
	t     *testing.T
	h     *harness
	clock *offsetClock
	keys  string // where the test's vault keys live (never the data dir)
}

const passport = "X1234589"

func newCVFixture(t *testing.T) *cvFixture {
	t.Helper()
	return newCVFixtureAt(t, 0)
}

// newCVFixtureAtNoon is newCVFixture on a daemon whose day starts at its
// noon UTC, for a test that counts toward the day's caps: they never reset
// under it, whenever it runs. Its clock is then hours from the real one,
// so the test must give the hook its own (a hook run as a program, which
// reads the real clock, is refused as clock_skew).
func newCVFixtureAtNoon(t *testing.T) *cvFixture {
	t.Helper()
	now := time.Now().UTC()
	return newCVFixtureAt(t, now.Truncate(24*time.Hour).Add(12*time.Hour).Sub(now))
}

func newCVFixtureAt(t *testing.T, offset time.Duration) *cvFixture {
	t.Helper()
	clock := &offsetClock{}
	clock.offset.Store(int64(offset))
	h := startHarnessClock(t, "", testPassword, clock)
	f := &cvFixture{t: t, h: h, clock: clock, keys: t.TempDir()}
	h.must(200, "PUT", "/context/fields/identity.passport_number", h.owner, map[string]any{"value": passport}, nil)
	return f
}

// passportReader turns local vaults on and returns the token of an app
// "app" the owner approved for the passport (purpose travel) and what its
// read of the passport gave it: a reference, as critical data is served.
func (f *cvFixture) passportReader() (app, ref string) {
	f.t.Helper()
	f.h.must(200, "PUT", "/phc/v1/settings", f.h.owner, map[string]any{"local_vaults": true}, nil)
	app = f.approvedToken("app", "identity.passport_number", "travel")
	return app, f.readPassport(app)
}

// approvedToken registers consumer name and returns a token from the
// owner's approval (with the password: the field is critical) of its
// request for scope under purpose.
func (f *cvFixture) approvedToken(name, scope, purpose string) string {
	f.t.Helper()
	h := f.h
	app := h.consumer(name, "*", "read")
	var req requestAnswer
	h.must(202, "POST", "/context/requests", app, map[string]any{"scope": scope, "purpose": purpose, "usage": "multi", "duration": "1h"}, &req)
	h.must(200, "POST", "/context/requests/"+req.ID+"/approve", h.owner, map[string]string{"password": testPassword}, nil)
	var got requestAnswer
	h.must(200, "GET", "/context/requests/"+req.ID, app, nil, &got)
	if got.Token == "" {
		f.t.Fatalf("approved request %s gave no token: %+v", req.ID, got)
	}
	return got.Token
}

// key makes a vault key K of profile for this daemon.
func (f *cvFixture) key(profile string) []byte {
	f.t.Helper()
	k, created, err := clientvault.LoadKey(f.keys, f.h.base, profile)
	if err != nil || !created {
		f.t.Fatalf("LoadKey(%s) = %v, created %v", profile, err, created)
	}
	return k
}

// boundKey makes reader name's K and binds it to the app of token tok,
// active: a reader that resolves.
func (f *cvFixture) boundKey(name, tok string) []byte {
	f.t.Helper()
	k := f.key(name)
	f.bind(tok, k)
	return k
}

// bind shows K with the app's token tok (binding it, pending) and
// activates the binding, as the owner does.
func (f *cvFixture) bind(tok string, k []byte) {
	f.t.Helper()
	f.showKey(tok, k)
	f.h.phcOK("vault-keys", "activate", clientvault.Kid(k))
}

// showKey sends one MCP request with token and K's Client-Vault header, as
// a reader's MCP client does: it binds the kid (pending) to the reader.
func (f *cvFixture) showKey(token string, k []byte) {
	f.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest("POST", f.h.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(clientvault.HeaderName, clientvault.Header(k))
	resp, err := f.h.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		f.t.Fatalf("MCP initialize with the Client-Vault header = %d", resp.StatusCode)
	}
}

// resolve posts body to the resolve endpoint with K (nil: none) and
// returns the status, the Retry-After header and the decoded body.
func (f *cvFixture) resolve(k []byte, body any) (int, string, map[string]any) {
	f.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	req, _ := http.NewRequest("POST", f.h.base+"/phc/v1/vault/resolve", bytes.NewReader(raw))
	if k != nil {
		req.Header.Set("Authorization", "Bearer "+clientvault.Bearer(k))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.h.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		f.t.Fatalf("resolve answer is not JSON: %v", err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// refs is a resolve body for keys, all seen at seen, the client's clock at
// the daemon's now.
func (f *cvFixture) refs(seen time.Time, keys ...string) map[string]any {
	rs := []map[string]string{}
	for _, k := range keys {
		rs = append(rs, map[string]string{"key": k, "seen_at": seen.UTC().Format(time.RFC3339)})
	}
	return map[string]any{"now": f.clock.Now().Format(time.RFC3339), "refs": rs}
}

// advance moves the daemon's clock on by d.
func (f *cvFixture) advance(d time.Duration) { f.clock.offset.Add(int64(d)) }

// readPassport reads the passport field as token, and returns its value.
func (f *cvFixture) readPassport(token string) string {
	f.t.Helper()
	var fld struct {
		Value any `json:"value"`
	}
	f.h.must(200, "GET", "/context/fields/identity.passport_number", token, nil, &fld)
	s, _ := fld.Value.(string)
	return s
}

// TestClientVaultResolve produces every code of the Client-Vault v=1 table
// over real HTTP, in the order a vault meets them, and checks what may
// resolve: only the reader's own reference, on this custodian, while its
// grant allows the value and the key has not been minted again since the
// vault saw it, within 100 values a day. K never appears in a receipt, an
// answer or any file of the data dir.
func TestClientVaultResolve(t *testing.T) {
	t.Parallel()
	f := newCVFixtureAtNoon(t)
	h := f.h
	app := f.approvedToken("app", "identity.passport_number", "travel")

	// Critical data is served as a reference by default, on every face.
	ref := f.readPassport(app)
	if ref != "⟦PASSPORT_1:X1•••89⟧" {
		t.Fatalf("critical field read = %q; want the reference ⟦PASSPORT_1:X1•••89⟧", ref)
	}
	var ctx struct {
		Claims []struct {
			Value any `json:"value"`
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/context?purpose=travel", app, nil, &ctx)
	if len(ctx.Claims) != 1 || ctx.Claims[0].Value != ref {
		t.Fatalf("context = %+v; want the same reference %s", ctx, ref)
	}
	// A search by a part of the value finds nothing: the reference's text
	// is not searchable.
	var found struct {
		Fields []any `json:"fields"`
	}
	h.must(200, "GET", "/context/search?q=X1234589&purpose=travel", app, nil, &found)
	if len(found.Fields) != 0 {
		t.Fatalf("search by the value found %v", found.Fields)
	}
	firstSeen := f.clock.Now()

	k1 := f.key("app")
	var other []byte // another reader's key, bound further on
	cases := []struct {
		name       string
		before     func()
		k          func() []byte
		body       func() any
		wantStatus int
		wantCode   string
		check      func(t *testing.T, retry string, body map[string]any)
	}{
		{name: "disabled while local_vaults is off", k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 503, wantCode: "disabled"},
		{name: "unknown_key for a K never bound",
			before: func() { h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil) },
			k:      func() []byte { return f.key("stranger") }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 401, wantCode: "unknown_key"},
		{name: "unknown_key without K", k: func() []byte { return nil }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 401, wantCode: "unknown_key"},
		{name: "pending until the owner activates the kid",
			before: func() { f.showKey(app, k1) },
			k:      func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 403, wantCode: "pending",
			check: func(t *testing.T, _ string, body map[string]any) {
				if v, ok := body["activates_at"]; !ok || v != nil {
					t.Errorf("pending body %v; want activates_at null (the owner activates)", body)
				}
			}},
		{name: "bad_request for a body that is not JSON",
			before: func() {
				out := h.phcOK("vault-keys")
				if !strings.Contains(out, clientvault.Kid(k1)) || !strings.Contains(out, "pending") || !strings.Contains(out, "reader app") {
					t.Fatalf("phc vault-keys = %q", out)
				}
				h.phcOK("vault-keys", "activate", clientvault.Kid(k1))
			},
			k: func() []byte { return k1 }, body: func() any { return []byte("now=1") }, wantStatus: 400, wantCode: "bad_request"},
		{name: "bad_request for a key in the client range", k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "passport_1") },
			wantStatus: 400, wantCode: "bad_request"},
		{name: "bad_request without refs", k: func() []byte { return k1 }, body: func() any { return map[string]any{"now": f.clock.Now()} },
			wantStatus: 400, wantCode: "bad_request"},
		{name: "too_many_refs above 100 keys", k: func() []byte { return k1 },
			body: func() any {
				keys := make([]string, 101)
				for i := range keys {
					keys[i] = "PASSPORT_" + strconv.Itoa(i+1)
				}
				return f.refs(firstSeen, keys...)
			},
			wantStatus: 413, wantCode: "too_many_refs"},
		{name: "too_large above 64 KB", k: func() []byte { return k1 },
			body: func() any {
				b := f.refs(firstSeen, "PASSPORT_1")
				b["padding"] = strings.Repeat("x", 65<<10)
				return b
			},
			wantStatus: 413, wantCode: "too_large"},
		{name: "clock_skew more than 5 minutes off", k: func() []byte { return k1 },
			body: func() any {
				b := f.refs(firstSeen, "PASSPORT_1")
				b["now"] = f.clock.Now().Add(-6 * time.Minute).Format(time.RFC3339)
				return b
			},
			wantStatus: 403, wantCode: "clock_skew",
			check: func(t *testing.T, _ string, body map[string]any) {
				if _, err := time.Parse(time.RFC3339, fmt.Sprint(body["server_time"])); err != nil {
					t.Errorf("clock_skew body %v; want server_time", body)
				}
			}},
		{name: "unknown_ref for a key never minted, named", k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "PASSPORT_1", "PASSPORT_2") },
			wantStatus: 404, wantCode: "unknown_ref",
			check: func(t *testing.T, _ string, body map[string]any) {
				if body["key"] != "PASSPORT_2" || body["values"] != nil {
					t.Errorf("unknown_ref body %v; want key PASSPORT_2 and no values", body)
				}
			}},
		{name: "the value for the reader's own key", k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 200,
			check: func(t *testing.T, _ string, body map[string]any) {
				if v, _ := body["values"].(map[string]any); len(v) != 1 || v["PASSPORT_1"] != passport {
					t.Errorf("200 body %v", body)
				}
			}},
		{name: "a refs:[] status check", k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen) },
			wantStatus: 200,
			check: func(t *testing.T, _ string, body map[string]any) {
				if v, ok := body["values"].(map[string]any); !ok || len(v) != 0 {
					t.Errorf("status check = %v; want values {}", body)
				}
			}},
		{name: "another reader's key resolves nothing of this reader",
			before: func() {
				tok := f.approvedToken("other", "identity.dob", "forms")
				other = f.boundKey("other", tok)
			},
			k: func() []byte { return other }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 404, wantCode: "unknown_ref"},
		{name: "expired: minted again since the vault saw it",
			before: func() {
				f.advance(10 * time.Second)
				h.must(200, "PUT", "/context/fields/identity.passport_number", h.owner, map[string]any{"value": "Y9876543"}, nil)
				f.advance(10 * time.Second)
				if got := f.readPassport(app); got != "⟦PASSPORT_1:Y9•••43⟧" {
					t.Fatalf("read after the correction = %q; want the key minted again", got)
				}
			},
			k: func() []byte { return k1 }, body: func() any { return f.refs(firstSeen, "PASSPORT_1") },
			wantStatus: 410, wantCode: "expired",
			check: func(t *testing.T, _ string, body map[string]any) {
				if body["key"] != "PASSPORT_1" {
					t.Errorf("expired body %v; want key PASSPORT_1", body)
				}
			}},
		{name: "the new value for a sighting after the re-mint", k: func() []byte { return k1 }, body: func() any { return f.refs(f.clock.Now(), "PASSPORT_1") },
			wantStatus: 200,
			check: func(t *testing.T, _ string, body map[string]any) {
				if v, _ := body["values"].(map[string]any); v["PASSPORT_1"] != "Y9876543" {
					t.Errorf("200 body %v", body)
				}
			}},
		{name: "rate_limited: the 101st value of the day",
			before: func() {
				// Two values so far today; 98 more reach the cap (a
				// second apart: a key's resolves share the reads rate).
				for i := 0; i < 98; i++ {
					f.advance(time.Second)
					if st, _, b := f.resolve(k1, f.refs(f.clock.Now(), "PASSPORT_1")); st != 200 {
						t.Fatalf("resolve %d = %d %v", i+3, st, b)
					}
				}
			},
			k: func() []byte { return k1 }, body: func() any { return f.refs(f.clock.Now(), "PASSPORT_1") },
			wantStatus: 429, wantCode: "rate_limited",
			check: func(t *testing.T, retry string, _ map[string]any) {
				n, err := strconv.Atoi(retry)
				now := f.clock.Now()
				midnight := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
				if err != nil || n < 1 || n > int(midnight.Sub(now)/time.Second)+1 {
					t.Errorf("Retry-After = %q; want the seconds to midnight UTC", retry)
				}
			}},
		{name: "unknown_ref once the grant is revoked",
			before: func() {
				var gs struct {
					Grants []struct {
						ID        string `json:"id"`
						Recipient struct {
							ID string `json:"id"`
						} `json:"recipient"`
					} `json:"grants"`
				}
				h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &gs)
				for _, g := range gs.Grants {
					if g.Recipient.ID == "app" {
						h.phcOK("revoke", g.ID)
					}
				}
			},
			k: func() []byte { return k1 }, body: func() any { return f.refs(f.clock.Now(), "PASSPORT_1") },
			wantStatus: 404, wantCode: "unknown_ref"},
		{name: "a second reader showing the kid binds nothing and blocks nothing",
			before: func() {
				tok := h.consumer("thief", "*", "read")
				f.showKey(tok, other)
				if out := h.phcOK("vault-keys"); strings.Contains(out, "blocked") || strings.Contains(out, "thief") {
					t.Fatalf("phc vault-keys after a second reader = %q; want the binding as it was", out)
				}
			},
			k: func() []byte { return other }, body: func() any { return f.refs(f.clock.Now()) },
			wantStatus: 200},
		{name: "unknown_key once the owner revokes the binding",
			before: func() { h.phcOK("vault-keys", "revoke", clientvault.Kid(k1)) },
			k:      func() []byte { return k1 }, body: func() any { return f.refs(f.clock.Now()) },
			wantStatus: 401, wantCode: "unknown_key"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if c.before != nil {
			c.before()
		}
		status, retry, body := f.resolve(c.k(), c.body())
		code, _ := body["error"].(string)
		if status != c.wantStatus || (c.wantCode != "" && code != c.wantCode) {
			t.Fatalf("%s: resolve = %d %v; want %d %s", c.name, status, body, c.wantStatus, c.wantCode)
		}
		if c.wantCode != "" && body["constraint"] != c.wantCode {
			t.Errorf("%s: constraint %v; want %s", c.name, body["constraint"], c.wantCode)
		}
		if c.check != nil {
			c.check(t, retry, body)
		}
		seen[c.wantCode] = true
	}
	for _, code := range []string{"bad_request", "unknown_key", "pending", "clock_skew", "unknown_ref", "expired", "too_large", "too_many_refs", "rate_limited", "disabled"} {
		if !seen[code] {
			t.Errorf("no case produced %s", code)
		}
	}

	// Another custodian: the reference and K mean nothing there.
	h2 := startHarness(t, "")
	h2.must(200, "PUT", "/phc/v1/settings", h2.owner, map[string]any{"local_vaults": true}, nil)
	f2 := &cvFixture{t: t, h: h2, clock: &offsetClock{}, keys: t.TempDir()}
	if st, _, b := f2.resolve(k1, f2.refs(time.Now(), "PASSPORT_1")); st != 401 || b["error"] != "unknown_key" {
		t.Fatalf("K of custodian A at custodian B = %d %v", st, b)
	}
	tok2 := h2.consumer("app", "*", "read")
	k2 := f2.key("app")
	f2.showKey(tok2, k2)
	h2.phcOK("vault-keys", "activate", clientvault.Kid(k2))
	if st, _, b := f2.resolve(k2, f2.refs(time.Now(), "PASSPORT_1")); st != 404 || b["error"] != "unknown_ref" {
		t.Fatalf("custodian A's reference at custodian B = %d %v", st, b)
	}

	// Every resolve left a receipt with the kid and the keys, never a
	// value, and K is nowhere: not in a receipt, not in a file of the data
	// dir.
	var rs struct {
		Receipts []struct {
			Operation string   `json:"operation"`
			Decision  string   `json:"decision"`
			Records   []string `json:"records"`
		} `json:"receipts"`
	}
	raw := h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &rs)
	resolves := 0
	for _, r := range rs.Receipts {
		if r.Operation == "vault.resolve" {
			resolves++
			if len(r.Records) == 0 || r.Records[0] != "kid:"+clientvault.Kid(k1) && r.Records[0] != "kid:"+clientvault.Kid(other) {
				t.Errorf("resolve receipt %+v does not name the kid first", r)
			}
		}
	}
	if resolves < 20 {
		t.Errorf("%d resolve receipts; want one per resolve with a known K", resolves)
	}
	for _, secret := range []string{passport, "Y9876543", clientvault.Bearer(k1), clientvault.Bearer(other)} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the receipts hold %q", secret)
		}
	}
	assertNoKey(t, h.dir, k1, other)
}

// TestClientVaultResolveRate: a bound key's resolves share the reads rate
// of tokens (60 a minute by default). Past it the answer is 429
// rate_limited with the wait, and no receipt: every answer to a known K
// otherwise leaves one, refusals too (the first of a minute per key and
// constraint, the rest of the minute counted in one), so an unbounded K
// would grow the store at will. Another key keeps its own rate; the
// owner's setting changes it.
func TestClientVaultResolveRate(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil)
	bind := func(name string) []byte {
		tok := h.consumer(name, "*", "read")
		k := f.boundKey(name, tok)
		return k
	}
	k1, k2 := bind("app"), bind("other")
	var counted []string // the records of the newest count receipt
	receipts := func() int {
		var rs struct {
			Receipts []struct {
				Operation string   `json:"operation"`
				Records   []string `json:"records"`
			} `json:"receipts"`
		}
		h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &rs)
		n := 0
		counted = nil
		for _, r := range rs.Receipts {
			if r.Operation == "vault.resolve" {
				n++
				if counted == nil && slices.ContainsFunc(r.Records, func(s string) bool { return strings.HasPrefix(s, "count:") }) {
					counted = r.Records
				}
			}
		}
		return n
	}
	// A rate of 5 a minute (a token every 12 s): the test's own pace
	// cannot refill the bucket. Refusals count as much as answers:
	// unknown_ref (never minted), the first with its receipt, the other
	// four counted until the minute has passed.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"reads_per_minute": 5}, nil)
	for i := range 5 {
		if st, _, b := f.resolve(k1, f.refs(f.clock.Now(), "PASSPORT_9")); st != 404 {
			t.Fatalf("resolve %d = %d %v; want 404 unknown_ref", i+1, st, b)
		}
	}
	before := receipts()
	if before != 1 {
		t.Fatalf("%d resolve receipts after 5 refused resolves in a minute; want 1", before)
	}
	st, retry, b := f.resolve(k1, f.refs(f.clock.Now(), "PASSPORT_9"))
	if st != 429 || b["error"] != "rate_limited" || b["constraint"] != "rate_limited" {
		t.Fatalf("the 6th resolve in a minute at 5 a minute = %d %v; want 429 rate_limited", st, b)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > 12 {
		t.Errorf("Retry-After = %q; want up to 12 seconds", retry)
	}
	if msg, _ := b["message"].(string); !strings.Contains(msg, "retry") {
		t.Errorf("rate_limited message %q does not say what to do", msg)
	}
	if got := receipts(); got != before {
		t.Errorf("%d resolve receipts after a rate-limited resolve; want %d (none for it)", got, before)
	}
	if st, _, b := f.resolve(k2, f.refs(f.clock.Now())); st != 200 {
		t.Errorf("another key's resolve = %d %v; want 200 (its own rate)", st, b)
	}
	f.advance(12 * time.Second)
	if st, _, b := f.resolve(k1, f.refs(f.clock.Now())); st != 200 {
		t.Errorf("resolve 12 s later = %d %v; want 200", st, b)
	}
	// A minute on, the next refusal writes the count of the first
	// minute's, and has a receipt of its own.
	f.advance(time.Minute)
	if st, _, b := f.resolve(k1, f.refs(f.clock.Now(), "PASSPORT_9")); st != 404 {
		t.Fatalf("a refused resolve a minute later = %d %v; want 404 unknown_ref", st, b)
	}
	n := receipts()
	if want := before + 2 + 2; n != want || len(counted) != 4 || counted[0] != "kid:"+clientvault.Kid(k1) ||
		counted[1] != "refused:unknown_ref" || counted[2] != "count:4" || !strings.HasPrefix(counted[3], "window:") {
		t.Errorf("%d resolve receipts, the count's records %v; want %d, [kid:K refused:unknown_ref count:4 window:…]", n, counted, want)
	}
}

// assertNoKey fails if a file under dir holds one of the keys, raw or in
// any encoding the protocol uses.
func assertNoKey(t *testing.T, dir string, keys ...[]byte) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, k := range keys {
			for _, form := range [][]byte{k, []byte(clientvault.Bearer(k)), []byte(base64.StdEncoding.EncodeToString(k))} {
				if bytes.Contains(data, form) {
					t.Errorf("%s holds a vault key K", path)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVaultKeysPerReader: a reader binds at most five kids; a sixth is not
// bound, and revoking one makes room.
func TestVaultKeysPerReader(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil)
	tok := h.consumer("app", "*", "read")
	var ks [][]byte
	for i := 0; i < 6; i++ {
		k := make([]byte, 32)
		rand.Read(k)
		ks = append(ks, k)
		f.showKey(tok, k)
	}
	count := func() int {
		var out struct {
			Keys []struct{ Kid string } `json:"vault_keys"`
		}
		h.must(200, "GET", "/phc/v1/vault-keys", h.owner, nil, &out)
		return len(out.Keys)
	}
	if n := count(); n != 5 {
		t.Fatalf("%d bindings after six kids; want 5", n)
	}
	h.phcOK("vault-keys", "revoke", clientvault.Kid(ks[0]))
	f.showKey(tok, ks[5])
	if n := count(); n != 6 { // five live and the revoked one
		t.Fatalf("%d bindings after a revocation and the sixth kid again; want 6", n)
	}
	// A revoked kid never binds again.
	f.showKey(tok, ks[0])
	out := h.phcOK("vault-keys")
	if strings.Count(out, "revoked") != 1 || strings.Count(out, "pending") != 5 {
		t.Fatalf("phc vault-keys = %q", out)
	}
	// Hidden when local vaults are off: no binding is made.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": false}, nil)
	k := make([]byte, 32)
	rand.Read(k)
	f.showKey(h.consumer("late", "*", "read"), k)
	if n := count(); n != 6 {
		t.Fatalf("%d bindings; a kid shown while local vaults are off bound", n)
	}
}

// TestDisclosureModes: who decides between value and reference. The
// owner's per-tier setting (reference for critical by default), a grant's
// own disclosure over it, and a read or a request that may ask for a
// reference where a value would go — never the other way round.
func TestDisclosureModes(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	h.must(200, "PUT", "/context/fields/preferences.tea", h.owner, map[string]any{"value": "earl grey"}, nil)
	app := h.consumer("app", "*", "read")
	h.phcOK("grant", "--to", "app", "--purpose", "assist", "--keys", "preferences.*", "--disclosure", "reference")
	h.phcOK("grant", "--to", "app", "--purpose", "plain", "--keys", "preferences.*")
	read := func(path string) any {
		t.Helper()
		var out struct {
			Claims []struct {
				Value any `json:"value"`
			} `json:"claims"`
		}
		h.must(200, "GET", path, app, nil, &out)
		if len(out.Claims) != 1 {
			t.Fatalf("GET %s = %+v; want one claim", path, out)
		}
		return out.Claims[0].Value
	}
	if v := read("/phc/v1/context?purpose=assist"); v != "⟦TEA_1:ea•••ey⟧" {
		t.Errorf("under a grant with disclosure reference = %v", v)
	}
	if v := read("/phc/v1/context?purpose=plain"); v != "earl grey" {
		t.Errorf("under a grant without disclosure (standard data) = %v; want the value", v)
	}
	if v := read("/phc/v1/context?purpose=plain&disclosure=reference"); v != "⟦TEA_1:ea•••ey⟧" {
		t.Errorf("a read asking for a reference = %v; want the same reference as before", v)
	}
	if v := read("/phc/v1/context?purpose=assist&disclosure=value"); v != "⟦TEA_1:ea•••ey⟧" {
		t.Errorf("a read asking for the value under a reference grant = %v; the grant decides", v)
	}

	// The owner's setting per tier: critical as values, then sensitive
	// as references.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"disclosure": map[string]string{"critical": "value"}}, nil)
	tok := f.approvedToken("forms", "identity.passport_number", "travel")
	if v := f.readPassport(tok); v != passport {
		t.Errorf("critical under disclosure critical=value = %q; want the value", v)
	}
	var fld struct {
		Value any `json:"value"`
	}
	h.must(200, "GET", "/context/fields/identity.passport_number?disclosure=reference", tok, nil, &fld)
	if fld.Value != "⟦PASSPORT_1:X1•••89⟧" {
		t.Errorf("critical read asking for a reference = %v", fld.Value)
	}
	h.must(200, "PUT", "/context/fields/identity.dob", h.owner, map[string]any{"value": "1815-12-10"}, nil)
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"disclosure": map[string]string{"sensitive": "reference"}}, nil)
	dob := f.approvedToken("doctor", "identity.dob", "care")
	h.must(200, "GET", "/context/fields/identity.dob", dob, nil, &fld)
	if fld.Value != "⟦BIRTH_DATE_1:18•••10⟧" {
		t.Errorf("sensitive under disclosure sensitive=reference = %v", fld.Value)
	}
	// An approval may decide for the grant it makes.
	app2 := h.consumer("app2", "*", "read")
	var req requestAnswer
	h.must(202, "POST", "/context/requests", app2, map[string]any{"scope": "identity.dob", "purpose": "care", "duration": "1h"}, &req)
	h.phcOK("approve", req.ID, "--disclosure", "value")
	h.must(200, "GET", "/context/requests/"+req.ID, app2, nil, &req)
	h.must(200, "GET", "/context/fields/identity.dob", req.Token, nil, &fld)
	if fld.Value != "1815-12-10" {
		t.Errorf("under an approval with disclosure value = %v", fld.Value)
	}

	// Malformed modes are refused everywhere.
	h.constraint(400, "invalid_request", "PUT", "/phc/v1/settings", h.owner, map[string]any{"disclosure": map[string]string{"critical": "maybe"}})
	h.constraint(400, "invalid_request", "PUT", "/phc/v1/settings", h.owner, map[string]any{"disclosure": map[string]string{"secret": "value"}})
	h.constraint(400, "invalid_request", "GET", "/phc/v1/context?purpose=plain&disclosure=maybe", app, nil)
	h.constraint(400, "invalid_request", "POST", "/context/requests", app, map[string]any{"scope": "identity.dob", "purpose": "care", "disclosure": "value"})
	h.constraint(400, "schema_violation", "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "app"}, "purpose": "x", "operations": []string{"read"},
		"selectors": map[string]any{"keys": []string{"preferences.*"}}, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"disclosure": "maybe"})
}

// TestNamesakeInheritsNoVault: once an app is removed, an app registered
// later under its name inherits neither its vault key binding nor its
// references: the old K is unknown_key, the old reference unknown_ref, and
// the same vault showing its kid again binds pending, for the owner to
// decide anew.
func TestNamesakeInheritsNoVault(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	app, ref := f.passportReader()
	k := f.boundKey("app", app)
	if st, _, b := f.resolve(k, f.refs(f.clock.Now(), "PASSPORT_1")); st != 200 {
		t.Fatalf("resolve before the removal = %d %v", st, b)
	}
	h.must(200, "DELETE", "/context/consumers/app", h.owner, nil, nil)
	// The removed app's references resolve to nothing, before any namesake
	// (found in review: they still answered 200).
	if st, _, b := f.resolve(k, f.refs(f.clock.Now(), "PASSPORT_1")); st != 404 || b["error"] != "unknown_ref" {
		t.Fatalf("the removed app's reference = %d %v; want unknown_ref", st, b)
	}
	f.advance(time.Second)
	again := f.approvedToken("app", "identity.passport_number", "travel")
	if st, _, b := f.resolve(k, f.refs(f.clock.Now(), "PASSPORT_1")); st != 401 || b["error"] != "unknown_key" {
		t.Fatalf("the removed app's K for its namesake = %d %v; want unknown_key", st, b)
	}
	f.showKey(again, k)
	if out := h.phcOK("vault-keys"); !strings.Contains(out, "pending") || strings.Contains(out, "active") {
		t.Fatalf("phc vault-keys after the namesake showed the kid = %q; want it pending again", out)
	}
	h.phcOK("vault-keys", "activate", clientvault.Kid(k))
	f.advance(time.Second)
	if st, _, b := f.resolve(k, f.refs(f.clock.Now(), "PASSPORT_1")); st != 404 || b["error"] != "unknown_ref" {
		t.Fatalf("the removed app's reference for its namesake = %d %v; want unknown_ref", st, b)
	}
	// The namesake's own read mints the key anew: a vault that saw the old
	// one gets expired, a fresh sighting the value.
	seenBefore := f.clock.Now()
	f.advance(time.Second)
	if got := f.readPassport(again); got != ref {
		t.Fatalf("namesake read = %q; want %q", got, ref)
	}
	if st, _, b := f.resolve(k, f.refs(seenBefore, "PASSPORT_1")); st != 410 {
		t.Fatalf("resolve with a sighting before the namesake's mint = %d %v; want 410", st, b)
	}
	if st, _, b := f.resolve(k, f.refs(f.clock.Now(), "PASSPORT_1")); st != 200 {
		t.Fatalf("resolve for the namesake's own reference = %d %v", st, b)
	}
}
