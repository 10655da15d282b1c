package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

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
