// Package cli implements the phc command: the daemon (serve), the offline
// verb init, and the client verbs that talk to a running daemon over its
// HTTP API with the owner session token in DIR/session.
//
// Each verb lives in its own file. [Run] is the only place that maps an
// error to an exit code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian"
)

// Env is what a command sees of its process: arguments aside, everything it
// reads from or writes to the outside, so tests can run verbs in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// IsTerminal reports whether Stdin is an interactive terminal.
	IsTerminal func() bool
	// ReadPassword reads a password from the terminal without echo.
	ReadPassword func(prompt string) ([]byte, error)
	// Clock tells the daemon the time; nil is the system clock (tests
	// pass a fake, never a wall-clock wait).
	Clock custodian.Clock

	// helpFlags, when set, receives the flag set a command's -h reaches
	// instead of its help being printed: completion collects every
	// command's flags this way.
	helpFlags func(path string, fs *flag.FlagSet)

	// OpenBrowser opens a URL in the person's browser (phc ui); nil is
	// the system's opener.
	OpenBrowser func(url string) error
}

// command is one verb; its help is in helpEntries (help.go).
type command struct {
	name string
	run  func(ctx context.Context, env *Env, args []string) error
}

func commands() []command {
	return []command{
		{"init", runInit},
		{"serve", runServe},
		{"unlock", runUnlock},
		{"lock", runLock},
		{"status", runStatus},
		{"ui", runUI},
		{"consumer", runConsumer},
		{"token", runToken},
		{"persona", runPersona},
		{"review", runReview},
		{"claims", runClaims},
		{"propose", runPropose},
		{"entity", runEntity},
		{"summary", runSummary},
		{"grant", runGrant},
		{"revoke", runRevoke},
		{"receipts", runReceipts},
		{"requests", runRequests},
		{"approve", runApprove},
		{"deny", runDeny},
		{"dec", runDEC},
		{"trust", runTrust},
		{"settings", runSettings},
		{"card", runCard},
		{"backup", runBackup},
		{"restore", runRestore},
		{"export", runExport},
		{"import", runImport},
		{"quarantine", runQuarantine},
		{"mcp", runMCP},
		{"mcp-config", runMCPConfig},
		{"vault-keys", runVaultKeys},
		{"hook", runHook},
		{"check", runCheck},
		{"validate", runValidate},
		{"graph", runGraph},
		{"conformance", runConformance},
		{"bench", runBench},
		{"completion", runCompletion},
		{"version", runVersion},
		{"help", runHelp},
	}
}

// exitError carries an exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks a mistake in the command line (exit code 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// Main runs phc with the process's own environment.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, osEnv(), args)
}

// Run runs one phc command and returns its exit code: 0 on success, 2 for a
// usage error, 1 for anything else.
func Run(ctx context.Context, env *Env, args []string) int {
	err := dispatch(ctx, env, args)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(env.Stderr, "phc: %s\n", printable(err.Error()))
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	return 1
}

func dispatch(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		usage(env.Stderr)
		return usageError("no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(env.Stdout)
		return nil
	case "-version", "--version", "-V":
		fmt.Fprintln(env.Stdout, version())
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.name != "help" && wantsHelp(args[1:]) {
				return showHelp(ctx, env, c, args[1:])
			}
			return c.run(ctx, env, args[1:])
		}
	}
	return usageError("unknown command %q (phc help lists them)", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: phc <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		e, _ := helpFor(c.name)
		fmt.Fprintf(w, "  %-12s %s\n", c.name, e.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands that use a vault take --data DIR (default $PHC_HOME or ~/.phc).")
	fmt.Fprintln(w, "Commands that talk to the daemon take --addr HOST:PORT (default: $PHC_ADDR, else the daemon's DIR/addr, else 127.0.0.1:7200).")
	fmt.Fprintln(w, "phc help COMMAND (or phc COMMAND --help) shows a command's arguments, flags and an example.")
}

// common holds the flags every command shares.
type common struct {
	data string
	addr string
}

// newFlags returns a flag set with the common flags registered: the data
// dir, and the address of the daemon the command talks to.
func newFlags(env *Env, name string, c *common) *flag.FlagSet {
	fs := newLocalFlags(env, name, c)
	fs.StringVar(&c.addr, "addr", "", "daemon address (host:port; default: $PHC_ADDR, else DIR/addr, else "+defaultAddr+")")
	return fs
}

// newLocalFlags is newFlags for a command that uses a data dir but talks
// to no daemon (phc init): its help does not list --addr.
func newLocalFlags(env *Env, name string, c *common) *flag.FlagSet {
	fs := newBareFlags(env, name)
	fs.StringVar(&c.data, "data", defaultDataDir(env), "data directory")
	return fs
}

// newBareFlags is newFlags for a command that uses neither a data dir nor
// a daemon (phc version, phc completion).
func newBareFlags(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("phc "+name, flag.ContinueOnError)
	setHelpOutput(fs, env)
	return fs
}

// flagOutput is where a flag set writes its errors: nowhere, since Run
// prints the error parse returns, once. It carries the command's Env so
// that parse can print the help to its stdout.
type flagOutput struct{ env *Env }

func (o flagOutput) Write(p []byte) (int, error) { return len(p), nil }

// setHelpOutput makes fs leave its errors to Run, and its help — printed
// by parse on -h — to env's stdout.
func setHelpOutput(fs *flag.FlagSet, env *Env) {
	fs.SetOutput(flagOutput{env})
	fs.Usage = func() {} // parse prints the help, or says where to find it
}

// parse parses args; a flag error is a usage error. -h, -help and --help
// print the command's help (see help.go) and return flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		path := strings.TrimPrefix(fs.Name(), "phc ")
		if errors.Is(err, flag.ErrHelp) {
			if o, ok := fs.Output().(flagOutput); ok {
				if o.env.helpFlags != nil {
					o.env.helpFlags(path, fs)
				} else {
					printHelp(o.env.Stdout, path, fs)
				}
			}
			return err
		}
		return &exitError{code: 2, err: fmt.Errorf("%w (phc help %s shows the flags)", err, path)}
	}
	return nil
}

func defaultDataDir(env *Env) string {
	if d := env.Getenv("PHC_HOME"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".phc"
	}
	return filepath.Join(home, ".phc")
}

// printable shows untrusted text literally: every rune that is not a
// printable character — controls, and also format characters such as
// zero-width spaces, direction marks and Unicode tag characters, which
// could hide text from the owner — is shown as an escape.
func printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case !strconv.IsPrint(r):
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		s = s[size:]
	}
	return b.String()
}
