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
	}{
		{"PHC_ADDR", map[string]string{"PHC_HOME": a.dir, "PHC_ADDR": addrB}, []string{"persona", "list"}, "PHC_ADDR"},
		{"--addr", map[string]string{"PHC_HOME": a.dir}, []string{"persona", "list", "--addr", addrB}, "--addr"},
		{"--data", map[string]string{"PHC_ADDR": addrB}, []string{"claims", "--data", a.dir}, "PHC_ADDR"},
	} {
		code, errs := run(tc.vars, tc.args...)
		for _, want := range []string{tc.from + " names the daemon at " + addrB, a.dir, "another daemon, at " + addrA} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: phc %s = exit %d %q; want it to say %q", tc.name, strings.Join(tc.args, " "), code, errs, want)
			}
		}
		if code != 1 || strings.Contains(errs, "401") {
			t.Errorf("%s: phc %s = exit %d %q; want exit 1 and no bare 401", tc.name, strings.Join(tc.args, " "), code, errs)
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
