package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mem is a process's resident memory in MiB: anonymous (heap, stacks) and
// file-mapped (bbolt's mmap of the store, the binary), apart.
type Mem struct {
	AnonMiB float64 `json:"rss_anon_mib"`
	FileMiB float64 `json:"rss_file_mib"`
	// PeakMiB is the process's peak RSS so far (VmHWM).
	PeakMiB float64 `json:"peak_rss_mib,omitempty"`
}

func (m *Mem) String() string {
	if m == nil {
		return "n/a"
	}
	return fmt.Sprintf("anon %.1f MiB, file %.1f MiB (peak RSS %.1f MiB)", m.AnonMiB, m.FileMiB, m.PeakMiB)
}

// readMem reads the resident memory of process pid from /proc: RssAnon and
// RssFile of /proc/PID/status, or else Anonymous and Rss minus Anonymous of
// /proc/PID/smaps_rollup. It fails where there is no /proc.
func readMem(pid int) (*Mem, error) {
	status, err := procKB(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	m := &Mem{PeakMiB: status["VmHWM"] / 1024}
	anon, okA := status["RssAnon"]
	file, okF := status["RssFile"]
	if !okA || !okF {
		rollup, err := procKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			return nil, err
		}
		anon, file = rollup["Anonymous"], rollup["Rss"]-rollup["Anonymous"]
	}
	m.AnonMiB, m.FileMiB = anon/1024, file/1024
	return m, nil
}

// procKB reads the "Name:   123 kB" lines of a /proc file.
func procKB(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if unit != "kB" {
			continue
		}
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = n
		}
	}
	return out, sc.Err()
}

// Store is the size of a bbolt file: the file, and its high-water mark
// (the pages bbolt has allocated, free-listed ones included), which grows
// page by page where the file grows by large steps.
type Store struct {
	FileBytes int64 `json:"file_bytes"`
	UsedBytes int64 `json:"used_bytes"`
	// LogBytes is the disk the store's write-ahead log (path + ".wal", a
	// few reused, preallocated segments) takes; 0 for the graph.
	LogBytes int64 `json:"log_bytes,omitempty"`
}

// readStore measures the bbolt file at path. A file it cannot parse
// reports its size only.
func readStore(path string) (Store, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Store{}, err
	}
	s := Store{FileBytes: fi.Size()}
	s.UsedBytes, _ = boltHighWater(path)
	segs, _ := filepath.Glob(filepath.Join(path+".wal", "*.seg"))
	for _, seg := range segs {
		if fi, err := os.Stat(seg); err == nil {
			s.LogBytes += fi.Size()
		}
	}
	return s, nil
}

// boltHighWater reads the two meta pages of a bbolt file and returns the
// high-water mark (pgid × page size) of the valid one with the higher
// transaction id. bbolt's layout: a 16-byte page header, then magic,
// version, page size, flags (uint32 each), the root bucket (16 bytes), the
// freelist pgid, pgid, txid and an FNV-64a checksum of the bytes before
// it, all little-endian on the platforms phc runs on.
func boltHighWater(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	const (
		hdr        = 16
		magic      = 0xED0CDAED
		metaLen    = 64
		checksumAt = 56
	)
	var best struct{ txid, used uint64 }
	read := func(off int64) (pageSize uint32, err error) {
		buf := make([]byte, hdr+metaLen)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		m := buf[hdr:]
		le := binary.LittleEndian
		if le.Uint32(m[0:]) != magic {
			return 0, errors.New("not a bbolt file")
		}
		h := fnv.New64a()
		h.Write(m[:checksumAt])
		if h.Sum64() != le.Uint64(m[checksumAt:]) {
			return le.Uint32(m[8:]), errors.New("bad meta checksum")
		}
		pageSize = le.Uint32(m[8:])
		pgid, txid := le.Uint64(m[40:]), le.Uint64(m[48:])
		if txid >= best.txid {
			best.txid, best.used = txid, pgid*uint64(pageSize)
		}
		return pageSize, nil
	}
	ps, err0 := read(0)
	if ps == 0 {
		return 0, err0
	}
	_, err1 := read(int64(ps))
	if err0 != nil && err1 != nil {
		return 0, err1
	}
	return int64(best.used), nil
}

// cpuTicks reads the CPU time process pid has used, user and system, in
// clock ticks (fields 14 and 15 of /proc/PID/stat). It fails where there is
// no /proc.
func cpuTicks(pid int) (uint64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+1:])) // from field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return utime + stime, nil
}

// usage is what the daemon and its disk have done so far: the daemon's
// CPU time, and the bytes written to the block device that holds its data
// dir, by any process (a machine running the bench has little else
// writing). Every store commit ends in an fdatasync, so a write's pages
// reach the device before it is answered. (The per-process write_bytes of
// /proc/PID/io is no measure: on kernels with large page-cache folios it
// counts a whole folio for each page dirtied, 15 times the device's bytes
// here.)
type usage struct {
	cpuTicks       uint64
	writtenSectors uint64 // of 512 bytes
	writeIOs       uint64 // write requests the device completed
	disk           bool   // the device's figures were read
}

// readUsage reads the usage of process pid and of the device whose stat
// file (see deviceStat) is diskStat ("": the device is not measured).
func readUsage(pid int, diskStat string) (usage, error) {
	t, err := cpuTicks(pid)
	if err != nil {
		return usage{}, err
	}
	u := usage{cpuTicks: t}
	if diskStat == "" {
		return u, nil
	}
	// Fields 5 and 7 of a block device's stat: writes completed (after
	// the block layer merged adjacent ones), sectors written. A file that
	// cannot be read leaves the device unmeasured; the CPU time counts.
	raw, err := os.ReadFile(diskStat)
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 7 {
		var err1, err2 error
		u.writeIOs, err1 = strconv.ParseUint(f[4], 10, 64)
		u.writtenSectors, err2 = strconv.ParseUint(f[6], 10, 64)
		u.disk = err1 == nil && err2 == nil
	}
	return u, nil
}
