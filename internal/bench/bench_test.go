package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// TestBenchCommand runs `phc bench` on a tiny vault as a real subprocess
// (which starts and restarts its own daemon) and checks that it reports
// every workload and figure, and that the reader's 300-field read returned
// 300 fields. It asserts no timing.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a daemon; skipped in -short mode")
	}
	bin := buildPHC(t)
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

// buildPHC builds the phc binary into a temporary directory.
func buildPHC(t *testing.T) string {
	t.Helper()
	// go test puts its own go first in PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "phc")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/phc")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.50, 100 * time.Millisecond}, {0.99, 198 * time.Millisecond}, {1, 200 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(d, tc.q); got != tc.want {
			t.Errorf("percentile(1..200 ms, %v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("percentile([7], 0.99) = %v; want 7", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil, 0.5) = %v; want 0", got)
	}
}

// TestBoltHighWater checks the meta-page reader against bbolt's own size
// of the database.
func TestBoltHighWater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 3000)
	for i := range 50 {
		err := db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte{byte(i)}, value)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var want int64
	db.View(func(tx *bbolt.Tx) error { want = tx.Size(); return nil })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := boltHighWater(path)
	if err != nil || got != want {
		t.Fatalf("boltHighWater = %d, %v; want %d (bbolt's tx.Size)", got, err, want)
	}
	if _, err := boltHighWater(filepath.Join("testdata", "none")); err == nil {
		t.Errorf("boltHighWater of a missing file succeeded")
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("300, 30_000,100000")
	if want := []int{300, 30000, 100000}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseSizes = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "299", "1e5", "300,x", "20000000"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) succeeded; want an error", bad)
		}
	}
}

// TestReadUsage: the bytes written to the device of the temporary
// directory grow by at least what this process writes and syncs there
// (Linux only).
func TestReadUsage(t *testing.T) {
	dir := t.TempDir()
	disk := deviceStat(dir)
	if disk == "" {
		t.Skip("the temporary directory is on no block device /sys describes")
	}
	before, err := readUsage(os.Getpid(), disk)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 20
	f, err := os.Create(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Repeat([]byte{7}, n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	after, err := readUsage(os.Getpid(), disk)
	if err != nil {
		t.Fatal(err)
	}
	if got := (after.writtenSectors - before.writtenSectors) * 512; got < n {
		t.Errorf("%s counted %d bytes written over a synced write of %d bytes", disk, got, n)
	}
	if after.writeIOs == before.writeIOs {
		t.Errorf("%s counted no write request over a synced write", disk)
	}
	if after.cpuTicks < before.cpuTicks {
		t.Errorf("CPU ticks went back: %d then %d", before.cpuTicks, after.cpuTicks)
	}
}

// TestCPUTicks: the CPU time read from /proc grows while this process
// works (Linux only).
func TestCPUTicks(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before, err := cpuTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := uint64(1)
	for after := before; after <= before+2; {
		for range 10_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if after, err = cpuTicks(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	_ = x
}
