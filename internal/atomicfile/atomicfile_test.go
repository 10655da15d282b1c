//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	for _, content := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("after Write(%q) the file holds %q, %v", content, got, err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v; want 0600 whatever the umask", fi.Mode().Perm(), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries; want the file alone (no temporary file left)", len(entries))
	}
}

func TestWriteFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "missing", "state"), []byte("x")); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
	// A directory in the way: the rename fails, and nothing is left behind.
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("x")); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries after a failed Write; want no temporary file left", len(entries))
	}
}
