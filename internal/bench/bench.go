package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/vault"
)

// Config is one run of the bench.
type Config struct {
	// Bin is the phc binary run as the daemon (`Bin serve …`).
	Bin string
	// Sizes are the vault sizes, in active claims; each at least ReadSet.
	Sizes []int
	// Duration is the measured length of each workload; Warmup the
	// unmeasured run before it (0: a fifth of Duration, at most a second).
	Duration time.Duration
	Warmup   time.Duration
	// Clients is the number of clients of the concurrent workloads.
	Clients int
	// Growth is the number of sequential context reads of the growth run
	// (0: none, and no second restart).
	Growth int
	// Sustain, when not 0, adds owner-sustain: owner-write at Clients
	// clients measured for Sustain, long enough for the disk's write-back
	// to weigh in (the short workloads end before it catches up).
	Sustain time.Duration
	// WriteKeys is the number of existing keys the owner-write workload
	// updates, every other write (the others make new keys); they are
	// written before it, untimed (0: 1000).
	WriteKeys int
	// Keep keeps the data dirs, under TempDir ("" : the system's).
	Keep    bool
	TempDir string
	// Out receives the figures; Progress the progress lines.
	Out      io.Writer
	Progress io.Writer
	// Compare, when set, adds a comparison with another PCP server after
	// the sizes (which may then be none).
	Compare *CompareConfig
}

// ParseSizes reads a comma-separated list of vault sizes ("300,30000").
func ParseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(f, "_", ""))
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < ReadSet || n > 10_000_000 {
			return nil, fmt.Errorf("vault size %q: want a whole number from %d to 10,000,000", f, ReadSet)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no vault size given")
	}
	return out, nil
}

// Report is every figure of a run.
type Report struct {
	Machine Machine `json:"machine"`
	Config  struct {
		Sizes     []int   `json:"sizes"`
		DurationS float64 `json:"duration_s"`
		WarmupS   float64 `json:"warmup_s"`
		Clients   int     `json:"clients"`
		Growth    int     `json:"growth_reads"`
		WriteKeys int     `json:"write_keys"`
		SustainS  float64 `json:"sustain_s,omitempty"`
	} `json:"config"`
	Sizes   []*Size     `json:"sizes"`
	Compare *Comparison `json:"compare,omitempty"`
}

// Size is the figures of one vault size.
type Size struct {
	Claims      int     `json:"claims"`
	SeedSeconds float64 `json:"seed_seconds"`
	SeedPerSec  float64 `json:"seed_claims_per_sec"`
	Confirm     string  `json:"confirm"` // bulk, or one by one
	// LoadAvg is the machine's load average when the size began: figures
	// taken while other work ran are not comparable.
	LoadAvg string `json:"loadavg,omitempty"`
	// ContextFields is what the reader's GET /context/context returned
	// after seeding (must be ReadSet), and ContextBytes its size.
	ContextFields int         `json:"context_fields"`
	ContextBytes  int         `json:"context_bytes"`
	StatusFields  int         `json:"status_fields"` // the owner's field count
	Workloads     []Workload  `json:"workloads"`
	MemAfterSeed  *Mem        `json:"mem_after_seed,omitempty"`
	KDFMs         float64     `json:"kdf_ms"`
	Restarts      []Restart   `json:"restarts"`
	Growth        *Growth     `json:"growth,omitempty"`
	Traverse      *GraphSetup `json:"traverse,omitempty"`
	// Store and Graph are phc.db and graph.db at the end.
	Store   Store    `json:"store"`
	Graph   Store    `json:"graph"`
	DataDir string   `json:"data_dir,omitempty"` // when kept
	Notes   []string `json:"notes,omitempty"`
}

// Restart is one restart of the daemon.
type Restart struct {
	After  string  `json:"after"`
	StopMs float64 `json:"stop_ms"`
	// ReadyMs is from the process start to the first authorized answer
	// (Probe): the KDF included.
	ReadyMs float64 `json:"ready_ms"`
	Probe   string  `json:"probe"`
	// ServingLogMs is from the process start to its "phc serving" log
	// line (0 if it logged none).
	ServingLogMs float64 `json:"serving_log_ms,omitempty"`
	// KDFMs and LoadMs are the daemon's own logged key derivation and
	// load of the view at this unlock (-1 if it logged none: an older
	// build); ReadyMs less KDFMs is the restart "after the KDF".
	KDFMs   float64 `json:"kdf_ms"`
	LoadMs  float64 `json:"load_ms"`
	IdleMem *Mem    `json:"idle_mem,omitempty"`
}

// Growth is the store's growth over sequential 300-field reads.
type Growth struct {
	Reads            int     `json:"reads"`
	P50Ms            float64 `json:"p50_ms"`
	P99Ms            float64 `json:"p99_ms"`
	Errors           int     `json:"errors"`
	Before           Store   `json:"store_before"`
	After            Store   `json:"store_after"`
	GraphBefore      Store   `json:"graph_before"`
	GraphAfter       Store   `json:"graph_after"`
	FileBytesPerRead float64 `json:"file_bytes_per_read"`
	UsedBytesPerRead float64 `json:"used_bytes_per_read"`
	MemBefore        *Mem    `json:"mem_before,omitempty"`
	MemAfter         *Mem    `json:"mem_after,omitempty"`
}

// GraphSetup is the traverse workload's graph.
type GraphSetup struct {
	Entities      int `json:"entities"`
	Relationships int `json:"relationships"`
	Edges         int `json:"edges_depth3"` // what the owner's depth-3 traversal returns
}

// Run runs the bench at every size of cfg and prints the figures as it
// goes. It returns the report so far with any error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Clients < 1 {
		cfg.Clients = 1
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = min(time.Second, cfg.Duration/5)
	}
	if cfg.WriteKeys <= 0 {
		cfg.WriteKeys = 1000
	}
	rep := &Report{Machine: machine(cfg.Bin)}
	rep.Config.Sizes, rep.Config.Clients, rep.Config.Growth, rep.Config.WriteKeys = cfg.Sizes, cfg.Clients, cfg.Growth, cfg.WriteKeys
	rep.Config.SustainS = cfg.Sustain.Seconds()
	rep.Config.DurationS, rep.Config.WarmupS = cfg.Duration.Seconds(), cfg.Warmup.Seconds()
	fmt.Fprintln(cfg.Out, rep.Machine)
	fmt.Fprintf(cfg.Out, "config: each workload %v after a %v warm-up, closed loop, one keep-alive connection per client; "+
		"the reader's token has scope * and a read grant on work.* (purpose %s)\n", cfg.Duration, cfg.Warmup, readPurpose)
	if cfg.Compare != nil {
		if err := cfg.Compare.validate(); err != nil {
			return rep, err
		}
	}
	for _, n := range cfg.Sizes {
		r := &runner{cfg: cfg, size: &Size{Claims: n, LoadAvg: loadAvg()}}
		err := r.run(ctx)
		rep.Sizes = append(rep.Sizes, r.size)
		r.size.print(cfg.Out)
		if err != nil {
			return rep, fmt.Errorf("%d claims: %w", n, err)
		}
	}
	if cfg.Compare != nil {
		c, err := compare(ctx, cfg)
		rep.Compare = c
		c.print(cfg.Out)
		if err != nil {
			return rep, fmt.Errorf("comparison: %w", err)
		}
	}
	return rep, nil
}

// runner runs the bench at one size.
type runner struct {
	cfg  Config
	size *Size
	dir  string // the data dir
	pw   string
	d    *daemon
	s    *session
	// seq numbers the keys the write workloads make, across runs.
	seq atomic.Int64
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "phc bench: %d claims: %s\n", r.size.Claims, fmt.Sprintf(format, args...))
}

func (r *runner) run(ctx context.Context) (err error) {
	cleanup, err := r.makeDir()
	if err != nil {
		return err
	}
	defer cleanup()
	if err := r.open(ctx); err != nil {
		return err
	}

	// Reads.
	ctxPath, fieldPath := "/context/context", "/context/fields/work.f000"
	r.workload(ctx, "context300", 1, r.get(ctx, ctxPath, r.s.reader))
	r.workload(ctx, "context300", r.cfg.Clients, r.get(ctx, ctxPath, r.s.reader))
	r.workload(ctx, "field1", 1, r.get(ctx, fieldPath, r.s.reader))
	r.workload(ctx, "field1", r.cfg.Clients, r.get(ctx, fieldPath, r.s.reader))

	// Restart, and the KDF alone.
	if err := r.restart(ctx, "the read workloads"); err != nil {
		return err
	}
	if r.size.KDFMs, err = kdf(r.dir, r.pw); err != nil {
		r.size.Notes = append(r.size.Notes, fmt.Sprintf("KDF not measured: %v", err))
	}

	// Growth.
	if r.cfg.Growth > 0 {
		if err := r.growth(ctx, ctxPath); err != nil {
			return err
		}
		if err := r.restart(ctx, "the growth run"); err != nil {
			return err
		}
	}

	// Writes, last: they add claims and proposals.
	start := time.Now()
	if err := r.precreate(ctx); err != nil {
		return err
	}
	r.progress("wrote the %d existing keys of owner-write in %.1fs", r.cfg.WriteKeys, time.Since(start).Seconds())
	r.workload(ctx, "owner-write", 1, r.ownerWrite(ctx))
	r.workload(ctx, "owner-write", r.cfg.Clients, r.ownerWrite(ctx))
	if r.cfg.Sustain > 0 {
		r.workloadFor(ctx, "owner-sustain", r.cfg.Clients, r.cfg.Sustain, r.ownerWrite(ctx))
	}
	r.workload(ctx, "propose", r.cfg.Clients, r.propose(ctx))

	// Traversal.
	start = time.Now()
	g, err := r.s.seedGraph(ctx)
	if err != nil {
		return fmt.Errorf("graph setup: %w", err)
	}
	r.progress("made the graph in %.1fs", time.Since(start).Seconds())
	r.size.Traverse = g
	r.workload(ctx, "traverse", 1, r.get(ctx, "/phc/v1/graph/neighbors/self?depth=3&limit=500", r.s.owner))

	r.size.Store, _ = readStore(filepath.Join(r.dir, "phc.db"))
	r.size.Graph, _ = readStore(filepath.Join(r.dir, "graph.db"))
	_, err = r.d.stop()
	r.d = nil
	return err
}

// makeDir makes the run's data dir; cleanup ends the daemon and removes
// the dir unless it is kept.
func (r *runner) makeDir() (cleanup func(), err error) {
	root, err := os.MkdirTemp(r.cfg.TempDir, "phc-bench-")
	if err != nil {
		return nil, err
	}
	r.dir, r.pw = filepath.Join(root, "data"), randomText(24)
	if r.cfg.Keep {
		// A kept vault is a throwaway one: its password goes beside it,
		// so that PHC_PASSWORD=$(cat DIR/password) phc serve --data DIR/data
		// opens it again.
		r.size.DataDir = root
		if err := os.WriteFile(filepath.Join(root, "password"), []byte(r.pw), 0o600); err != nil {
			return nil, err
		}
	}
	return func() {
		if r.d != nil {
			r.d.kill()
		}
		if r.s != nil {
			r.s.api.close()
			r.size.Notes = append(r.size.Notes, r.s.notes...)
		}
		if !r.cfg.Keep {
			os.RemoveAll(root)
		}
	}, nil
}

// open starts the daemon on a new vault, registers the bench's consumers,
// seeds the vault and verifies it.
func (r *runner) open(ctx context.Context) (err error) {
	// First start: the daemon creates the vault and unlocks it.
	if r.d, err = startDaemon(r.cfg.Bin, r.dir, r.pw); err != nil {
		return err
	}
	probe := readyClient()
	defer probe.CloseIdleConnections()
	if _, err := r.d.waitReady(ctx, 2*time.Minute, func() (bool, error) { return unlocked(ctx, probe, r.d.base, "") }); err != nil {
		return err
	}
	owner, err := r.d.ownerToken()
	if err != nil {
		return err
	}
	r.s = &session{api: newAPI(r.d.base), owner: owner}
	if err := r.s.setup(ctx); err != nil {
		return fmt.Errorf("setup: %w", err)
	}

	// Seeding.
	start := time.Now()
	if err := r.s.seed(ctx, r.size.Claims, r.cfg.Progress); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	r.size.SeedSeconds = time.Since(start).Seconds()
	r.size.SeedPerSec = float64(r.size.Claims) / r.size.SeedSeconds
	r.size.Confirm = r.s.confirm
	r.progress("seeded in %.1fs (%.0f claims/s, confirmed %s)", r.size.SeedSeconds, r.size.SeedPerSec, r.s.confirm)
	if err := r.verify(ctx); err != nil {
		return err
	}
	r.settle(ctx, "seeding")
	r.size.MemAfterSeed = r.mem()
	return nil
}

// errLocked is a status that says locked.
var errLocked = errors.New("the vault is locked")

// unlocked reports whether GET /context/status answers and says unlocked.
func unlocked(ctx context.Context, cl *http.Client, base, token string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/context/status", nil)
	if err != nil {
		return false, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var st struct {
		Locked     bool `json:"locked"`
		FieldCount *int `json:"field_count"`
	}
	if resp.StatusCode != 200 {
		return false, fmt.Errorf("GET /context/status = %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return false, err
	}
	if st.Locked {
		return false, errLocked
	}
	return token == "" || st.FieldCount != nil, nil
}

// verify checks that the owner's status counts every claim and that the
// reader's context holds exactly the read set.
func (r *runner) verify(ctx context.Context) error {
	st, err := r.s.as(r.s.owner).Status(ctx)
	if err != nil {
		return err
	}
	if st.FieldCount != nil {
		r.size.StatusFields = *st.FieldCount
	}
	status, raw, err := r.s.api.send(ctx, "GET", "/context/context", r.s.reader, nil)
	if err != nil || status != 200 {
		return fmt.Errorf("the reader's GET /context/context = %d %s, %v", status, snippet(raw, 300), err)
	}
	var bundle struct {
		Categories map[string][]struct {
			ID string `json:"id"`
		} `json:"categories"`
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		return fmt.Errorf("the reader's GET /context/context: %w", err)
	}
	n := 0
	for cat, fs := range bundle.Categories {
		if cat != "work" {
			return fmt.Errorf("the reader's GET /context/context shows category %q: it may read work.* only", cat)
		}
		n += len(fs)
	}
	r.size.ContextFields, r.size.ContextBytes = n, len(raw)
	if n != ReadSet {
		return fmt.Errorf("the reader's GET /context/context returned %d fields; want exactly %d", n, ReadSet)
	}
	if r.size.StatusFields != r.size.Claims {
		return fmt.Errorf("the owner's GET /context/status counts %d fields; want %d", r.size.StatusFields, r.size.Claims)
	}
	return nil
}

// settle waits, at most settleLimit, until the daemon is idle: it used
// less than a tenth of a core over settleWindow. What it does on its own
// after a bulk of writes or an unlock (a snapshot of the claim metas,
// collecting the load's garbage) then does not fall into the next
// measurement; a wait over a second is noted in the report.
func (r *runner) settle(ctx context.Context, after string) {
	const settleWindow, settleLimit = 500 * time.Millisecond, 3 * time.Minute
	start := time.Now()
	prev, err := cpuTicks(r.d.pid())
	if err != nil {
		return // no /proc: nothing to watch
	}
	for time.Since(start) < settleLimit && ctx.Err() == nil {
		time.Sleep(settleWindow)
		now, err := cpuTicks(r.d.pid())
		if err != nil {
			return
		}
		// Clock ticks are hundredths of a second on Linux: a tenth of a
		// core over the window is 5 ticks.
		if now-prev < uint64(settleWindow/(100*time.Millisecond)) {
			break
		}
		prev = now
	}
	if waited := time.Since(start); waited > time.Second {
		r.size.Notes = append(r.size.Notes, fmt.Sprintf("the daemon went idle %.1f s after %s (background work) before the next measurement", waited.Seconds(), after))
		r.progress("the daemon went idle %.1fs after %s", waited.Seconds(), after)
	}
}

// mem reads the daemon's memory; nil where it cannot.
func (r *runner) mem() *Mem {
	m, err := readMem(r.d.pid())
	if err != nil {
		return nil
	}
	return m
}

// workload runs one workload and records it.
func (r *runner) workload(ctx context.Context, name string, clients int, newClient func(c int) request) {
	r.workloadFor(ctx, name, clients, r.cfg.Duration, newClient)
}

// workloadFor runs a workload measured for d.
func (r *runner) workloadFor(ctx context.Context, name string, clients int, d time.Duration, newClient func(c int) request) {
	w := load{name: name, clients: clients, warmup: r.cfg.Warmup, duration: d, newClient: newClient,
		pid: r.d.pid(), diskStat: deviceStat(r.dir)}.run(ctx)
	r.size.Workloads = append(r.size.Workloads, w)
	r.progress("%-13s ×%-3d %8.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d  daemon %.0f µs CPU, disk %.1f KB in %.2f writes per request",
		name, clients, w.ReqPerSec, w.P50Ms, w.P99Ms, w.Errors, w.CPUUsPerReq, w.DiskKBPerReq, w.DiskIOsPerReq)
}

// get is the request maker of GET path with token: one request per
// client, sent again and again.
func (r *runner) get(ctx context.Context, path, token string) func(c int) request {
	return getURL(ctx, r.d.base+path, token)
}

// getURL is the request maker of GET url with token.
func getURL(ctx context.Context, url, token string) func(c int) request {
	return func(int) request {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return func() (*http.Request, error) { return req, err }
	}
}

// send is the request maker of requests with bodies: next gives the path
// and body of each.
func (r *runner) send(ctx context.Context, method, token string, next func() (string, []byte)) func(c int) request {
	base := r.d.base
	return func(int) request {
		return func() (*http.Request, error) {
			path, body := next()
			req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(string(body)))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			return req, nil
		}
	}
}

// Owner writes alternate between a new key (notes.n…) and one of the
// cfg.WriteKeys keys written before the workload (notes.w0000 …), all
// outside the reader's work.*.
func (r *runner) precreate(ctx context.Context) error {
	owner := r.s.as(r.s.owner)
	return parallel(ctx, r.cfg.WriteKeys, seedWorkers, func(i int) error {
		return owner.PutField(ctx, fmt.Sprintf("notes.w%04d", i), custodian.FieldInput{Value: textValue("Owner note", i)})
	})
}

func (r *runner) ownerWrite(ctx context.Context) func(c int) request {
	return r.send(ctx, "PUT", r.s.owner, func() (string, []byte) {
		i := int(r.seq.Add(1))
		key := fmt.Sprintf("notes.w%04d", (i/2)%r.cfg.WriteKeys)
		if i%2 == 0 {
			key = fmt.Sprintf("notes.n%08d", i/2)
		}
		return "/context/fields/" + key, append(append([]byte(`{"value":`), textValue("Owner note", i)...), '}')
	})
}

func (r *runner) propose(ctx context.Context) func(c int) request {
	return r.send(ctx, "POST", r.s.writer, func() (string, []byte) {
		i := int(r.seq.Add(1))
		body, _ := json.Marshal(proposal{Key: fmt.Sprintf("bulk.p%09d", i), Value: textValue("Proposed note", i),
			Kind: "note", Assertion: "reported", Reported: reported})
		return "/phc/v1/proposals", body
	})
}

// restart stops the daemon, starts it again on the same data dir, and
// measures the time to its first authorized answer: the reader's
// GET /context/fields/work.f000 answered 200 (or, should the reader be
// refused, the owner's unlocked status).
func (r *runner) restart(ctx context.Context, after string) error {
	rs := Restart{After: after}
	stopped, err := r.d.stop()
	rs.StopMs = ms(stopped)
	r.d = nil
	if err != nil {
		return err
	}
	if r.d, err = startDaemon(r.cfg.Bin, r.dir, r.pw); err != nil {
		return err
	}
	probe := readyClient()
	defer probe.CloseIdleConnections()
	path := "/context/fields/work.f000"
	rs.Probe = "the reader's GET " + path + " = 200"
	refused := 0
	ready, err := r.d.waitReady(ctx, 10*time.Minute, func() (bool, error) {
		if refused > 0 {
			owner, err := r.d.ownerToken()
			if err != nil {
				return false, err
			}
			return unlocked(ctx, probe, r.d.base, owner)
		}
		req, err := http.NewRequestWithContext(ctx, "GET", r.d.base+path, nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Authorization", "Bearer "+r.s.reader)
		resp, err := probe.Do(req)
		if err != nil {
			return false, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			return true, nil
		}
		refused = resp.StatusCode
		rs.Probe = "the owner's GET /context/status = unlocked"
		return false, fmt.Errorf("the reader's GET %s = %d", path, resp.StatusCode)
	})
	if err != nil {
		return fmt.Errorf("restart after %s: %w", after, err)
	}
	rs.ReadyMs = ms(ready)
	rs.ServingLogMs = ms(r.d.log.servingAfter())
	rs.KDFMs, rs.LoadMs = r.d.log.unlockTimes()
	if r.s.owner, err = r.d.ownerToken(); err != nil {
		return err
	}
	r.s.api.close()
	r.s.api = newAPI(r.d.base)
	if refused != 0 {
		// The daemon forgot the tokens: the readiness was the owner's
		// status, and the reader and seeder get new tokens.
		r.size.Notes = append(r.size.Notes, fmt.Sprintf("after the restart the reader's token was refused (%d): tokens minted again", refused))
		if r.s.reader, err = r.s.mint(ctx, readerName); err != nil {
			return err
		}
		if r.s.writer, err = r.s.mint(ctx, seederName); err != nil {
			return err
		}
	}
	r.settle(ctx, "the restart after "+after)
	time.Sleep(time.Second) // idle
	rs.IdleMem = r.mem()
	r.size.Restarts = append(r.size.Restarts, rs)
	r.progress("restart after %s: %.0f ms to the first authorized answer", after, rs.ReadyMs)
	return nil
}

// kdfRuns is how many unlocks kdf times; it reports the fastest.
const kdfRuns = 3

// kdf times an unlock of the vault in dir in this process — one Argon2id
// derivation and a check, what every start of the daemon pays — and
// returns the fastest of kdfRuns.
func kdf(dir, password string) (float64, error) {
	v, err := vault.Open(dir)
	if err != nil {
		return 0, err
	}
	sk, err := vault.ReadSecretKeyFile(dir)
	if err != nil {
		return 0, err
	}
	best := time.Duration(math.MaxInt64)
	for range kdfRuns {
		start := time.Now()
		err := v.Unlock([]byte(password), sk)
		best = min(best, time.Since(start))
		v.Lock()
		if err != nil {
			return 0, err
		}
	}
	return ms(best), nil
}

// growth measures the store and RSS before and after cfg.Growth
// sequential reads of path by the reader.
func (r *runner) growth(ctx context.Context, path string) error {
	g := &Growth{Reads: r.cfg.Growth}
	db, gdb := filepath.Join(r.dir, "phc.db"), filepath.Join(r.dir, "graph.db")
	var err error
	if g.Before, err = readStore(db); err != nil {
		return err
	}
	g.GraphBefore, _ = readStore(gdb)
	g.MemBefore = r.mem()
	w := load{name: "growth", clients: 1, count: r.cfg.Growth, newClient: r.get(ctx, path, r.s.reader)}.run(ctx)
	g.P50Ms, g.P99Ms, g.Errors = w.P50Ms, w.P99Ms, w.Errors
	if g.After, err = readStore(db); err != nil {
		return err
	}
	g.GraphAfter, _ = readStore(gdb)
	g.MemAfter = r.mem()
	g.FileBytesPerRead = float64(g.After.FileBytes-g.Before.FileBytes) / float64(g.Reads)
	g.UsedBytesPerRead = float64(g.After.UsedBytes-g.Before.UsedBytes) / float64(g.Reads)
	r.size.Growth = g
	r.progress("growth: %d reads, store used +%.0f B/read", g.Reads, g.UsedBytesPerRead)
	if w.Errors > 0 {
		return fmt.Errorf("growth run: %d of %d reads failed: %s", w.Errors, w.Requests, w.FirstError)
	}
	return nil
}
