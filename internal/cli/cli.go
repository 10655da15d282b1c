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
	// OpenBrowser opens a URL in the person's browser (phc ui); nil is
	// the system's opener.
	OpenBrowser func(url string) error
}

// command is one verb.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

func commands() []command {
	return []command{
		{"init", "create a vault in the data dir", runInit},
		{"serve", "run the custodian daemon", runServe},
		{"unlock", "unlock the daemon's vault", runUnlock},
		{"lock", "lock the daemon's vault", runLock},
		{"status", "show whether the vault is locked", runStatus},
		{"ui", "open the owner's console in the browser, signed in with this session (--print: print the link instead)", runUI},
		{"consumer", "manage consumers (add, list, approve, remove)", runConsumer},
		{"token", "obtain a service token for a consumer (or: token list, token revoke PREFIX)", runToken},
		{"persona", "create, list, rename, edit and remove personas (add, list, rename, set, remove)", runPersona},
		{"review", "the review queue (list, confirm, reject)", runReview},
		{"claims", "list, show, correct, dispute, retract and delete claims (list, show, versions, correct, dispute, undispute, retract, delete)", runClaims},
		{"grant", "grant a recipient access (or: grant list)", runGrant},
		{"revoke", "revoke a grant", runRevoke},
		{"receipts", "list receipts or verify their chain", runReceipts},
		{"requests", "list context requests waiting for approval", runRequests},
		{"approve", "approve a context request (--password for critical data)", runApprove},
		{"deny", "deny a context request", runDeny},
		{"dec", "verify a DEC 0.1 evidence chain (verify FILE --trust JWKS.json --issuer ISSUER)", runDEC},
		{"trust", "trust OIDC issuers for recipients (add ISSUER --audience AUD, list, remove ID) and pin other custodians (custodian CARD.json, custodians, remove cus_…)", runTrust},
		{"card", "print this custodian's public card, for another custodian to pin (--out FILE)", runCard},
		{"export", "make a signed, encrypted migration bundle for another custodian (--to CARD.json [--persona P] [--out FILE])", runExport},
		{"import", "hold a migration bundle from a pinned custodian in the quarantine (import FILE)", runImport},
		{"quarantine", "list held imports (--status S), adopt them (adopt ID…|--all [--persona P] [--map foreign:…=NAME]), unblock one (unblock ID --remove TYPE) or reject them (reject ID…|--all)", runQuarantine},
		{"mcp", "serve MCP on stdin/stdout for an app, through the running daemon (--token or PHC_TOKEN)", runMCP},
		{"check", "verify that the graph agrees with the store, and the receipt chain", runCheck},
		{"graph", "rebuild the graph from the store, or export it (N-Quads, PROV-O JSON-LD)", runGraph},
		{"conformance", "run the conformance suite against a custodian", runConformance},
		{"bench", "measure a daemon it starts, at several vault sizes (DESIGN.md §8)", runBench},
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
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return usageError("no command given")
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	return usageError("unknown command %q (see phc help)", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: phc <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes --data DIR (default $PHC_HOME or ~/.phc).")
	fmt.Fprintln(w, "Client commands take --addr HOST:PORT (default: the daemon's DIR/addr, else 127.0.0.1:7200).")
}

// common holds the flags every command shares.
type common struct {
	data string
	addr string
}

// newFlags returns a flag set with the common flags registered.
func newFlags(env *Env, name string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("phc "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&c.data, "data", defaultDataDir(env), "data directory")
	fs.StringVar(&c.addr, "addr", "", "daemon address (host:port)")
	return fs
}

// parse parses args; a flag error is a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
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
