package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// CompareConfig is the comparison with another PCP server: pvault (the PCP
// reference implementation) started by the bench, or a server already
// running. Exactly one of PVault and Target is set.
type CompareConfig struct {
	// PVault is the pvault binary: the bench runs `PVault init` (on a
	// pseudo-terminal, Linux only) and `PVault serve --password-stdin`
	// with VAULT_DIR (a fresh dir) and VAULT_PORT (a free loopback port).
	PVault string
	// Target is the base URL of a running PCP server, and TokenFile a file
	// holding its owner's session token (pvault's: $VAULT_DIR/.session).
	Target    string
	TokenFile string
	// Rounds is how many times each side runs each workload (0: 5).
	Rounds int
}

// Comparison is the figures of the comparison: context300 on two fresh
// 300-field vaults, phc's and the other server's, interleaved round by
// round.
type Comparison struct {
	Workload     string       `json:"workload"`
	Rounds       int          `json:"rounds"`
	DurationS    float64      `json:"duration_s"`
	WarmupS      float64      `json:"warmup_s"`
	LoadAvgStart string       `json:"loadavg_start,omitempty"`
	LoadAvgEnd   string       `json:"loadavg_end,omitempty"`
	PHC          CompareSide  `json:"phc"`
	Other        CompareSide  `json:"other"`
	Rows         []CompareRow `json:"rows"`
}

// CompareSide is one server of the comparison.
type CompareSide struct {
	Name   string `json:"name"`
	Server string `json:"server"` // the binary, or the URL
	Routes string `json:"routes"` // /context/… or /vault/…
	// Owner is how the bench got the owner's session, Reader how the
	// reader's read token.
	Owner  string `json:"owner"`
	Reader string `json:"reader"`
	// InitMs is pvault init (one Argon2id and the store), ReadyMs from
	// the start of pvault serve to its first unlocked status, UnlockMs
	// the owner's POST …/unlock.
	InitMs        float64  `json:"init_ms,omitempty"`
	ReadyMs       float64  `json:"ready_ms,omitempty"`
	UnlockMs      float64  `json:"unlock_ms,omitempty"`
	SeedSeconds   float64  `json:"seed_seconds"`
	SeedRetries   int      `json:"seed_retries,omitempty"`
	ContextFields int      `json:"context_fields"`
	ContextBytes  int      `json:"context_bytes"`
	StatusFields  int      `json:"status_fields,omitempty"`
	MemAfterSeed  *Mem     `json:"mem_after_seed,omitempty"`
	MemAfter      *Mem     `json:"mem_after,omitempty"` // after the rounds
	DataDir       string   `json:"data_dir,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// CompareRow is one workload at one number of clients: every round of
// each side, their medians, and phc's median over the other's.
type CompareRow struct {
	Workload    string     `json:"workload"`
	Clients     int        `json:"clients"`
	PHC         []Workload `json:"phc"`
	Other       []Workload `json:"other"`
	PHCMedian   Median     `json:"phc_median"`
	OtherMedian Median     `json:"other_median"`
	// Ratio is phc's median over the other's: above 1 in req/s, below 1
	// in latency, is phc ahead.
	Ratio Median `json:"ratio"`
}

// Median is the medians of a side's rounds (or their ratio).
type Median struct {
	ReqPerSec float64 `json:"req_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	Errors    int     `json:"errors"` // all rounds'
}

// compare runs the comparison of cfg.Compare.
func compare(ctx context.Context, cfg Config) (c *Comparison, err error) {
	cc := cfg.Compare
	if cc.Rounds <= 0 {
		cc.Rounds = 5
	}
	c = &Comparison{Workload: "context300", Rounds: cc.Rounds, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		LoadAvgStart: loadAvg()}
	c.PHC = CompareSide{Name: "phc", Server: describeBin(cfg.Bin), Routes: "/context/…",
		Reader: fmt.Sprintf("consumer %s, a read grant on work.* for purpose %s, a token of scope * (the bench's reader)", readerName, readPurpose)}
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "phc bench: compare: %s\n", fmt.Sprintf(format, args...))
	}

	// phc: a fresh 300-claim vault, as the bench's 300-claim size has it.
	r := &runner{cfg: cfg, size: &Size{Claims: ReadSet}}
	cleanup, err := r.makeDir()
	if err != nil {
		return c, err
	}
	defer func() {
		cleanup()
		c.PHC.Notes = append(c.PHC.Notes, r.size.Notes...)
	}()
	if err := r.open(ctx); err != nil {
		return c, fmt.Errorf("phc: %w", err)
	}
	c.PHC.Owner = "the session the daemon wrote at its start"
	c.PHC.SeedSeconds, c.PHC.ContextFields, c.PHC.ContextBytes = r.size.SeedSeconds, r.size.ContextFields, r.size.ContextBytes
	c.PHC.StatusFields, c.PHC.MemAfterSeed, c.PHC.DataDir = r.size.StatusFields, r.size.MemAfterSeed, r.size.DataDir

	// The other: a fresh pvault vault, or the target.
	var o *pcpServer
	if cc.PVault != "" {
		c.Other = CompareSide{Name: "pvault", Server: describeBin(cc.PVault)}
		root, err := os.MkdirTemp(cfg.TempDir, "phc-bench-pvault-")
		if err != nil {
			return c, err
		}
		if cfg.Keep {
			c.Other.DataDir = root
		} else {
			defer os.RemoveAll(root)
		}
		progress("starting pvault (init on a pseudo-terminal, then serve)")
		if o, err = startPVault(ctx, cc.PVault, filepath.Join(root, "vault"), &c.Other); err != nil {
			return c, err
		}
	} else {
		c.Other = CompareSide{Name: "target", Server: cc.Target}
		if o, err = targetServer(ctx, cc.Target, cc.TokenFile, &c.Other); err != nil {
			return c, err
		}
	}
	defer func() {
		if cerr := o.close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: %w", c.Other.Name, cerr)
		}
	}()
	if err := o.prepare(ctx); err != nil {
		return c, fmt.Errorf("%s: %w", c.Other.Name, err)
	}
	c.Other.MemAfterSeed = o.mem()
	progress("%s seeded in %.1fs; its reader's context holds %d fields", c.Other.Name, c.Other.SeedSeconds, c.Other.ContextFields)

	// The rounds: each round runs every workload on both sides, one after
	// the other, the side that goes first alternating from round to round.
	sides := [2]struct {
		rows func(*CompareRow) *[]Workload
		url  string
		tok  string
	}{
		{func(x *CompareRow) *[]Workload { return &x.PHC }, r.d.base + "/context/context", r.s.reader},
		{func(x *CompareRow) *[]Workload { return &x.Other }, o.base + o.prefix + "/context", o.reader},
	}
	names := [2]string{"phc", c.Other.Name}
	clients := []int{1}
	if cfg.Clients > 1 {
		clients = append(clients, cfg.Clients)
	}
	c.Rows = make([]CompareRow, len(clients))
	for i, n := range clients {
		c.Rows[i] = CompareRow{Workload: c.Workload, Clients: n}
	}
	for round := range cc.Rounds {
		for i, n := range clients {
			for j := range 2 {
				k := (j + round) % 2
				w := load{name: c.Workload, clients: n, warmup: cfg.Warmup, duration: cfg.Duration,
					newClient: getURL(ctx, sides[k].url, sides[k].tok)}.run(ctx)
				rows := sides[k].rows(&c.Rows[i])
				*rows = append(*rows, w)
				progress("round %d/%d %-7s %s ×%-3d %8.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d",
					round+1, cc.Rounds, names[k], c.Workload, n, w.ReqPerSec, w.P50Ms, w.P99Ms, w.Errors)
			}
		}
		if err := ctx.Err(); err != nil {
			return c, err
		}
	}
	for i := range c.Rows {
		c.Rows[i].summarize()
	}
	c.PHC.MemAfter, c.Other.MemAfter = r.mem(), o.mem()
	c.LoadAvgEnd = loadAvg()
	if _, err := r.d.stop(); err != nil {
		r.d = nil
		return c, fmt.Errorf("phc: %w", err)
	}
	r.d = nil
	return c, nil
}

// describeBin is a binary's path with the Go version and revision it was
// built with.
func describeBin(bin string) string {
	if p, err := exec.LookPath(bin); err == nil {
		bin = p
	}
	gov, rev := binInfo(bin)
	switch {
	case gov != "" && rev != "":
		return fmt.Sprintf("%s (%s, %s)", bin, gov, rev)
	case gov != "":
		return fmt.Sprintf("%s (%s)", bin, gov)
	}
	return bin
}

// summarize sets the medians of the rounds and their ratio.
func (x *CompareRow) summarize() {
	x.PHCMedian, x.OtherMedian = medians(x.PHC), medians(x.Other)
	x.Ratio = Median{
		ReqPerSec: ratio(x.PHCMedian.ReqPerSec, x.OtherMedian.ReqPerSec),
		P50Ms:     ratio(x.PHCMedian.P50Ms, x.OtherMedian.P50Ms),
		P99Ms:     ratio(x.PHCMedian.P99Ms, x.OtherMedian.P99Ms),
	}
}

func medians(ws []Workload) Median {
	var m Median
	var rps, p50, p99 []float64
	for _, w := range ws {
		rps, p50, p99 = append(rps, w.ReqPerSec), append(p50, w.P50Ms), append(p99, w.P99Ms)
		m.Errors += w.Errors
	}
	m.ReqPerSec, m.P50Ms, m.P99Ms = median(rps), median(p50), median(p99)
	return m
}

// median is the middle value (the mean of the middle two for an even
// count; 0 for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// print writes the comparison as a side-by-side table and lines.
func (c *Comparison) print(w io.Writer) {
	other := c.Other.Name
	vaults := fmt.Sprintf("fresh %d-field vaults", ReadSet)
	if c.Other.Name == "target" {
		vaults = fmt.Sprintf("phc's vault fresh, the target's as it was plus the %d fields", ReadSet)
	}
	fmt.Fprintf(w, "\n== comparison: %s, phc vs %s, %s ==", c.Workload, other, vaults)
	if c.LoadAvgStart != "" {
		fmt.Fprintf(w, " (load average at the start: %s", c.LoadAvgStart)
		if c.LoadAvgEnd != "" {
			fmt.Fprintf(w, ", at the end: %s", c.LoadAvgEnd)
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	for _, s := range []*CompareSide{&c.PHC, &c.Other} {
		fmt.Fprintf(w, "%s: %s, routes %s\n", s.Name, s.Server, s.Routes)
		if s.Owner != "" {
			fmt.Fprintf(w, "  owner: %s", s.Owner)
			if s.UnlockMs > 0 {
				fmt.Fprintf(w, " (the unlock took %.0f ms)", s.UnlockMs)
			}
			fmt.Fprintln(w)
		}
		if s.InitMs > 0 {
			fmt.Fprintf(w, "  init %.0f ms; serve answered unlocked %.0f ms after its start\n", s.InitMs, s.ReadyMs)
		}
		if s.Reader != "" {
			fmt.Fprintf(w, "  reader: %s\n", s.Reader)
		}
		if s.ContextFields > 0 {
			fmt.Fprintf(w, "  seeded %d fields in %.2fs; the reader's context: %d fields, %d bytes", ReadSet, s.SeedSeconds, s.ContextFields, s.ContextBytes)
			if s.StatusFields > 0 {
				fmt.Fprintf(w, "; the owner's status counts %d fields", s.StatusFields)
			}
			fmt.Fprintln(w)
		}
		if s.MemAfterSeed != nil {
			fmt.Fprintf(w, "  RSS after seeding: %s", s.MemAfterSeed)
			if s.MemAfter != nil {
				fmt.Fprintf(w, "; after the rounds: %s", s.MemAfter)
			}
			fmt.Fprintln(w)
		}
		if s.DataDir != "" {
			fmt.Fprintf(w, "  data dir kept: %s\n", s.DataDir)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if len(c.Rows) == 0 || len(c.Rows[0].PHC) == 0 {
		return
	}
	fmt.Fprintf(w, "%d rounds, each workload %gs after a %gs warm-up on each side, interleaved (phc first in odd rounds, %s first in even); medians of the rounds:\n",
		c.Rounds, c.DurationS, c.WarmupS, other)
	o := shorten(other, 8)
	fmt.Fprintf(w, "%-10s %7s | %9s %8s %8s | %9s %8s %8s | %7s %7s %7s | %s\n", "workload", "clients",
		"phc req/s", "p50 ms", "p99 ms", o+" req/s", "p50 ms", "p99 ms", "req/s", "p50", "p99", "errors phc/"+o)
	for _, x := range c.Rows {
		fmt.Fprintf(w, "%-10s %7d | %9.0f %8.3f %8.3f | %9.0f %8.3f %8.3f | %6.2fx %6.2fx %6.2fx | %d/%d\n", x.Workload, x.Clients,
			x.PHCMedian.ReqPerSec, x.PHCMedian.P50Ms, x.PHCMedian.P99Ms,
			x.OtherMedian.ReqPerSec, x.OtherMedian.P50Ms, x.OtherMedian.P99Ms,
			x.Ratio.ReqPerSec, x.Ratio.P50Ms, x.Ratio.P99Ms, x.PHCMedian.Errors, x.OtherMedian.Errors)
	}
	fmt.Fprintf(w, "ratio = phc / %s: above 1x in req/s, below 1x in latency, phc is ahead\n", other)
	for _, x := range c.Rows {
		fmt.Fprintf(w, "req/s by round, ×%d: phc %s; %s %s\n", x.Clients, rounds(x.PHC), other, rounds(x.Other))
	}
	for _, x := range c.Rows {
		for _, s := range [][]Workload{x.PHC, x.Other} {
			for _, r := range s {
				if r.FirstError != "" {
					fmt.Fprintf(w, "  ×%d, first error: %s\n", x.Clients, r.FirstError)
					break
				}
			}
		}
	}
}

func rounds(ws []Workload) string {
	f := make([]string, len(ws))
	for i, w := range ws {
		f[i] = fmt.Sprintf("%.0f", w.ReqPerSec)
	}
	return strings.Join(f, " ")
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// validate checks a comparison's configuration.
func (cc *CompareConfig) validate() error {
	switch {
	case cc.PVault != "" && cc.Target != "":
		return errors.New("compare with pvault or with a target, not both")
	case cc.PVault == "" && cc.Target == "":
		return errors.New("compare with nothing: give pvault or a target")
	case cc.Target != "" && cc.TokenFile == "":
		return errors.New("a target needs the file of its owner's session token")
	}
	return nil
}
