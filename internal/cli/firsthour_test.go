package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
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
