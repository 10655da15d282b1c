package cli

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestServeHonoursPHCADDR: phc serve listens where PHC_ADDR says, as every
// other command looks there. The address is held by another listener, so
// the daemon must report that very address as in use (before it asks for a
// password or creates a vault); --addr still wins over PHC_ADDR.
func TestServeHonoursPHCADDR(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := ln.Addr().String()
	dir := filepath.Join(t.TempDir(), "phc")
	env, _, errb := testEnv(t, map[string]string{"PHC_HOME": dir, "PHC_ADDR": held})
	if code := Run(context.Background(), env, []string{"serve"}); code != 1 || !strings.Contains(errb.String(), "cannot listen on "+held+": the address is already in use") {
		t.Fatalf("phc serve with PHC_ADDR=%s = exit %d: %s; want the address in use", held, code, errb)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("phc serve made %s before it could listen", dir)
	}
	// --addr wins over PHC_ADDR.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	env, _, errb = testEnv(t, map[string]string{"PHC_HOME": dir, "PHC_ADDR": held})
	if code := Run(context.Background(), env, []string{"serve", "--addr", other.Addr().String()}); code != 1 || !strings.Contains(errb.String(), "cannot listen on "+other.Addr().String()) {
		t.Fatalf("phc serve --addr %s with PHC_ADDR=%s = exit %d: %s", other.Addr(), held, code, errb)
	}
}

// TestDaemonMismatch: when PHC_HOME (or --data) and PHC_ADDR (or --addr)
// name different daemons, an owner command says so, naming both, instead
// of answering 401; when they agree, it works.
func TestDaemonMismatch(t *testing.T) {
	t.Parallel()
	a := startHarness(t, "")
	b := startHarness(t, "")
	addrA, addrB := strings.TrimPrefix(a.base, "http://"), strings.TrimPrefix(b.base, "http://")
	run := func(vars map[string]string, args ...string) (int, string) {
		t.Helper()
		vars["PHC_PASSWORD"] = testPassword
		env, _, errb := testEnv(t, vars)
		return Run(context.Background(), env, args), errb.String()
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		from string
		code int // phc status still shows the public status, with a warning
	}{
		{"PHC_ADDR", map[string]string{"PHC_HOME": a.dir, "PHC_ADDR": addrB}, []string{"persona", "list"}, "PHC_ADDR", 1},
		{"--addr", map[string]string{"PHC_HOME": a.dir}, []string{"persona", "list", "--addr", addrB}, "--addr", 1},
		{"--data", map[string]string{"PHC_ADDR": addrB}, []string{"claims", "--data", a.dir}, "PHC_ADDR", 1},
		{"status", map[string]string{"PHC_HOME": a.dir, "PHC_ADDR": addrB}, []string{"status"}, "PHC_ADDR", 0},
	} {
		code, errs := run(tc.vars, tc.args...)
		for _, want := range []string{tc.from + " names the daemon at " + addrB, a.dir, "another daemon, at " + addrA} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: phc %s = exit %d %q; want it to say %q", tc.name, strings.Join(tc.args, " "), code, errs, want)
			}
		}
		// The addresses and the data dir are random: one may hold the
		// digits 401 without any status in the message.
		bare := strings.NewReplacer(addrA, "", addrB, "", a.dir, "").Replace(errs)
		if code != tc.code || strings.Contains(bare, "401") {
			t.Errorf("%s: phc %s = exit %d %q; want exit %d and no bare 401", tc.name, strings.Join(tc.args, " "), code, errs, tc.code)
		}
	}
	// A data dir whose daemon is not running (a session left behind, no
	// addr file): the message says so.
	stale := filepath.Join(t.TempDir(), "stale")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, sessionFile), []byte("ctx_left-behind\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, errs := run(map[string]string{"PHC_HOME": stale, "PHC_ADDR": addrB}, "persona", "list")
	if code != 1 || !strings.Contains(errs, "PHC_ADDR names the daemon at "+addrB) || !strings.Contains(errs, "no daemon of "+stale+" is running") {
		t.Errorf("stale data dir: exit %d %q", code, errs)
	}
	// Agreeing: PHC_ADDR is the data dir's own daemon (also as localhost).
	_, port, _ := net.SplitHostPort(addrA)
	for _, addr := range []string{addrA, "localhost:" + port} {
		if code, errs := run(map[string]string{"PHC_HOME": a.dir, "PHC_ADDR": addr}, "persona", "list"); code != 0 {
			t.Errorf("PHC_ADDR=%s with its own data dir = exit %d %q", addr, code, errs)
		}
	}
}

// TestUIWithoutBrowser runs phc ui with the system's opener against a real
// daemon, on Linux, with a stand-in xdg-open on the PATH: without a display,
// with an opener that fails, or with none, phc ui prints the sign-in link
// and never says it opened a browser; with a display and an opener that
// succeeds, the opener gets the link and phc ui says so.
func TestUIWithoutBrowser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the display and xdg-open checks are Linux's")
	}
	h := startHarness(t, "")
	bin := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	opener := func(script string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	link := regexp.MustCompile(regexp.QuoteMeta(h.base) + `/\S+`)
	works := func(name, l string) {
		t.Helper()
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Get(l)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			t.Errorf("%s: GET %s = %d; want the sign-in to work", name, l, resp.StatusCode)
		}
	}
	for _, tc := range []struct {
		name, script string
		vars         map[string]string
	}{
		{"no display", `printf '%s' "$1" > ` + opened, map[string]string{}},
		{"opener fails", "exit 3", map[string]string{"DISPLAY": ":0"}},
		{"no opener", "", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}},
	} {
		os.Remove(filepath.Join(bin, "xdg-open"))
		os.Remove(opened)
		if tc.script != "" {
			opener(tc.script)
		}
		tc.vars["PHC_HOME"] = h.dir
		env, out, errb := testEnv(t, tc.vars)
		if code := Run(context.Background(), env, []string{"ui"}); code != 0 {
			t.Fatalf("%s: phc ui = exit %d: %s", tc.name, code, errb)
		}
		l := link.FindString(out.String())
		if l == "" || strings.Contains(out.String(), "opened") {
			t.Errorf("%s: phc ui printed %q; want the sign-in link and no claim to have opened a browser", tc.name, out)
			continue
		}
		if _, err := os.Stat(opened); err == nil {
			t.Errorf("%s: phc ui ran the opener with no display", tc.name)
		}
		works(tc.name, l)
	}
	// A display and an opener that succeeds: the link goes to the opener.
	os.Remove(opened)
	opener(`printf '%s' "$1" > ` + opened)
	env, out, errb := testEnv(t, map[string]string{"PHC_HOME": h.dir, "DISPLAY": ":0"})
	if code := Run(context.Background(), env, []string{"ui"}); code != 0 {
		t.Fatalf("phc ui = exit %d: %s", code, errb)
	}
	raw, err := os.ReadFile(opened)
	if err != nil || !link.Match(raw) || strings.Contains(out.String(), string(raw)) || !strings.Contains(out.String(), "opened the console") {
		t.Fatalf("phc ui with an opener: opener got %q (%v), printed %q", raw, err, out)
	}
	works("opened", string(raw))
}

// TestSettingsCLI runs phc settings get and set against a real daemon: the
// owner reads and changes every setting without curl or the raw session
// token, and what the CLI sets is what the API then answers.
func TestSettingsCLI(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	out := h.phcOK("settings", "get")
	for _, want := range []string{"auto_grant", "public (default)", "reads_per_minute", "10000000", "receipt_retention_days", "365 (default)",
		"long_lived_tokens", "disclosure.critical", "reference (default)", "local_vaults", "elicited_approvals", "user_only_write"} {
		if !strings.Contains(out, want) {
			t.Errorf("phc settings get: no %q in\n%s", want, out)
		}
	}
	if got := h.phcOK("settings", "get", "receipt_retention_days"); got != "365\n" {
		t.Errorf("phc settings get receipt_retention_days = %q; want 365", got)
	}
	if got := h.phcOK("settings"); got != out {
		t.Errorf("phc settings = %q; want what phc settings get prints", got)
	}
	out = h.phcOK("settings", "set", "long_lived_tokens", "true", "receipt_retention_days", "90", "disclosure.sensitive", "reference", "user_only_write", "health.*,diary.secret")
	if !strings.Contains(out, "receipt_retention_days  90") || !strings.Contains(out, "disclosure.sensitive  reference") {
		t.Errorf("phc settings set printed %q", out)
	}
	h.phcOK("settings", "set", "disclosure.public", "reference")
	var api struct {
		LongLived     bool              `json:"long_lived_tokens"`
		Retention     int               `json:"receipt_retention_days"`
		Disclosure    map[string]string `json:"disclosure"`
		UserOnlyWrite []string          `json:"user_only_write"`
	}
	h.must(200, "GET", "/phc/v1/settings", h.owner, nil, &api)
	if !api.LongLived || api.Retention != 90 || api.Disclosure["sensitive"] != "reference" || api.Disclosure["public"] != "reference" ||
		strings.Join(api.UserOnlyWrite, " ") != "health.* diary.secret" {
		t.Errorf("after phc settings set, the API answers %+v", api)
	}
	if got := h.phcOK("settings", "get", "disclosure"); !strings.Contains(got, "disclosure.public     reference\n") || !strings.Contains(got, "disclosure.standard   value (default)") {
		t.Errorf("phc settings get disclosure = %q", got)
	}
	// default puts a setting back.
	h.phcOK("settings", "set", "disclosure.sensitive", "default", "receipt_retention_days", "default", "long_lived_tokens", "default")
	api.LongLived, api.Retention, api.Disclosure = false, 0, nil
	h.must(200, "GET", "/phc/v1/settings", h.owner, nil, &api)
	if api.LongLived || api.Retention != 0 || api.Disclosure["sensitive"] != "" || api.Disclosure["public"] != "reference" {
		t.Errorf("after default, the API answers %+v", api)
	}
	// A warning the daemon gives is shown.
	if code, _, errs := h.phc("settings", "set", "auto_grant", "standard"); code != 0 || !strings.Contains(errs, "warning: auto_grant standard") {
		t.Errorf("set auto_grant standard = exit %d %q; want the daemon's warning", code, errs)
	}
	// Mistakes are usage errors that say what is allowed.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"settings", "set", "reads_per_mnute", "5"}, "reads_per_minute"},
		{[]string{"settings", "set", "reads_per_minute", "many"}, "whole number"},
		{[]string{"settings", "set", "long_lived_tokens", "maybe"}, "true or false"},
		{[]string{"settings", "set", "disclosure.secret", "value"}, "public, standard, sensitive or critical"},
		{[]string{"settings", "set", "disclosure.critical", "plain"}, "value or reference"},
		{[]string{"settings", "set", "reads_per_minute"}, "NAME VALUE"},
		{[]string{"settings", "get", "nope"}, "auto_grant"},
	} {
		if code, _, errs := h.phc(tc.args...); code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("phc %s = exit %d %q; want 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
	// The daemon's own refusal comes through.
	if code, _, errs := h.phc("settings", "set", "auto_grant", "everything"); code != 1 || !strings.Contains(errs, "auto_grant must be none, public or standard") {
		t.Errorf("set auto_grant everything = exit %d %q", code, errs)
	}
}

// TestRegisterAgain: an app that registers again with its own secret gets
// its registration as it stands (200), pending and then approved, whether
// it registered itself or the owner added it; another secret is the taken
// name (409), which never echoes a secret, and counts as a wrong secret,
// so that guessing secrets this way meets the same limit as at minting.
func TestRegisterAgain(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	const secret = "tutor-secret-0123456789"
	register := func(want int, name, secret string) map[string]any {
		t.Helper()
		var out map[string]any
		h.must(want, "POST", "/context/consumers/register", "", map[string]string{"name": name, "secret": secret}, &out)
		return out
	}
	first := register(201, "tutor", secret)
	again := register(200, "tutor", secret)
	if again["status"] != "pending" || again["registered_at"] != first["registered_at"] {
		t.Errorf("register again = %v; want %v, pending", again, first)
	}
	h.must(200, "POST", "/phc/v1/consumers/tutor/approve", h.owner, nil, nil)
	if again := register(200, "tutor", secret); again["status"] != "approved" {
		t.Errorf("register after approval = %v; want approved", again)
	}
	h.phcOK("consumer", "add", "coach", "--secret", "coach-secret-0123456789")
	if again := register(200, "coach", "coach-secret-0123456789"); again["status"] != "approved" {
		t.Errorf("register an app the owner added = %v; want approved", again)
	}
	raw := h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": "a-guess-at-the-secret-01"})
	if strings.Contains(string(raw), "secret-") {
		t.Errorf("409 = %s; it names a secret", raw)
	}
	// Nine more wrong secrets make ten in the minute; the next try, even
	// with the right secret, is rate-limited — on both routes.
	for range 9 {
		h.constraint(409, "conflict", "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": "a-guess-at-the-secret-01"})
	}
	h.constraint(429, "rate_limited", "POST", "/context/consumers/register", "", map[string]string{"name": "tutor", "secret": secret})
	h.constraint(429, "rate_limited", "POST", "/context/tokens/service", "", map[string]any{"consumer": "tutor", "secret": secret, "scope": "*"})
	// Other apps are not held up.
	register(200, "coach", "coach-secret-0123456789")
}

// TestCLIDurationsAndTimes: every duration the CLI prints is written one
// way ("1h", "30m"), and every time in UTC with its zone, never Go's
// "1h0m0s" or 3600s, nor RFC 3339 — over the commands that show them,
// against a real daemon.
func TestCLIDurationsAndTimes(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	h.phcOK("grant", "--to", "tutor", "--purpose", "learning", "--ops", "read,contribute", "--keys", "learning.*,health.*", "--expires", "24h")
	tok := h.tokenFor("tutor", "tutor-secret-0123456789", "*", "read-write", "learning")
	h.must(202, "POST", "/context/requests", tok, map[string]any{"scope": "health.*", "purpose": "learning", "duration": "30m"}, nil)
	when := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`
	goStyle := regexp.MustCompile(`\d+[hm]0m|\d+m0s|\d{3,}s\b|\d{4}-\d\d-\d\dT\d\d:`)
	code, _, errs := h.phc("token", "--consumer", "tutor", "--secret", "tutor-secret-0123456789", "--ttl", "1h")
	if code != 0 || !regexp.MustCompile(`expires at `+when+` \(in (1h|59m5\ds)\)`).MatchString(errs) {
		t.Errorf("phc token: exit %d, stderr %q; want the expiry as a time in UTC and 1h", code, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"requests"}, `for 30m, `},
		{[]string{"grant", "list"}, `until ` + when},
		{[]string{"token", "list"}, `until ` + when},
		{[]string{"receipts", "--limit", "5"}, `^\s+\d+ ` + when + ` `},
		{[]string{"serve", "--help"}, `\(default 30m\)`},
	} {
		out := h.phcOK(tc.args...)
		if !regexp.MustCompile(`(?m)`+tc.want).MatchString(out) || goStyle.MatchString(out) {
			t.Errorf("phc %s printed\n%s\nwant %s, and no Go-style duration or RFC 3339 time", strings.Join(tc.args, " "), out, tc.want)
		}
	}
}
