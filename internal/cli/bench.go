package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/phc-project/phc/internal/bench"
)

// runBench runs the benchmark of DESIGN.md §8 against daemons it starts
// itself, one per vault size, each in a fresh data dir (see package bench).
func runBench(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("phc bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	claims := fs.String("claims", "300,30000,100000", "vault sizes in active claims, comma-separated (each at least 300)")
	duration := fs.Duration("duration", 5*time.Second, "measured length of each workload")
	warmup := fs.Duration("warmup", 0, "unmeasured warm-up before each workload (default: a fifth of --duration, at most 1s)")
	growth := fs.Int("growth", 2000, "sequential 300-field reads of the growth run (0: none)")
	clients := fs.Int("clients", 16, "clients of the concurrent workloads")
	writeKeys := fs.Int("write-keys", 1000, "existing keys that every other owner-write updates (written first, untimed)")
	bin := fs.String("bin", "", "the phc binary to run as the daemon (default: this one), to compare with another commit")
	keep := fs.Bool("keep", false, "keep the data dirs")
	tmp := fs.String("tmp", "", "directory for the data dirs (default: the system's temporary directory)")
	jsonPath := fs.String("json", "", "also write every figure as JSON to this file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench takes no arguments (see phc bench -h)")
	}
	sizes, err := bench.ParseSizes(*claims)
	if err != nil {
		return usageError("--claims: %v", err)
	}
	if *duration <= 0 || *warmup < 0 || *growth < 0 || *clients < 1 || *writeKeys < 1 {
		return usageError("--duration must be positive, --warmup and --growth not negative, --clients and --write-keys at least 1")
	}
	if *bin == "" {
		if *bin, err = os.Executable(); err != nil {
			return fmt.Errorf("find this binary: %w", err)
		}
	}
	rep, runErr := bench.Run(ctx, bench.Config{
		Bin: *bin, Sizes: sizes, Duration: *duration, Warmup: *warmup, Clients: *clients, Growth: *growth,
		WriteKeys: *writeKeys, Keep: *keep, TempDir: *tmp, Out: env.Stdout, Progress: env.Stderr,
	})
	if *jsonPath != "" && rep != nil {
		if err := writeReport(*jsonPath, rep); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

// writeReport writes the report's JSON to path.
func writeReport(path string, rep *bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
