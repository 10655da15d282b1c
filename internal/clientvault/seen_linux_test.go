package clientvault

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSeenWriteFails: a seen file that cannot be written whole (here the
// process may write no file over 64 bytes, RLIMIT_FSIZE) makes Seen fail
// and leaves the file as it was — it lost the write error and renamed a
// truncated file over the sightings. The limit is set in a child process,
// which this test runs.
func TestSeenWriteFails(t *testing.T) {
	const origin, profile = "http://127.0.0.1:7200", "default"
	t0 := time.Date(2026, 10, 16, 8, 58, 12, 0, time.UTC)
	if dir := os.Getenv("PHC_SEEN_CHILD_DIR"); dir != "" {
		signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails with EFBIG instead
		lim := syscall.Rlimit{Cur: 64, Max: 64}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		keys := []string{"EMAIL_1"}
		for i := 2; i < 20; i++ {
			keys = append(keys, fmt.Sprintf("EMAIL_%d", i))
		}
		if _, err := Seen(dir, origin, profile, keys, t0.Add(time.Hour)); err == nil {
			fmt.Println("Seen succeeded")
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	if _, err := Seen(dir, origin, profile, []string{"EMAIL_1"}, t0); err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSuffix(KeyPath(dir, origin, profile), ".key") + ".seen"
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeenWriteFails$")
	cmd.Env = append(os.Environ(), "PHC_SEEN_CHILD_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Seen in a process that cannot write the file whole: %v\n%s", err, out)
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the seen file after a failed write holds %q, %v; want it as it was, %q", after, err, before)
	}
	s, err := Seen(dir, origin, profile, []string{"EMAIL_1"}, t0.Add(2*time.Hour))
	if err != nil || !s["EMAIL_1"].Equal(t0) {
		t.Fatalf("Seen after the failed write = %v, %v; want the first sighting kept", s, err)
	}
}
