package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/phc-project/phc/conformance"
	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/internal/vault"
)

// runConformance runs the conformance suite against a custodian and prints
// a pass/fail table (or JSON). Any failed case makes the exit code 1.
//
// Without --target it tests a throwaway custodian it starts in a temporary
// data dir and removes afterwards, so the owner's own vault is never
// touched. With --target it refuses a custodian that holds any data unless
// --write-test-data says to write the suite's test data into it.
func runConformance(ctx context.Context, env *Env, args []string) error {
	var c common
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-addr" || a == "--addr" || strings.HasPrefix(a, "-addr=") || strings.HasPrefix(a, "--addr=") {
			return usageError("conformance takes --target http://HOST:PORT, not --addr (without --target it tests a throwaway custodian)")
		}
	}
	fs := newLocalFlags(env, "conformance", &c)
	target := fs.String("target", "", "base URL of a running custodian to test (default: a throwaway one started in a temporary dir)")
	writeTestData := fs.Bool("write-test-data", false, "with --target: run even though the custodian holds data (the suite's consumers, personas, claims, grants and receipts stay in it for good)")
	ownerToken := fs.String("owner-token", "", "the owner's session token (default: DIR/session, when --target is the daemon of --data)")
	passwordEnv := fs.String("password-env", "", "name of an environment variable holding the vault password (for the cases that lock the vault)")
	secretKeyFile := fs.String("secret-key-file", "", "file holding the Secret Key (default with --password-env: DIR/secret.key)")
	match := fs.String("run", "", "run only the cases whose id matches this regular expression")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	viaMCP := fs.Bool("mcp", false, "carry an app's requests that an MCP tool expresses over the target's /mcp endpoint instead of HTTP")
	leaveLocked := fs.Bool("leave-locked", false, "after the last case that locks the vault, leave it locked instead of waiting out the unlock rate limit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("conformance takes no arguments (see phc conformance -h)")
	}
	cfg := conformance.Config{OwnerToken: *ownerToken, LeaveLocked: *leaveLocked}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			return usageError("bad --run: %v", err)
		}
		cfg.Match = re
	}
	cfg.Log = func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "phc conformance: %s\n", printable(fmt.Sprintf(format, args...)))
	}

	base := *target
	if base == "" {
		if *ownerToken != "" || *passwordEnv != "" || *secretKeyFile != "" || *writeTestData {
			return usageError("--owner-token, --password-env, --secret-key-file and --write-test-data need --target (without it phc conformance tests a throwaway custodian it starts itself)")
		}
		tmp, err := startThrowaway(ctx, env)
		if err != nil {
			return err
		}
		defer tmp.close()
		fmt.Fprintf(env.Stderr, "phc conformance: testing a throwaway custodian at %s (removed afterwards; --target URL tests another)\n", tmp.base)
		base = tmp.base
		cfg.OwnerToken, cfg.Password, cfg.SecretKey, cfg.LeaveLocked = tmp.owner, tmp.password, tmp.secretKey, true
	} else {
		if _, err := conformance.NewHTTPTarget(base, nil); err != nil {
			return usageError("bad --target: %v", err)
		}
		// The owner's local session is sent only to the daemon of the data
		// dir, never elsewhere.
		if local, err := newClient(env, c, false); err == nil && cfg.OwnerToken == "" && sameHost(base, local.Base) {
			if s, err := newClient(env, c, true); err == nil {
				cfg.OwnerToken = s.Token
			}
		}
		if *passwordEnv != "" {
			cfg.Password = env.Getenv(*passwordEnv)
			if cfg.Password == "" {
				return usageError("--password-env: $%s is empty", *passwordEnv)
			}
			path := *secretKeyFile
			if path == "" {
				path = filepath.Join(c.data, "secret.key")
			}
			sk, err := readSecretKeyText(path)
			if err != nil {
				return err
			}
			cfg.SecretKey = sk
		} else if *secretKeyFile != "" {
			return usageError("--secret-key-file needs --password-env")
		}
		if !*writeTestData {
			if err := refuseVaultWithData(ctx, base, cfg.OwnerToken); err != nil {
				return err
			}
		}
	}

	t, err := conformance.NewHTTPTarget(base, nil)
	if err != nil {
		return usageError("bad --target: %v", err)
	}
	var face conformance.Target = t
	if *viaMCP {
		m := conformance.NewMCPTarget(t, strings.TrimSuffix(base, "/")+"/mcp")
		defer m.Close()
		face = m
	}
	rep, err := conformance.Run(ctx, face, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		err = rep.WriteJSON(env.Stdout)
	} else {
		err = rep.WriteTable(env.Stdout)
	}
	if err != nil {
		return err
	}
	if n := rep.Count(conformance.Fail); n > 0 {
		return fmt.Errorf("%d of %d conformance cases failed", n, len(rep.Results))
	}
	if len(rep.Notes) > 0 {
		return fmt.Errorf("the run left a note: %s", rep.Notes[0])
	}
	return nil
}

// throwaway is a custodian phc conformance starts for itself in a
// temporary data dir.
type throwaway struct {
	dir, base, owner, password, secretKey string
	d                                     *daemonRun
}

// startThrowaway creates a vault with a random password in a new temporary
// dir and serves it on a free loopback port.
func startThrowaway(ctx context.Context, env *Env) (*throwaway, error) {
	root, err := os.MkdirTemp("", "phc-conformance-")
	if err != nil {
		return nil, fmt.Errorf("make a temporary dir for the throwaway custodian: %w", err)
	}
	pw := make([]byte, 18)
	if _, err := rand.Read(pw); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	t := &throwaway{dir: filepath.Join(root, "phc"), password: hex.EncodeToString(pw)}
	tenv := *env
	tenv.Stdout = io.Discard
	tenv.IsTerminal = func() bool { return false }
	tenv.Getenv = func(k string) string {
		if k == "PHC_PASSWORD" {
			return t.password
		}
		return ""
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	t.d, err = startDaemon(ctx, &tenv, log, t.dir, "127.0.0.1:0", 0, "")
	if err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("start the throwaway custodian: %w", err)
	}
	t.base = "http://" + t.d.addr
	raw, err := os.ReadFile(filepath.Join(t.dir, sessionFile))
	if err == nil {
		t.secretKey, err = vault.ReadSecretKeyFile(t.dir)
	}
	if err != nil {
		t.close()
		return nil, fmt.Errorf("start the throwaway custodian: %w", err)
	}
	t.owner = strings.TrimSpace(string(raw))
	return t, nil
}

func (t *throwaway) close() {
	if t.d != nil {
		t.d.close()
	}
	os.RemoveAll(filepath.Dir(t.dir))
}

// dataList is a route of the owner's lists that are empty in a new vault:
// any record in one means the vault holds the owner's data. names are what
// the refusal calls the records of each list the route answers, and count
// reads the route once and returns their numbers, in that order.
type dataList struct {
	names []string
	path  string
	count func(ctx context.Context, cl *client.Client) ([]int, error)
}

// counted is count for a list method of the client.
func counted[T any](list func(*client.Client, context.Context) ([]T, error)) func(context.Context, *client.Client) ([]int, error) {
	return func(ctx context.Context, cl *client.Client) ([]int, error) {
		l, err := list(cl, ctx)
		return []int{len(l)}, err
	}
}

// one names the single list of a route.
func one(name string) []string { return []string{name} }

// dataLists are the owner's lists, in the order the refusal names them.
var dataLists = []dataList{
	{one("consumers"), "/context/consumers", counted((*client.Client).Consumers)},
	{one("personas"), "/phc/v1/personas", counted((*client.Client).Personas)},
	{one("claims"), "/phc/v1/claims", func(ctx context.Context, cl *client.Client) ([]int, error) {
		l, err := cl.Claims(ctx, "", "")
		return []int{len(l.Claims)}, err
	}},
	{one("proposals"), "/phc/v1/review", counted((*client.Client).Review)},
	{one("grants"), "/phc/v1/grants", counted((*client.Client).Grants)},
	{one("entities"), "/phc/v1/entities", counted((*client.Client).Entities)},
	{one("summaries"), "/phc/v1/summaries", counted((*client.Client).Summaries)},
	{one("trust"), "/phc/v1/trust", counted((*client.Client).Trust)},
	{one("tokens"), "/context/tokens/service", counted((*client.Client).Tokens)},
	{one("requests"), "/context/requests", counted((*client.Client).Requests)},
	{[]string{"issuers", "policies"}, "/phc/v1/dec/trust", func(ctx context.Context, cl *client.Client) ([]int, error) {
		t, err := cl.DECTrust(ctx)
		return []int{len(t.Issuers), len(t.Policies)}, err
	}},
	{one("custodians"), "/phc/v1/custodians", counted((*client.Client).Custodians)},
	{one("records"), "/phc/v1/quarantine", func(ctx context.Context, cl *client.Client) ([]int, error) {
		p, err := cl.Quarantine(ctx, custodian.QuarantineQuery{})
		return []int{len(p.Records)}, err
	}},
}

// refuseVaultWithData refuses to run the suite (which writes consumers,
// personas, claims, grants and receipts that cannot be undone) against a
// custodian that holds data, or whose data it cannot see.
func refuseVaultWithData(ctx context.Context, base, owner string) error {
	const how = "phc conformance with no --target tests a throwaway custodian instead; add --write-test-data to write the suite's test data into this one for good"
	if owner == "" {
		return usageError("refusing to test %s: without the owner's session (--owner-token, or --data of its daemon) phc cannot tell whether it holds your data; %s", base, how)
	}
	cl := client.New(strings.TrimSuffix(base, "/")).WithToken(owner)
	st, err := cl.Status(ctx)
	if err != nil {
		return err
	}
	if st.Locked {
		return usageError("refusing to test %s: its vault is locked, so phc cannot tell whether it holds your data (phc unlock first); %s", base, how)
	}
	var held []string
	for _, l := range dataLists {
		ns, err := l.count(ctx, cl)
		if err != nil {
			return fmt.Errorf("look at %s%s: %w", base, l.path, err)
		}
		for i, n := range ns {
			if n > 0 {
				held = append(held, fmt.Sprintf("%d %s", n, l.names[i]))
			}
		}
	}
	if len(held) > 0 {
		return usageError("refusing to test %s: it holds data (%s), and the suite's test data could never be removed from it; %s", base, strings.Join(held, ", "), how)
	}
	return nil
}

// sameHost reports whether two base URLs name the same host and port.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Host, ub.Host)
}
