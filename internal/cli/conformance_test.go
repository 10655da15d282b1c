package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceVerb runs phc conformance against a real daemon, with the
// owner session from the data dir and the password from the environment,
// as the acceptance run does.
func TestConformanceVerb(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	// The whole suite runs in package conformance; here a part of it checks
	// the verb: the vault cases (which lock and unlock), tokens and hygiene.
	code, out, errs := h.phc("conformance", "--target", h.base, "--password-env", "PHC_PASSWORD", "--leave-locked",
		"--run", `^PCP-|^PHC-5\.[27]-`)
	if code != 0 {
		t.Fatalf("phc conformance = exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, " 0 failed, 0 skipped") || !strings.Contains(out, "PASS") {
		t.Errorf("phc conformance printed:\n%s", out)
	}
	for what, secret := range map[string]string{"owner's session token": h.owner, "password": testPassword} {
		if strings.Contains(out+errs, secret) {
			t.Errorf("the output shows the %s", what)
		}
	}
}

// TestConformanceVerbSkipsWithoutPassword checks that the cases that lock
// the vault are skipped, with their reason, when no password is given, and
// that --json prints a report.
func TestConformanceVerbSkipsWithoutPassword(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	code, out, errs := h.phc("conformance", "--target", h.base, "--json", "--run", `^PCP-7\.1-`)
	if code != 0 {
		t.Fatalf("phc conformance = exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var rep struct {
		Results []struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
			Detail  string `json:"detail"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	skipped, passed := 0, 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.ID, "PCP-7.1-") {
			t.Errorf("--run ran %s", r.ID)
		}
		switch r.Outcome {
		case "SKIP":
			skipped++
			if !strings.Contains(r.Detail, "--password-env") {
				t.Errorf("%s skipped without saying why: %q", r.ID, r.Detail)
			}
		case "PASS":
			passed++
		default:
			t.Errorf("%s: %s %s", r.ID, r.Outcome, r.Detail)
		}
	}
	if skipped == 0 || passed == 0 {
		t.Errorf("%d passed, %d skipped; want some of each", passed, skipped)
	}
	// The vault was not locked.
	h.must(200, "GET", "/phc/v1/personas", h.owner, nil, nil)
}

// TestConformanceVerbFails checks the exit code and the table when cases
// fail, against a server that is no custodian.
func TestConformanceVerbFails(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/context/status" {
			w.Write([]byte(`{"initialized": true, "locked": false}`))
			return
		}
		w.Write([]byte(`{"ok": true}`))
	}))
	defer srv.Close()
	env, out, errb := testEnv(t, map[string]string{"PHC_HOME": filepath.Join(t.TempDir(), "none")})
	code := Run(t.Context(), env, []string{"conformance", "--target", srv.URL, "--write-test-data", "--run", `^PHC-5\.7-`})
	if code != 1 {
		t.Fatalf("exit %d; want 1\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "FAIL ") || !strings.Contains(out.String(), "want 400 invalid_request") ||
		!strings.Contains(out.String(), "needs the owner's session token") {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(errb.String(), "conformance cases failed") {
		t.Errorf("stderr: %s", errb)
	}
}

// TestConformanceVerbUsage checks the usage errors.
func TestConformanceVerbUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"conformance", "--run", "("},
		{"conformance", "--target", "ftp://127.0.0.1:1"},
		{"conformance", "--target", "http://127.0.0.1:1", "--password-env", "PHC_NOT_SET"},
		{"conformance", "--target", "http://127.0.0.1:1", "--secret-key-file", "/dev/null"},
		{"conformance", "extra"},
		{"conformance", "--addr", "127.0.0.1:1"},
		{"conformance", "--password-env", "PHC_PASSWORD"},
		{"conformance", "--write-test-data"},
		// A custodian whose data phc cannot see is refused.
		{"conformance", "--target", "http://127.0.0.1:1"},
	} {
		env, _, errb := testEnv(t, map[string]string{"PHC_HOME": t.TempDir()})
		if code := Run(t.Context(), env, args); code != 2 {
			t.Errorf("phc %s = exit %d; want 2 (stderr %s)", strings.Join(args, " "), code, errb)
		}
	}
	// An unreachable target is an error of the run, not of usage.
	env, _, errb := testEnv(t, map[string]string{"PHC_HOME": t.TempDir()})
	if code := Run(t.Context(), env, []string{"conformance", "--target", "http://127.0.0.1:1", "--write-test-data"}); code != 1 {
		t.Errorf("unreachable target: exit %d; want 1 (stderr %s)", code, errb)
	}
}

// TestConformanceVerbOverMCP runs the app-facing cases against a real
// daemon with --mcp: what a tool carries goes over the daemon's /mcp.
func TestConformanceVerbOverMCP(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	code, out, errs := h.phc("conformance", "--mcp", "--run", `^PCP-7\.[2-5]-|^PHC-6\.2-propose`)
	if code != 0 {
		t.Fatalf("phc conformance --mcp = exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, " 0 failed") || !strings.Contains(out, "PASS") {
		t.Errorf("phc conformance --mcp printed:\n%s", out)
	}
}

// vaultSnapshot is everything the owner can list of a vault, receipts
// included: a run that wrote anything would change it.
func (h *harness) vaultSnapshot() string {
	h.t.Helper()
	var b strings.Builder
	var paths []string
	for _, l := range dataLists {
		paths = append(paths, l.path)
	}
	for _, path := range append(paths, "/context/status", "/phc/v1/receipts?limit=1000", "/phc/v1/settings") {
		b.WriteString(path + " ")
		b.Write(h.must(200, "GET", path, h.owner, nil, nil))
		b.WriteString("\n")
	}
	return b.String()
}

// TestConformanceLeavesVaultUntouched runs phc conformance with no flags
// beside the owner's own daemon: it tests a throwaway custodian of its
// own, removes it, and the owner's vault is exactly as before. Pointed at
// the owner's vault, it refuses unless told to write test data.
func TestConformanceLeavesVaultUntouched(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.phcOK("consumer", "add", "tutor", "--secret", "tutor-secret-0123456789")
	h.must(200, "PUT", "/context/fields/learning.goal", h.owner, map[string]any{"value": "Spanish"}, nil)
	before := h.vaultSnapshot()

	code, out, errs := h.phc("conformance")
	if code != 0 {
		t.Fatalf("phc conformance = exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, " 0 failed, 0 skipped") || !strings.Contains(errs, "throwaway custodian") {
		t.Errorf("phc conformance printed:\n%s\nstderr:\n%s", out, errs)
	}
	if after := h.vaultSnapshot(); after != before {
		t.Errorf("phc conformance changed the owner's vault:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the throwaway custodian's dir was left behind: %v", left)
	}

	// Against the owner's own daemon it refuses, naming what is there and
	// the flag that would write test data anyway.
	code, _, errs = h.phc("conformance", "--target", h.base)
	if code != 2 || !strings.Contains(errs, "--write-test-data") || !strings.Contains(errs, "1 personas") {
		t.Errorf("conformance --target (a vault with data) = exit %d, stderr %s", code, errs)
	}
	if after := h.vaultSnapshot(); after != before {
		t.Errorf("the refused run changed the owner's vault")
	}
	code, out, errs = h.phc("conformance", "--target", h.base, "--write-test-data", "--run", `^PHC-5\.7-`)
	if code != 0 {
		t.Fatalf("conformance --write-test-data = exit %d\n%s\n%s", code, out, errs)
	}
}
