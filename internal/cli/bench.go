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

// runBench runs the benchmark of docs/design.md §8 against daemons it starts
// itself, one per vault size, each in a fresh data dir (see package bench).
func runBench(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("phc bench", flag.ContinueOnError)
	setHelpOutput(fs, env)
	claims := fs.String("claims", "300,30000,100000", "vault sizes in active claims, comma-separated (each at least 300)")
	duration := durationFlag(fs, "duration", 5*time.Second, "measured length of each workload (a `duration`: 5s, 1m)")
	warmup := durationFlag(fs, "warmup", 0, "unmeasured warm-up (a `duration`) before each workload (default: a fifth of --duration, at most 1s)")
	growth := fs.Int("growth", 2000, "sequential 300-field reads of the growth run (0: none)")
	clients := fs.Int("clients", 16, "clients of the concurrent workloads")
	sustain := durationFlag(fs, "sustain", 0, "also run owner-write at --clients clients for this `duration` (e.g. 1m): the disk's write-back weighs in (0: not)")
	writeKeys := fs.Int("write-keys", 1000, "existing keys that every other owner-write updates (written first, untimed)")
	bin := fs.String("bin", "", "the phc binary to run as the daemon (default: this one), to compare with another commit")
	keep := fs.Bool("keep", false, "keep the data dirs (each with its vault password in a file beside it)")
	tmp := fs.String("tmp", "", "directory for the data dirs (default: the system's temporary directory)")
	jsonPath := fs.String("json", "", "also write every figure as JSON to this file")
	markdown := fs.Bool("markdown", false, "at the end, also print the figures against the design's targets as a Markdown table (BENCHMARKS.md's)")
	pvault := fs.String("pvault", "", "also compare context300 with pvault, the PCP reference implementation: the path of a pvault binary, which the bench\n"+
		"runs as 'pvault init' (on a pseudo-terminal; Linux) and 'pvault serve --password-stdin', VAULT_DIR a fresh dir and VAULT_PORT a free port")
	target := fs.String("pcp-target", "", "also compare context300 with the PCP server already running at this URL (its routes under /context or /vault)")
	tokenFile := fs.String("pcp-token-file", "", "with --pcp-target: a file holding its owner's session token (pvault's: $VAULT_DIR/.session)")
	rounds := fs.Int("compare-rounds", 5, "rounds of the comparison: each runs context300 at 1 and --clients clients on both servers, interleaved")
	compareOnly := fs.Bool("compare-only", false, "run the comparison only, not the vault sizes of --claims")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench takes no arguments (see phc bench -h)")
	}
	var compare *bench.CompareConfig
	switch {
	case *pvault != "" && *target != "":
		return usageError("--pvault and --pcp-target exclude each other")
	case *target != "" && *tokenFile == "":
		return usageError("--pcp-target needs --pcp-token-file, the file of its owner's session token")
	case *tokenFile != "" && *target == "":
		return usageError("--pcp-token-file goes with --pcp-target")
	case *compareOnly && *pvault == "" && *target == "":
		return usageError("--compare-only needs --pvault or --pcp-target")
	case *rounds < 1:
		return usageError("--compare-rounds must be at least 1")
	case *pvault != "" || *target != "":
		compare = &bench.CompareConfig{PVault: *pvault, Target: *target, TokenFile: *tokenFile, Rounds: *rounds}
	}
	var sizes []int
	if !*compareOnly {
		var err error
		if sizes, err = bench.ParseSizes(*claims); err != nil {
			return usageError("--claims: %v", err)
		}
	}
	if *duration <= 0 || *warmup < 0 || *growth < 0 || *sustain < 0 || *clients < 1 || *writeKeys < 1 {
		return usageError("--duration must be positive, --warmup, --growth and --sustain not negative, --clients and --write-keys at least 1")
	}
	var err error
	if *bin == "" {
		if *bin, err = os.Executable(); err != nil {
			return fmt.Errorf("find this binary: %w", err)
		}
	}
	rep, runErr := bench.Run(ctx, bench.Config{
		Bin: *bin, Sizes: sizes, Duration: *duration, Warmup: *warmup, Clients: *clients, Growth: *growth,
		Sustain: *sustain, WriteKeys: *writeKeys, Keep: *keep, TempDir: *tmp, Out: env.Stdout, Progress: env.Stderr, Compare: compare,
	})
	if *jsonPath != "" && rep != nil {
		if err := writeReport(*jsonPath, rep); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if *markdown && rep != nil {
		fmt.Fprintln(env.Stdout)
		if err := rep.WriteMarkdown(env.Stdout); err != nil {
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
