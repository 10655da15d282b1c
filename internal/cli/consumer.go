package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/internal/humanfmt"
)

func runConsumer(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: phc consumer add NAME [--secret S] | list | approve NAME | remove NAME")
	}
	var c common
	switch args[0] {
	case "add":
		fs := newFlags(env, "consumer add", &c)
		secret := fs.String("secret", "", "the consumer's secret (default: $PHC_CONSUMER_SECRET, else a new random one, printed once)")
		name, rest := firstArg(args[1:])
		if err := parse(fs, rest); err != nil {
			return err
		}
		if name == "" {
			name = fs.Arg(0)
		}
		if name == "" {
			return usageError("usage: phc consumer add NAME [--secret S]")
		}
		generated := false
		if *secret == "" {
			*secret = env.Getenv("PHC_CONSUMER_SECRET")
		}
		if *secret == "" {
			b := make([]byte, 24)
			rand.Read(b)
			*secret, generated = base64.RawURLEncoding.EncodeToString(b), true
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.AddConsumer(ctx, custodian.ConsumerInput{Name: name, Secret: *secret})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "consumer %s: %s\n", printable(out.Name), out.Status)
		if generated {
			fmt.Fprintf(env.Stdout, "secret (shown once): %s\n", *secret)
		}
		return nil
	case "list":
		fs := newFlags(env, "consumer list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		consumers, err := cl.Consumers(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"consumers": consumers})
		}
		for _, con := range consumers {
			fmt.Fprintf(env.Stdout, "%-24s %s\n", printable(con.Name), con.Status)
		}
		return nil
	case "approve", "remove":
		fs := newFlags(env, "consumer "+args[0], &c)
		name, rest := firstArg(args[1:])
		if err := parse(fs, rest); err != nil {
			return err
		}
		if name == "" {
			name = fs.Arg(0)
		}
		if name == "" {
			return usageError("usage: phc consumer %s NAME", args[0])
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if args[0] == "approve" {
			out, err := cl.ApproveConsumer(ctx, name)
			if client.IsConstraint(err, "conflict") {
				// phc consumer add approves at once; approving again is
				// what the owner wanted already.
				fmt.Fprintf(env.Stdout, "consumer %s is already approved (phc consumer add approves at once; approve is for apps that registered themselves)\n", printable(name))
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "consumer %s: %s\n", printable(name), out.Status)
			return nil
		}
		rev, err := cl.RemoveConsumer(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "consumer %s removed; its tokens and grants are revoked (revision %d)\n", printable(name), rev)
		return nil
	}
	return usageError("unknown consumer command %q", args[0])
}

// firstArg splits a leading positional argument from flags that follow it,
// so both "add NAME --flag" and "add --flag NAME" work.
func firstArg(args []string) (string, []string) {
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		return args[0], args[1:]
	}
	return "", args
}

// parseOne parses args, which hold exactly one positional argument before
// or after the flags; ok is false when there is none or more than one.
func parseOne(fs *flag.FlagSet, args []string) (arg string, ok bool, err error) {
	arg, rest := firstArg(args)
	if err := parse(fs, rest); err != nil {
		return "", false, err
	}
	switch {
	case arg == "" && fs.NArg() == 1:
		return fs.Arg(0), true, nil
	case arg != "" && fs.NArg() == 0:
		return arg, true, nil
	}
	return "", false, nil
}

func runToken(ctx context.Context, env *Env, args []string) error {
	var c common
	if len(args) > 0 && (args[0] == "list" || args[0] == "revoke") {
		return runTokenAdmin(ctx, env, c, args)
	}
	fs := newFlags(env, "token", &c)
	consumer := fs.String("consumer", "", "consumer name")
	secret := fs.String("secret", "", "consumer secret (default: $PHC_CONSUMER_SECRET)")
	scope := fs.String("scope", "*", "comma-separated key patterns, e.g. identity.*,learning.*")
	mode := fs.String("mode", "read", "read, write or read-write")
	ttl := fs.String("ttl", "1h", "lifetime, e.g. 30m, 24h")
	longLived := fs.Bool("long-lived", false, "ask for a one-year token (8760h), for a daemon or an MCP host; the vault clamps it to what the owner allows (setting long_lived_tokens) and says so")
	purpose := fs.String("purpose", "", "the one purpose the token reads under (a read that names none is decided under it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *secret == "" {
		*secret = env.Getenv("PHC_CONSUMER_SECRET")
	}
	if *consumer == "" || *secret == "" {
		return usageError("usage: phc token --consumer NAME --secret S [--scope P] [--mode M] [--ttl D | --long-lived] [--purpose P]")
	}
	if *longLived {
		ttlSet := false
		fs.Visit(func(f *flag.Flag) { ttlSet = ttlSet || f.Name == "ttl" })
		if ttlSet {
			return usageError("phc token: give --ttl or --long-lived, not both")
		}
		*ttl = "8760h"
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	out, err := cl.MintToken(ctx, client.TokenRequest{Consumer: *consumer, Secret: *secret, Scope: *scope, Mode: *mode, TTL: *ttl, Purpose: *purpose})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, out.Token)
	for _, w := range out.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(env.Stderr, "expires at %s\n", humanExpiry(out.ExpiresAt, time.Now()))
	return nil
}

// runTokenAdmin lists or revokes service tokens (owner).
func runTokenAdmin(ctx context.Context, env *Env, c common, args []string) error {
	fs := newFlags(env, "token "+args[0], &c)
	var asJSON *bool
	if args[0] == "list" {
		asJSON = fs.Bool("json", false, "print JSON")
	}
	prefix, rest := firstArg(args[1:])
	if err := parse(fs, rest); err != nil {
		return err
	}
	if args[0] == "revoke" {
		if prefix == "" {
			prefix = fs.Arg(0)
		}
		// As the list shows it, or as an older phc showed it, with an
		// ellipsis.
		prefix = strings.TrimRight(strings.TrimSpace(prefix), "….")
		if prefix == "" {
			return usageError("usage: phc token revoke PREFIX (as phc token list shows it)")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		rev, err := cl.RevokeToken(ctx, prefix)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "revoked (revision %d)\n", rev)
		return nil
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	tokens, err := cl.Tokens(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, tokensJSONOf(tokens))
	}
	for _, t := range tokens {
		state := "active"
		if !t.Active {
			state = "inactive"
		}
		fmt.Fprintf(env.Stdout, "%s  %-16s %-10s %-8s until %s  scope %s\n", t.Prefix, printable(t.Consumer), t.Mode, state,
			humanfmt.Time(t.ExpiresAt), printable(strings.Join(t.Scope, ",")))
	}
	return nil
}
