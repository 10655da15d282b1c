package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

const testPassword = "correct horse battery staple"

// testEnv is an Env with PHC_PASSWORD set and no terminal.
func testEnv(t testing.TB, vars map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	if vars == nil {
		vars = map[string]string{"PHC_PASSWORD": testPassword}
	}
	return &Env{
		Stdin:      strings.NewReader(""),
		Stdout:     &out,
		Stderr:     &errb,
		Getenv:     func(k string) string { return vars[k] },
		IsTerminal: func() bool { return false },
	}, &out, &errb
}

// harness runs a real daemon (bbolt file, vault, loopback socket) in a
// temporary data dir.
type harness struct {
	t     testing.TB
	dir   string
	d     *daemonRun
	base  string
	owner string
	http  *http.Client
}

func startHarness(t testing.TB, dir string) *harness {
	t.Helper()
	return startHarnessAs(t, dir, testPassword)
}

// startHarnessAs is startHarness with the vault's password.
func startHarnessAs(t testing.TB, dir, password string) *harness {
	t.Helper()
	return startHarnessClock(t, dir, password, nil)
}

// startHarnessClock is startHarnessAs with the daemon's clock (nil: the
// system's).
func startHarnessClock(t testing.TB, dir, password string, clock custodian.Clock) *harness {
	t.Helper()
	return startHarnessLog(t, dir, password, clock, io.Discard)
}

// startHarnessLog is startHarnessClock with the daemon's log written to
// logw at the level phc serve logs at.
func startHarnessLog(t testing.TB, dir, password string, clock custodian.Clock, logw io.Writer) *harness {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "phc")
	}
	env, _, _ := testEnv(t, map[string]string{"PHC_PASSWORD": password})
	env.Clock = clock
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := startDaemon(context.Background(), env, log, dir, "127.0.0.1:0", 0, "")
	if err != nil {
		t.Fatalf("startDaemon: %v", err)
	}
	h := &harness{t: t, dir: dir, d: d, base: "http://" + d.addr, http: &http.Client{
		Timeout: time.Minute,
		// Enough idle keep-alive connections for every parallel client of
		// the benchmarks.
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute},
	}}
	t.Cleanup(func() { h.stop() })
	raw, err := os.ReadFile(filepath.Join(dir, sessionFile))
	if err != nil {
		t.Fatalf("session file: %v", err)
	}
	h.owner = strings.TrimSpace(string(raw))
	h.unlimited()
	return h
}

// unlimited lifts the per-token request rates (60 reads and 10 writes a
// minute by default) and the per-app quotas (10 live tokens, 100 pending
// proposals), which the tests and benchmarks would exceed;
// TestTokenRateLimits and TestAppQuotas put them back.
func (h *harness) unlimited() {
	h.t.Helper()
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"reads_per_minute": 10_000_000, "writes_per_minute": 10_000_000,
		"live_tokens_per_app": 10_000_000, "pending_proposals_per_app": 10_000_000}, nil)
}

func (h *harness) stop() {
	h.http.CloseIdleConnections()
	if h.d != nil {
		if err := h.d.close(); err != nil {
			h.t.Errorf("daemon close: %v", err)
		}
		h.d = nil
	}
}

// send sends one request with an encoded body and returns the status and
// body. It does not touch h.t, so parallel clients may call it.
func (h *harness) send(method, path, token string, body []byte) (int, []byte, error) {
	var buf bytes.Buffer
	status, err := h.sendInto(&buf, method, path, token, body)
	return status, buf.Bytes(), err
}

// sendInto is send reading the answer into buf (reset first), so that a
// benchmark's client can reuse its buffer.
func (h *harness) sendInto(buf *bytes.Buffer, method, path, token string, body []byte) (int, error) {
	buf.Reset()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, err
}

// grant gives consumer op for purpose over selectors, for a day.
func (h *harness) grant(consumer, purpose, op string, selectors map[string]any) {
	h.t.Helper()
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": consumer}, "purpose": purpose,
		"operations": []string{op}, "selectors": selectors,
		"expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, nil)
}

// do sends a request and returns the status and body. body may be nil, a
// []byte or string sent as is, or a value encoded as JSON.
func (h *harness) do(method, path, token string, body any) (int, []byte) {
	h.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			h.t.Fatal(err)
		}
	}
	status, resp, err := h.send(method, path, token, raw)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, resp
}

// must sends a request that must answer want, and decodes the body into out.
func (h *harness) must(want int, method, path, token string, body, out any) []byte {
	h.t.Helper()
	status, raw := h.do(method, path, token, body)
	if status != want {
		h.t.Fatalf("%s %s = %d %s; want %d", method, path, status, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return raw
}

// constraint asserts the status and constraint code of an error answer.
func (h *harness) constraint(wantStatus int, wantConstraint, method, path, token string, body any) []byte {
	h.t.Helper()
	status, raw := h.do(method, path, token, body)
	var e struct {
		Constraint string `json:"constraint"`
	}
	_ = json.Unmarshal(raw, &e)
	if status != wantStatus || e.Constraint != wantConstraint {
		h.t.Fatalf("%s %s = %d %s; want %d %s", method, path, status, raw, wantStatus, wantConstraint)
	}
	return raw
}

// consumer registers a consumer and returns a service token for it, bound
// to no purpose.
func (h *harness) consumer(name, scope, mode string) string {
	h.t.Helper()
	return h.consumerFor(name, scope, mode, "")
}

// consumerFor is consumer with a token bound to purpose.
func (h *harness) consumerFor(name, scope, mode, purpose string) string {
	h.t.Helper()
	secret := "secret-of-" + name + "-0123456789"
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": name, "secret": secret}, nil)
	return h.tokenFor(name, secret, scope, mode, purpose)
}

func (h *harness) token(name, secret, scope, mode string) string {
	h.t.Helper()
	return h.tokenFor(name, secret, scope, mode, "")
}

// tokenFor mints a service token bound to purpose ("" for none).
func (h *harness) tokenFor(name, secret, scope, mode, purpose string) string {
	h.t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	body := map[string]any{"consumer": name, "secret": secret, "scope": scope, "ttl": 3600, "mode": mode}
	if purpose != "" {
		body["purpose"] = purpose
	}
	h.must(201, "POST", "/context/tokens/service", "", body, &tok)
	return tok.Token
}
