package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/phc-project/phc/conformance"
	"github.com/phc-project/phc/internal/vault"
)

// runConformance runs the conformance suite against a custodian and prints
// a pass/fail table (or JSON). Any failed case makes the exit code 1.
func runConformance(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "conformance", &c)
	target := fs.String("target", "", "base URL of the custodian (default: the daemon of --data/--addr)")
	ownerToken := fs.String("owner-token", "", "the owner's session token (default: DIR/session, for the daemon of --data only)")
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

	// The daemon of the data dir, and its session, unless --target names
	// another custodian: the owner's local session is never sent elsewhere.
	local, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	base := *target
	if base == "" {
		base = local.base
	}
	t, err := conformance.NewHTTPTarget(base, nil)
	if err != nil {
		return usageError("bad --target: %v", err)
	}
	if cfg.OwnerToken == "" && sameHost(base, local.base) {
		if s, err := newClient(env, c, true); err == nil {
			cfg.OwnerToken = s.token
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
	cfg.Log = func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "phc conformance: %s\n", printable(fmt.Sprintf(format, args...)))
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

// sameHost reports whether two base URLs name the same host and port.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Host, ub.Host)
}

// readSecretKeyText reads Secret Key text from a small file.
func readSecretKeyText(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the Secret Key: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read the Secret Key: %w", err)
	}
	sk := strings.TrimSpace(string(raw))
	if _, err := vault.ParseSecretKey(sk); err != nil {
		return "", fmt.Errorf("read the Secret Key from %s: %w", path, err)
	}
	return sk, nil
}
