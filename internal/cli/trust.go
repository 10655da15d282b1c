package cli

import (
	"context"
	"fmt"
	"net/url"
)

// runTrust manages the trust list of OIDC issuers whose ID tokens
// recipients may exchange for service tokens.
func runTrust(ctx context.Context, env *Env, args []string) error {
	const usage = "usage: phc trust add ISSUER --audience AUD | phc trust list | phc trust remove ID"
	if len(args) == 0 {
		return usageError(usage)
	}
	var c common
	switch args[0] {
	case "add":
		fs := newFlags(env, "trust add", &c)
		audience := fs.String("audience", "", "the audience the issuer's ID tokens must name (this custodian's client id there)")
		issuer, ok, err := parseOne(fs, args[1:])
		if err != nil {
			return err
		}
		if !ok {
			return usageError(usage)
		}
		if *audience == "" {
			return usageError("phc trust add needs --audience")
		}
		var out struct {
			ID string `json:"id"`
		}
		if err := ownerDo(ctx, env, c, "POST", "/phc/v1/trust", map[string]string{"issuer": issuer, "audience": *audience}, &out); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "trusted %s for audience %s (%s)\n", printable(issuer), printable(*audience), out.ID)
		return nil
	case "list":
		fs := newFlags(env, "trust list", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		var out struct {
			Trust []struct {
				ID, Issuer, Audience string
			} `json:"trust"`
		}
		if err := ownerDo(ctx, env, c, "GET", "/phc/v1/trust", nil, &out); err != nil {
			return err
		}
		for _, t := range out.Trust {
			fmt.Fprintf(env.Stdout, "%s  %s  audience %s\n", t.ID, printable(t.Issuer), printable(t.Audience))
		}
		return nil
	case "remove":
		fs := newFlags(env, "trust remove", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageError("usage: phc trust remove ID")
		}
		if err := ownerDo(ctx, env, c, "DELETE", "/phc/v1/trust/"+url.PathEscape(fs.Arg(0)), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s: tokens exchanged for its ID tokens are dead\n", printable(fs.Arg(0)))
		return nil
	}
	return usageError("unknown trust command %q (add, list, remove)", args[0])
}
