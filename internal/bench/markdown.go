package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The targets of docs/design.md §8 that a run of the bench measures, as
// the table of WriteMarkdown states them.
const (
	targetContextP50Ms  = 1.0  // 300-field read, p50
	targetContextP99Ms  = 3.0  // 300-field read, p99
	targetReadsPerSec   = 5000 // read throughput, receipts durable
	targetProposePerSec = 2000 // durable proposals, many clients
	targetWrite1PerSec  = 1000 // owner writes at 1 client
	targetWriteNPerSec  = 5000 // owner writes at 16 clients
	targetWriteClients  = 16
	targetRestartMs     = 2000 // open after the KDF, at 1,000,000 claims
	targetIdleAnonMiB   = 500  // RSS at 1,000,000 claims
	targetBigVault      = 1_000_000
	targetGrowthBytes   = 1024 // store growth per repeated 300-field read
	targetReadRatio     = 1.5  // read p50 at 1M claims over at 300
	targetVersusOther   = 5.0  // phc's context300 over pvault's
)

// WriteMarkdown writes the report's figures against the targets of
// docs/design.md §8 as a Markdown table: one row per figure and vault
// size, with the target and a verdict. A verdict is given only where the
// run measured what the target names (its vault size, its number of
// clients); elsewhere it is "—". BENCHMARKS.md's table of current figures
// is this output.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured with `%s` on %s.\n\n", r.command(), markdownMachine(r.Machine))
	b.WriteString("| figure | claims | measured | target | verdict |\n|---|---|---|---|---|\n")
	row := func(figure string, claims int, measured, target, verdict string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", figure, group(claims), measured, target, verdict)
	}
	var at300 *Workload
	for _, s := range r.Sizes {
		if s.Claims == ReadSet {
			at300 = s.workload("context300", 1)
		}
	}
	var notes []string
	for _, s := range r.Sizes {
		n := s.Claims
		if x := s.workload("context300", 1); x != nil {
			v := "—"
			if n == ReadSet {
				v = verdict(x.P50Ms < targetContextP50Ms && x.P99Ms < targetContextP99Ms)
			}
			row("authorized `GET /context/context`, 300 fields, 1 client: p50 / p99", n,
				fmt.Sprintf("%.3f / %.3f ms", x.P50Ms, x.P99Ms), "p50 < 1 ms, p99 < 3 ms (300 claims)", v)
			if at300 != nil && n > ReadSet {
				ratio := x.P50Ms / at300.P50Ms
				v := "—"
				if n >= targetBigVault {
					v = verdict(ratio <= targetReadRatio)
				}
				row("… its p50 over the p50 at 300 claims", n, fmt.Sprintf("%.2f×", ratio), "≤ 1.5× (1,000,000 claims)", v)
			}
		}
		for _, c := range []struct{ name, figure string }{
			{"field1", "read throughput, receipts durable: one field a read"},
			{"context300", "read throughput, receipts durable: 300 fields a read"},
		} {
			if x := s.widest(c.name); x != nil && x.Clients > 1 {
				row(fmt.Sprintf("%s, %d clients", c.figure, x.Clients), n, perSec(x), "≥ 5,000 req/s", verdict(x.ReqPerSec >= targetReadsPerSec))
			}
		}
		if x := s.widest("propose"); x != nil {
			row(fmt.Sprintf("`POST /phc/v1/proposals` durable, %d clients", x.Clients), n, perSec(x), "≥ 2,000/s", verdict(x.ReqPerSec >= targetProposePerSec))
		}
		if x := s.workload("owner-write", 1); x != nil {
			row("owner writes, 1 client", n, perSec(x), "≥ 1,000/s", verdict(x.ReqPerSec >= targetWrite1PerSec))
		}
		for _, name := range []string{"owner-write", "owner-sustain"} {
			x := s.widest(name)
			if x == nil || x.Clients == 1 {
				continue
			}
			v := "—"
			if x.Clients == targetWriteClients {
				v = verdict(x.ReqPerSec >= targetWriteNPerSec)
			}
			figure := fmt.Sprintf("owner writes, %d clients", x.Clients)
			if name == "owner-sustain" {
				figure += fmt.Sprintf(", sustained %s", time.Duration(r.Config.SustainS*float64(time.Second)))
			}
			row(figure, n, perSec(x), "≥ 5,000/s at 16 clients", v)
		}
		if x := s.workload("traverse", 1); x != nil {
			graph := "the bench's graph"
			if s.Traverse != nil {
				graph = fmt.Sprintf("%d edges", s.Traverse.Edges)
			}
			row("permission-checked 3-hop traversal, 1 client: p50 / p99", n,
				fmt.Sprintf("%.3f / %.3f ms (%s)", x.P50Ms, x.P99Ms, graph), "p95 ≤ 5 ms (100k-claim graph)", "— (another graph)")
		}
		if rs := s.lastRestart(); rs != nil {
			row("restart: process start to the first read, after the KDF", n, fmt.Sprintf("%.0f ms", rs.ReadyMs-rs.KDFMs),
				"≤ 2 s (1,000,000 claims)", bigVerdict(n, rs.ReadyMs-rs.KDFMs <= targetRestartMs))
			if rs.IdleMem != nil {
				row("idle RSS after the restart, anonymous", n, fmt.Sprintf("%.1f MiB", rs.IdleMem.AnonMiB),
					"≤ 500 MB (1,000,000 claims)", bigVerdict(n, rs.IdleMem.AnonMiB <= targetIdleAnonMiB))
			}
		}
		if g := s.Growth; g != nil {
			row(fmt.Sprintf("store growth per repeated 300-field read (%s reads)", group(g.Reads)), n,
				fmt.Sprintf("%.0f B", g.UsedBytesPerRead), "≤ 1 KiB", verdict(g.UsedBytesPerRead <= targetGrowthBytes))
		}
		for _, x := range s.Workloads {
			if x.Errors > 0 {
				notes = append(notes, fmt.Sprintf("%s ×%d at %s claims: %s errors of %s requests", x.Name, x.Clients, group(n), group(x.Errors), group(x.Requests)))
			}
		}
	}
	if c := r.Compare; c != nil {
		for _, cr := range c.Rows {
			row(fmt.Sprintf("%s against %s, %s (medians of %d rounds)", cr.Workload, c.Other.Name, clients(cr.Clients), c.Rounds), ReadSet,
				fmt.Sprintf("%.2f× (%s against %s req/s)", cr.Ratio.ReqPerSec, group(int(cr.PHCMedian.ReqPerSec+0.5)), group(int(cr.OtherMedian.ReqPerSec+0.5))),
				"≥ 5×", verdict(cr.Ratio.ReqPerSec >= targetVersusOther))
		}
	}
	var loads []string
	for _, s := range r.Sizes {
		if s.LoadAvg != "" {
			loads = append(loads, fmt.Sprintf("%s at %s claims", s.LoadAvg, group(s.Claims)))
		}
	}
	if len(loads) > 0 {
		fmt.Fprintf(&b, "\nLoad average when each size began: %s.\n", strings.Join(loads, "; "))
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "\nNote: %s.\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// command is the phc bench command line that makes a run like r.
func (r *Report) command() string {
	c := r.Config
	var sizes []string
	for _, n := range c.Sizes {
		sizes = append(sizes, strconv.Itoa(n))
	}
	s := "phc bench"
	if len(sizes) > 0 {
		s += " --claims " + strings.Join(sizes, ",")
	}
	s += " --duration " + time.Duration(c.DurationS*float64(time.Second)).String()
	if c.Clients != 16 {
		s += " --clients " + strconv.Itoa(c.Clients)
	}
	s += " --growth " + strconv.Itoa(c.Growth)
	if c.SustainS > 0 {
		s += " --sustain " + time.Duration(c.SustainS*float64(time.Second)).String()
	}
	if r.Compare != nil {
		s += " --pvault …"
	}
	return s + " --markdown"
}

// markdownMachine is the machine in one line, without the daemon's path.
func markdownMachine(m Machine) string {
	s := fmt.Sprintf("%d cores (%s), %s", m.CPUs, m.CPU, m.OS)
	if m.Kernel != "" {
		s += ", kernel " + m.Kernel
	}
	s += ", bench " + m.GoVersion
	if m.DaemonGo != "" {
		s += ", daemon " + m.DaemonGo
		if m.DaemonRev != "" {
			s += " at " + m.DaemonRev
		}
	}
	return s + ", " + m.Time.Format(time.RFC3339)
}

// workload is the run of name at clients, or nil.
func (s *Size) workload(name string, clients int) *Workload {
	for i := range s.Workloads {
		if x := &s.Workloads[i]; x.Name == name && x.Clients == clients {
			return x
		}
	}
	return nil
}

// widest is the run of name with the most clients, or nil.
func (s *Size) widest(name string) *Workload {
	var out *Workload
	for i := range s.Workloads {
		if x := &s.Workloads[i]; x.Name == name && (out == nil || x.Clients > out.Clients) {
			out = x
		}
	}
	return out
}

// lastRestart is the size's last restart whose KDF the daemon logged, or
// nil.
func (s *Size) lastRestart() *Restart {
	for i := len(s.Restarts) - 1; i >= 0; i-- {
		if s.Restarts[i].KDFMs >= 0 {
			return &s.Restarts[i]
		}
	}
	return nil
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**not met**"
}

// bigVerdict is the verdict on a target of the 1,000,000-claim vault: given
// at that size, and below it only when the figure already misses it.
func bigVerdict(claims int, met bool) string {
	if claims >= targetBigVault || !met {
		return verdict(met)
	}
	return "—"
}

func clients(n int) string {
	if n == 1 {
		return "1 client"
	}
	return strconv.Itoa(n) + " clients"
}

func perSec(x *Workload) string { return group(int(x.ReqPerSec+0.5)) + "/s" }

// group writes n with thousands separated by commas.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
