package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/daemon/daemontest"
	"github.com/phc-project/phc/internal/vault"
)

// copyDataDir copies a stopped daemon's data dir as a person moving to a
// new machine would, leaving out the files named in skip.
func copyDataDir(t *testing.T, from, to string, skip ...string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		for _, s := range skip {
			if rel == s {
				return nil
			}
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), raw, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serveInBackground runs phc serve with args until the test ends, and
// waits for it to write its address (or to fail).
type served struct {
	cancel context.CancelFunc
	done   chan int
	code   int
	errb   *bytes.Buffer
}

func serveInBackground(t *testing.T, env *Env, dir string, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errb := &bytes.Buffer{}
	s := &served{cancel: cancel, done: make(chan int, 1), code: -1}
	log := daemontest.NewServingLog(errb)
	env.Stderr = log
	s.errb = errb
	go func() {
		s.done <- Run(ctx, env, append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--idle-lock", "0"}, args...))
	}()
	t.Cleanup(s.stop)
	select {
	case s.code = <-s.done:
	case <-log.Serving:
	}
	return s
}

func (s *served) stop() {
	s.cancel()
	if s.code == -1 {
		s.code = <-s.done
	}
}

// TestRestoreOnNewMachine follows "Restore on a new machine" in
// docs/operations.md:
// the data dir copied without secret.key, and the Secret Key from the
// emergency kit given by PHC_SECRET_KEY, --secret-key-file, or typed at
// the prompt (and then stored, 0600, when the owner says so).
func TestRestoreOnNewMachine(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	sk, err := vault.ReadSecretKeyFile(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	h.stop()
	kit := filepath.Join(t.TempDir(), "kit.txt")
	if err := os.WriteFile(kit, []byte("EMERGENCY KIT\n  Secret Key: "+strings.ToLower(sk)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		vars   map[string]string
		args   []string
		typed  string // the answer to the store prompt, on a terminal
		stored bool
	}{
		{name: "env", vars: map[string]string{"PHC_SECRET_KEY": sk}},
		{name: "kit line in env", vars: map[string]string{"PHC_SECRET_KEY": "Secret Key: " + sk}},
		{name: "file", args: []string{"--secret-key-file", kit}},
		{name: "prompt, stored", typed: "y\n", stored: true},
		{name: "prompt, not stored", typed: "n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "phc")
			copyDataDir(t, h.dir, dir, "secret.key", sessionFile, addrFile)
			vars := map[string]string{"PHC_PASSWORD": testPassword}
			for k, v := range tc.vars {
				vars[k] = v
			}
			env, _, _ := testEnv(t, vars)
			prompts := 0
			if tc.typed != "" {
				// A terminal: the password from the environment, the Secret
				// Key typed, then the answer to the offer to store it.
				env.IsTerminal = func() bool { return true }
				env.ReadPassword = func(prompt string) ([]byte, error) {
					prompts++
					if !strings.Contains(prompt, "Secret Key") {
						return nil, errors.New("unexpected prompt " + prompt)
					}
					return []byte(sk), nil
				}
				env.Stdin = strings.NewReader(tc.typed)
			}
			s := serveInBackground(t, env, dir, tc.args...)
			if s.code != -1 {
				t.Fatalf("serve exited %d: %s", s.code, s.errb)
			}
			code, out, errs := runIn(t, dir, "persona", "list")
			if code != 0 || !strings.Contains(out, "learning") {
				t.Fatalf("persona list after the restore = %d %q %q", code, out, errs)
			}
			s.stop()
			if s.code != 0 {
				t.Errorf("serve exit %d: %s", s.code, s.errb)
			}
			if tc.typed != "" && prompts != 1 {
				t.Errorf("%d prompts; want 1", prompts)
			}
			fi, err := os.Stat(filepath.Join(dir, "secret.key"))
			switch {
			case tc.stored && err != nil:
				t.Errorf("the typed Secret Key was not stored: %v", err)
			case tc.stored && fi.Mode().Perm() != 0o600:
				t.Errorf("secret.key mode %v; want 0600", fi.Mode().Perm())
			case !tc.stored && err == nil:
				t.Errorf("secret.key written though the owner did not ask for it")
			}
			if tc.stored {
				if got, err := vault.ReadSecretKeyFile(dir); err != nil || got != sk {
					t.Errorf("stored Secret Key = %q, %v", got, err)
				}
			}
			if strings.Contains(s.errb.String(), sk) {
				t.Errorf("serve's log shows the Secret Key")
			}
		})
	}

	// Without any: serve says where to put it, and exits 1.
	t.Run("none", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "phc")
		copyDataDir(t, h.dir, dir, "secret.key", sessionFile, addrFile)
		env, _, _ := testEnv(t, nil)
		s := serveInBackground(t, env, dir)
		if s.code != 1 || !strings.Contains(s.errb.String(), "PHC_SECRET_KEY") || !strings.Contains(s.errb.String(), "--secret-key-file") {
			t.Errorf("serve without a Secret Key = exit %d: %s", s.code, s.errb)
		}
	})

	// phc unlock takes it the same ways: a daemon started locked (no
	// password), unlocked with the kit's key.
	t.Run("unlock", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "phc")
		copyDataDir(t, h.dir, dir, "secret.key", sessionFile, addrFile)
		env, _, _ := testEnv(t, map[string]string{})
		s := serveInBackground(t, env, dir)
		if s.code != -1 {
			t.Fatalf("serve exited %d: %s", s.code, s.errb)
		}
		env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": dir})
		if code := Run(context.Background(), env, []string{"unlock"}); code != 1 || !strings.Contains(errb.String(), "PHC_SECRET_KEY") {
			t.Errorf("unlock without a Secret Key = %d %s", code, errb)
		}
		env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": dir})
		if code := Run(context.Background(), env, []string{"unlock", "--secret-key-file", kit}); code != 0 || !strings.Contains(out.String(), "unlocked") {
			t.Fatalf("unlock --secret-key-file = %d %s %s", code, out, errb)
		}
		if code, out, _ := runIn(t, dir, "persona", "list"); code != 0 || !strings.Contains(out, "learning") {
			t.Errorf("persona list after unlock = %d %q", code, out)
		}
	})
}

// runIn runs a client verb against the data dir dir.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": dir})
	code := Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// TestServePortClash checks that an address in use is reported in words
// before any vault is created or unlocked.
func TestServePortClash(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "phc")
	env, _, errb := testEnv(t, nil)
	asked := false
	env.IsTerminal = func() bool { return true }
	env.ReadPassword = func(string) ([]byte, error) { asked = true; return nil, io.EOF }
	env.Getenv = func(string) string { return "" }
	code := Run(context.Background(), env, []string{"serve", "--data", dir, "--addr", ln.Addr().String()})
	if code != 1 || !strings.Contains(errb.String(), "already in use") || !strings.Contains(errb.String(), "--addr") {
		t.Errorf("serve on a busy port = exit %d: %s", code, errb)
	}
	if asked || vault.Exists(dir) {
		t.Errorf("a password was asked for (%v) or a vault made (%v) before the clash was reported", asked, vault.Exists(dir))
	}
}

// TestNewPasswordMinimum checks that init and a first serve refuse a short
// password, saying how long it must be, and that unlocking an existing
// vault does not apply the rule.
func TestNewPasswordMinimum(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"init"}, {"serve", "--addr", "127.0.0.1:0"}} {
		dir := filepath.Join(t.TempDir(), "phc")
		env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": "short pw"})
		code := Run(context.Background(), env, append(args, "--data", dir))
		if code != 1 || !strings.Contains(errb.String(), "at least 12") {
			t.Errorf("phc %s with an 8-character password = exit %d: %s", args[0], code, errb)
		}
		if vault.Exists(dir) {
			t.Errorf("phc %s made a vault with a short password", args[0])
		}
	}
}
