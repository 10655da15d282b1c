package bench

import (
	"bufio"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Machine is where the figures were measured.
type Machine struct {
	CPUs      int       `json:"nproc"`
	CPU       string    `json:"cpu"`
	OS        string    `json:"os"`
	Kernel    string    `json:"kernel,omitempty"`
	GoVersion string    `json:"go_version"` // of the bench
	Daemon    string    `json:"daemon"`     // the binary
	DaemonGo  string    `json:"daemon_go,omitempty"`
	DaemonRev string    `json:"daemon_revision,omitempty"`
	Time      time.Time `json:"time"`
}

func machine(bin string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), CPU: cpuModel(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		GoVersion: runtime.Version(), Daemon: bin, Time: time.Now().UTC().Truncate(time.Second)}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	m.DaemonGo, m.DaemonRev = binInfo(bin)
	return m
}

// binInfo is the Go version and VCS revision a Go binary was built with
// ("" where it says none).
func binInfo(bin string) (goVersion, rev string) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", ""
	}
	var modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && modified == "true" {
		rev += "+modified"
	}
	return info.GoVersion, rev
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// String is the machine line.
func (m Machine) String() string {
	s := fmt.Sprintf("machine: nproc %d, cpu %q, %s", m.CPUs, m.CPU, m.OS)
	if m.Kernel != "" {
		s += ", kernel " + m.Kernel
	}
	s += fmt.Sprintf(", bench %s; daemon %s", m.GoVersion, m.Daemon)
	if m.DaemonGo != "" {
		s += " (" + m.DaemonGo
		if m.DaemonRev != "" {
			s += ", " + m.DaemonRev
		}
		s += ")"
	}
	return s + ", " + m.Time.Format(time.RFC3339)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// print writes the figures of one size as a plain table and lines.
func (s *Size) print(w io.Writer) {
	fmt.Fprintf(w, "\n== %d claims ==", s.Claims)
	if s.LoadAvg != "" {
		fmt.Fprintf(w, " (load average at the start: %s)", s.LoadAvg)
	}
	fmt.Fprintln(w)
	if s.SeedSeconds > 0 {
		fmt.Fprintf(w, "seeding: %d claims in %.1fs (%.0f claims/s; proposals confirmed %s)\n",
			s.Claims, s.SeedSeconds, s.SeedPerSec, s.Confirm)
	}
	if s.ContextFields > 0 {
		fmt.Fprintf(w, "verify: the reader's GET /context/context returned %d fields (%d bytes); the owner's status counts %d fields\n",
			s.ContextFields, s.ContextBytes, s.StatusFields)
	}
	if len(s.Workloads) > 0 {
		fmt.Fprintf(w, "%-13s %7s %9s %9s %9s %9s %7s %11s %11s %11s\n", "workload", "clients", "requests", "req/s", "p50 ms", "p99 ms", "errors", "cpu µs/req", "disk KB/req", "disk wr/req")
		for _, x := range s.Workloads {
			fmt.Fprintf(w, "%-13s %7d %9d %9.0f %9.3f %9.3f %7d %11.0f %11.1f %11.2f\n", x.Name, x.Clients, x.Requests, x.ReqPerSec, x.P50Ms, x.P99Ms, x.Errors, x.CPUUsPerReq, x.DiskKBPerReq, x.DiskIOsPerReq)
		}
		for _, x := range s.Workloads {
			if x.FirstError != "" {
				fmt.Fprintf(w, "  %s ×%d, first error: %s\n", x.Name, x.Clients, x.FirstError)
			}
		}
	}
	if s.MemAfterSeed != nil {
		fmt.Fprintf(w, "memory after seeding: RSS %s\n", s.MemAfterSeed)
	}
	if s.KDFMs > 0 {
		fmt.Fprintf(w, "KDF: one vault unlock (Argon2id) alone takes %.0f ms (fastest of %d, in the bench's process), part of every restart\n", s.KDFMs, kdfRuns)
	}
	for _, r := range s.Restarts {
		fmt.Fprintf(w, "restart after %s: %.0f ms from process start to %s", r.After, r.ReadyMs, r.Probe)
		if r.ServingLogMs > 0 {
			fmt.Fprintf(w, " (\"phc serving\" logged at %.0f ms)", r.ServingLogMs)
		}
		if r.KDFMs >= 0 && r.LoadMs >= 0 {
			fmt.Fprintf(w, "; the daemon's KDF %.0f ms, then its load %.0f ms: %.0f ms after the KDF", r.KDFMs, r.LoadMs, r.ReadyMs-r.KDFMs)
		}
		fmt.Fprintf(w, "; stop took %.0f ms; idle RSS %s\n", r.StopMs, r.IdleMem)
	}
	if g := s.Growth; g != nil {
		fmt.Fprintf(w, "growth: %d sequential context300 reads (p50 %.3f ms, p99 %.3f ms, errors %d): "+
			"phc.db used %+d B (%.0f B/read), file %+d B (%.0f B/read); graph.db file %+d B; RSS anon %s → %s\n",
			g.Reads, g.P50Ms, g.P99Ms, g.Errors,
			g.After.UsedBytes-g.Before.UsedBytes, g.UsedBytesPerRead, g.After.FileBytes-g.Before.FileBytes, g.FileBytesPerRead,
			g.GraphAfter.FileBytes-g.GraphBefore.FileBytes, anon(g.MemBefore), anon(g.MemAfter))
	}
	if t := s.Traverse; t != nil {
		fmt.Fprintf(w, "traverse: %d entities, %d relationships; the owner's depth-3 traversal from self returns %d edges\n",
			t.Entities, t.Relationships, t.Edges)
	}
	if s.Store.FileBytes > 0 {
		fmt.Fprintf(w, "store at the end: phc.db %.1f MiB (used %.1f MiB) and its log %.1f MiB, graph.db %.1f MiB (used %.1f MiB)\n",
			mib(s.Store.FileBytes), mib(s.Store.UsedBytes), mib(s.Store.LogBytes), mib(s.Graph.FileBytes), mib(s.Graph.UsedBytes))
	}
	if s.DataDir != "" {
		fmt.Fprintf(w, "data dir kept: %s\n", s.DataDir)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func anon(m *Mem) string {
	if m == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", m.AnonMiB)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// loadAvg is the 1, 5 and 15-minute load averages of /proc/loadavg, or "".
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
