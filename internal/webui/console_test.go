package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/daemon"
	"github.com/phc-project/phc/internal/vault"
)

const testPassword = "correct horse battery staple"

// console is a real daemon (vault, encrypted store, loopback socket) whose
// console the tests drive, and an API client for setting the scene.
type console struct {
	t    testing.TB
	dir  string
	sk   string
	base string
	core *daemon.Core
	http *http.Client
}

// startConsole creates a vault in a temporary data dir, opens it as the
// daemon does, unlocks it and serves the daemon's handler on a loopback
// port.
func startConsole(t testing.TB) *console {
	t.Helper()
	return startConsoleAt(t, nil)
}

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// startConsoleAt is startConsole with the daemon on clock (nil: the
// system's).
func startConsoleAt(t testing.TB, clock custodian.Clock) *console {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "phc")
	sk, err := vault.Create(dir, []byte(testPassword))
	if err != nil {
		t.Fatalf("vault.Create: %v", err)
	}
	core, err := daemon.Open(daemon.Options{Dir: dir, IdleLock: -1, Clock: clock})
	if err != nil {
		t.Fatalf("daemon.Open: %v", err)
	}
	if _, err := core.Svc.Unlock(context.Background(), []byte(testPassword), sk); err != nil {
		core.Close()
		t.Fatalf("Unlock: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		core.Close()
		t.Fatal(err)
	}
	c := &console{t: t, dir: dir, sk: sk, base: "http://" + ln.Addr().String(), core: core, http: &http.Client{}}
	srv := &http.Server{Handler: core.Handler(c.base)}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		if err := core.Close(); err != nil {
			t.Errorf("daemon close: %v", err)
		}
	})
	c.must(200, "PUT", "/phc/v1/settings", c.owner(), map[string]int{"reads_per_minute": 1_000_000, "writes_per_minute": 1_000_000,
		"live_tokens_per_app": 1_000_000, "pending_proposals_per_app": 1_000_000}, nil)
	return c
}

// with is c for subtest t.
func (c *console) with(t testing.TB) *console {
	cc := *c
	cc.t = t
	return &cc
}

// owner is the owner's current session token, as the daemon wrote it for
// the CLI.
func (c *console) owner() string {
	c.t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.dir, daemon.SessionFile))
	if err != nil {
		c.t.Fatalf("session file: %v", err)
	}
	return strings.TrimSpace(string(raw))
}

// do sends an API request; body is sent as is when it is a []byte, else
// encoded as JSON unless nil.
func (c *console) do(method, path, token string, body any, header http.Header) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if raw, ok := body.([]byte); ok {
		rd = bytes.NewReader(raw)
	} else if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must sends an API request that must answer want and decodes into out
// (or, when out is a *[]byte, copies the body there).
func (c *console) must(want int, method, path, token string, body, out any) {
	c.t.Helper()
	status, raw := c.do(method, path, token, body, nil)
	if status != want {
		c.t.Fatalf("%s %s = %d %s; want %d", method, path, status, raw, want)
	}
	if b, ok := out.(*[]byte); ok {
		*b = raw
		return
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// app registers a consumer and returns a service token for it.
func (c *console) app(name, scope, mode string) string {
	c.t.Helper()
	secret := "secret-of-" + name + "-0123456789"
	c.must(201, "POST", "/phc/v1/consumers", c.owner(), map[string]string{"name": name, "secret": secret}, nil)
	var tok struct {
		Token string `json:"token"`
	}
	c.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": name, "secret": secret, "scope": scope, "ttl": 3600, "mode": mode}, &tok)
	return tok.Token
}

// grant gives consumer op for purpose over selectors, for a day.
func (c *console) grant(consumer, purpose, op string, selectors map[string]any) string {
	c.t.Helper()
	var g struct {
		ID string `json:"id"`
	}
	c.must(201, "POST", "/phc/v1/grants", c.owner(), map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": consumer}, "purpose": purpose,
		"operations": []string{op}, "selectors": selectors,
		"expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, &g)
	return g.ID
}

// sessionPath is the path of a signed-in console session's pages.
var sessionPath = regexp.MustCompile(`^/ui/s/[A-Za-z0-9_-]{43}$`)

// signedIn returns an HTTP client holding a console session, signed in
// through a one-time link minted with the owner's session, as phc ui does,
// and the address of the session's pages (the console's base, then
// /ui/s/ and the session's secret path name).
func (c *console) signedIn() (*http.Client, string) {
	c.t.Helper()
	jar, _ := cookiejar.New(nil)
	cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var link struct {
		Path string `json:"path"`
	}
	c.must(201, "POST", "/ui/link", c.owner(), nil, &link)
	resp, err := cl.Get(c.base + link.Path)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	to := resp.Header.Get("Location")
	base, ok := strings.CutSuffix(to, "/review")
	if resp.StatusCode != http.StatusSeeOther || !ok || !sessionPath.MatchString(base) {
		c.t.Fatalf("GET the sign-in link = %d to %q; want 303 to /ui/s/…/review", resp.StatusCode, to)
	}
	return cl, c.base + base
}

// csrfOf reads the CSRF token from a console page.
func csrfOf(t testing.TB, page string) string {
	t.Helper()
	const mark = `name="csrf" value="`
	i := strings.Index(page, mark)
	if i < 0 {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	rest := page[i+len(mark):]
	return rest[:strings.IndexByte(rest, '"')]
}

// get fetches a console page with cl.
func get(t testing.TB, cl *http.Client, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := cl.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

// post sends a form with cl and extra headers.
func post(t testing.TB, cl *http.Client, u string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
