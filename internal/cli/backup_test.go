package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRestore follows "Backup, restore, upgrade" in
// docs/operations.md: phc
// backup FILE, and phc restore FILE into the same vault (merge, then
// --replace) and into a new vault on another machine (held in the
// quarantine, then adopted).
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.must(200, "PUT", "/context/fields/learning.goal", h.owner, map[string]any{"value": "Spanish"}, nil)
	file := filepath.Join(t.TempDir(), "phc-backup.json")

	if out := h.phcOK("backup", file); !strings.Contains(out, "backed up to") || !strings.Contains(out, "does not hold consumers") {
		t.Errorf("backup printed %q", out)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}
	if code, _, errs := h.phc("backup", file); code != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("backup over an existing file = %d %s", code, errs)
	}
	h.phcOK("backup", file, "--force")

	// A merge adds what is missing, and skips what is here or was deleted
	// here since.
	h.must(200, "PUT", "/context/fields/learning.level", h.owner, map[string]any{"value": "B1"}, nil)
	h.must(200, "DELETE", "/context/fields/learning.goal", h.owner, nil, nil)
	if out := h.phcOK("restore", file); !strings.Contains(out, "restored: 0 claims added, 1 skipped") {
		t.Errorf("restore printed %q", out)
	}
	h.must(404, "GET", "/context/fields/learning.goal", h.owner, nil, nil)
	// --replace restores the backup as it was: what came after it is erased.
	if out := h.phcOK("restore", file, "--replace"); !strings.Contains(out, "restored: 1 claims added") || !strings.Contains(out, "1 erased first") {
		t.Errorf("restore --replace printed %q", out)
	}
	h.must(404, "GET", "/context/fields/learning.level", h.owner, nil, nil)
	h.must(200, "GET", "/context/fields/learning.goal", h.owner, nil, nil)

	// Not a backup; a wrong password.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("not json"), 0o600)
	if code, _, errs := h.phc("restore", bad); code != 1 || !strings.Contains(errs, "not a phc backup") {
		t.Errorf("restore of a non-backup = %d %s", code, errs)
	}
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": "not the password at all", "PHC_HOME": h.dir})
	if code := Run(t.Context(), env, []string{"restore", file}); code != 1 || !strings.Contains(errb.String(), "wrong password or Secret Key") {
		t.Errorf("restore with a wrong password = %d %s", code, errb)
	}

	// On a new machine: a new vault, the old vault's password and Secret
	// Key; the records wait in the quarantine until adopted.
	b := startHarnessAs(t, "", "an entirely different passphrase")
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": b.dir})
	if code := Run(t.Context(), env, []string{"restore", file, "--secret-key-file", filepath.Join(h.dir, "secret.key")}); code != 0 ||
		!strings.Contains(out.String(), "held in the quarantine") || !strings.Contains(out.String(), "phc quarantine adopt --all") {
		t.Fatalf("restore into another vault = %d %s %s", code, out, errb)
	}
	b.must(404, "GET", "/context/fields/learning.goal", b.owner, nil, nil)
	env, out, errb = testEnv(t, map[string]string{"PHC_HOME": b.dir})
	if code := Run(t.Context(), env, []string{"quarantine", "adopt", "--all"}); code != 0 {
		t.Fatalf("quarantine adopt --all = %d %s %s", code, out, errb)
	}
	b.must(200, "GET", "/context/fields/learning.goal", b.owner, nil, nil)
}
