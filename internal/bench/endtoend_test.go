//go:build slow

package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// The tests that build phc and run phc bench's workloads against real
// daemons, which unlock at the real key-derivation cost.

// TestBenchCommand runs `phc bench` on a tiny vault as a real subprocess
// (which starts and restarts its own daemon) and checks that it reports
// every workload and figure, and that the reader's 300-field read returned
// 300 fields. It asserts no timing.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a daemon; skipped in -short mode")
	}
	bin := daemontest.BuildPHC(t)
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	tmp := t.TempDir()
	cmd := exec.Command(bin, "bench", "--claims", "320", "--duration", "300ms", "--growth", "20",
		"--write-keys", "20", "--sustain", "400ms", "--tmp", tmp, "--json", jsonPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("phc bench: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	out := stdout.String()

	for _, row := range []struct {
		name    string
		clients string
	}{
		{"context300", "1"}, {"context300", "16"}, {"field1", "1"}, {"field1", "16"},
		{"owner-write", "1"}, {"owner-write", "16"}, {"owner-sustain", "16"}, {"propose", "16"}, {"traverse", "1"},
	} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(row.name) + ` +` + row.clients + ` +\d+ +\d+ +[\d.]+ +[\d.]+ +0 +\d+ +[\d.]+ +[\d.]+$`)
		if !re.MatchString(out) {
			t.Errorf("phc bench printed no row for %s at %s clients without errors; stdout:\n%s", row.name, row.clients, out)
		}
	}
	for _, want := range []string{
		"machine: nproc ",
		"== 320 claims ==",
		"seeding: 320 claims in ",
		"verify: the reader's GET /context/context returned 300 fields",
		"the owner's status counts 320 fields",
		"memory after seeding: RSS anon ",
		"KDF: one vault unlock (Argon2id) alone takes ",
		"restart after the read workloads: ",
		"restart after the growth run: ",
		"growth: 20 sequential context300 reads",
		"traverse: 100 entities, 100 relationships; the owner's depth-3 traversal from self returns 100 edges",
		"store at the end: phc.db ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("phc bench printed no %q; stdout:\n%s", want, out)
		}
	}

	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if len(rep.Sizes) != 1 {
		t.Fatalf("--json holds %d sizes; want 1", len(rep.Sizes))
	}
	s := rep.Sizes[0]
	if s.Claims != 320 || s.ContextFields != ReadSet || s.StatusFields != 320 {
		t.Errorf("--json: claims %d, context fields %d, status fields %d; want 320, %d, 320", s.Claims, s.ContextFields, s.StatusFields, ReadSet)
	}
	if len(s.Workloads) != 9 {
		t.Errorf("--json holds %d workloads; want 9", len(s.Workloads))
	}
	var cpu, disk float64
	for _, w := range s.Workloads {
		if w.Errors != 0 {
			t.Errorf("--json: %s ×%d had %d errors: %s", w.Name, w.Clients, w.Errors, w.FirstError)
		}
		cpu += w.CPUUsPerReq
		if strings.HasPrefix(w.Name, "owner-") {
			disk += w.DiskKBPerReq
		}
	}
	// The daemon's CPU time comes from /proc; a durable write reaches the
	// data dir's device, which /sys counts.
	if _, err := os.Stat("/proc/self/stat"); err == nil && cpu <= 0 {
		t.Errorf("--json: no workload reports the daemon's CPU time: %+v", s.Workloads)
	}
	if deviceStat(tmp) != "" && disk <= 0 {
		t.Errorf("--json: no owner write reports bytes written to the disk: %+v", s.Workloads)
	}
	if len(s.Restarts) != 2 || s.Restarts[0].ReadyMs <= 0 || s.Restarts[1].ReadyMs <= 0 {
		t.Errorf("--json: restarts %+v; want two, measured", s.Restarts)
	}
	if s.Growth == nil || s.Growth.Reads != 20 || s.Growth.After.FileBytes == 0 {
		t.Errorf("--json: growth %+v; want 20 reads and the store's size", s.Growth)
	}
	if s.Traverse == nil || s.Traverse.Edges != graphEntities {
		t.Errorf("--json: traverse %+v; want %d edges", s.Traverse, graphEntities)
	}
	if strings.Contains(out+stderr.String(), "ctx_") || strings.Contains(out+stderr.String(), "ctxs_") {
		t.Errorf("phc bench printed a token")
	}
}

// TestCompare runs the whole comparison: a phc daemon and the fake pvault
// (the test binary), seeded, interleaved, summarized and printed.
func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a daemon; skipped in -short mode")
	}
	if runtime.GOOS != "linux" {
		t.Skip("starting pvault needs the Linux pseudo-terminal")
	}
	t.Setenv(fakePVaultEnv, "1")
	var out, progress bytes.Buffer
	rep, err := Run(t.Context(), Config{Bin: daemontest.BuildPHC(t), Duration: 150 * time.Millisecond, Clients: 3, TempDir: t.TempDir(),
		Out: &out, Progress: &progress, Compare: &CompareConfig{PVault: os.Args[0], Rounds: 2}})
	if err != nil {
		t.Fatalf("%v\nout:\n%s\nprogress:\n%s", err, &out, &progress)
	}
	c := rep.Compare
	if c == nil || len(c.Rows) != 2 {
		t.Fatalf("comparison %+v; want two rows", c)
	}
	for _, x := range c.Rows {
		if len(x.PHC) != 2 || len(x.Other) != 2 || x.PHCMedian.Errors+x.OtherMedian.Errors != 0 ||
			x.PHCMedian.ReqPerSec <= 0 || x.OtherMedian.ReqPerSec <= 0 || x.Ratio.ReqPerSec <= 0 {
			t.Errorf("row ×%d: %+v; want two error-free rounds a side, and the medians", x.Clients, x)
		}
	}
	if c.PHC.ContextFields != ReadSet || c.Other.ContextFields != ReadSet || c.Other.UnlockMs <= 0 {
		t.Errorf("context fields %d and %d, unlock %v ms; want %d each, and the unlock timed", c.PHC.ContextFields, c.Other.ContextFields, c.Other.UnlockMs, ReadSet)
	}
	s := out.String()
	for _, re := range []string{
		`== comparison: context300, phc vs pvault, fresh 300-field vaults ==`,
		`(?m)^context300 +1 \| +\d+ +[\d.]+ +[\d.]+ \| +\d+ +[\d.]+ +[\d.]+ \| +[\d.]+x +[\d.]+x +[\d.]+x \| 0/0$`,
		`(?m)^context300 +3 \| `,
		`owner: POST /vault/lock, then POST /vault/unlock`,
		`reader: no consumer registration`,
		`req/s by round, ×3: phc \d+ \d+; pvault \d+ \d+`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("the output has no %q:\n%s", re, s)
		}
	}
	if !strings.Contains(progress.String(), "round 2/2 pvault") {
		t.Errorf("no progress of the rounds:\n%s", &progress)
	}
}
