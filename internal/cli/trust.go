package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/humanfmt"
)

// runTrust manages the trust list of OIDC issuers whose ID tokens
// recipients may exchange for service tokens, and the custodians whose
// cards the owner pinned (whose bundles may be imported).
func runTrust(ctx context.Context, env *Env, args []string) error {
	const usage = "usage: phc trust add ISSUER --audience AUD [--authorized-party CLIENT]... | phc trust list | phc trust custodian CARD.json | phc trust custodians | phc trust remove ID (phc help trust)"
	if len(args) == 0 {
		return usageError(usage)
	}
	var c common
	switch args[0] {
	case "add":
		fs := newFlags(env, "trust add", &c)
		audience := fs.String("audience", "", "the audience the issuer's ID tokens must name (this custodian's client id there)")
		var parties multiFlag
		fs.Var(&parties, "authorized-party", "another client id of the issuer whose ID tokens (as azp or audience) are accepted too; repeatable")
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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.AddTrust(ctx, custodian.TrustInput{Issuer: issuer, Audience: *audience, AuthorizedParties: parties})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "trusted %s for audience %s%s (%s)\n", printable(issuer), printable(*audience), partiesText(parties), out.ID)
		if d := out.Discovery; d != nil {
			fmt.Fprintf(env.Stdout, "  discovery: %s/.well-known/openid-configuration\n  keys: %d at %s\n", printable(strings.TrimSuffix(issuer, "/")), d.Keys, printable(d.JWKSURI))
			if len(d.Algorithms) > 0 {
				fmt.Fprintf(env.Stdout, "  signing algorithms it lists: %s\n", printable(strings.Join(d.Algorithms, ", ")))
			}
		}
		for _, w := range out.Warnings {
			fmt.Fprintf(env.Stderr, "warning: %s\n", printable(w))
		}
		return nil
	case "list":
		fs := newFlags(env, "trust list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		trust, err := cl.Trust(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"trust": trust})
		}
		for _, t := range trust {
			fmt.Fprintf(env.Stdout, "%s  %s  audience %s%s\n", t.ID, printable(t.Issuer), printable(t.Audience), partiesText(t.AuthorizedParties))
		}
		return nil
	case "custodian":
		fs := newFlags(env, "trust custodian", &c)
		file, ok, err := parseOne(fs, args[1:])
		if err != nil {
			return err
		}
		if !ok {
			return usageError("usage: phc trust custodian CARD.json (another custodian's card, from its phc card)")
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if !json.Valid(raw) {
			return fmt.Errorf("%s is not JSON: a card is what phc card prints", printable(file))
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.PinCustodian(ctx, raw)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "pinned %s: bundles it signs can be imported\n", printable(out.CustodianID))
		return nil
	case "custodians":
		fs := newFlags(env, "trust custodians", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		pinned, err := cl.Custodians(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"custodians": pinned})
		}
		for _, p := range pinned {
			fmt.Fprintf(env.Stdout, "%s  pinned %s\n", printable(p.CustodianID), humanfmt.Time(p.PinnedAt))
		}
		return nil
	case "remove":
		fs := newFlags(env, "trust remove", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageError("usage: phc trust remove ID (iss_… or cus_…)")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if id := fs.Arg(0); strings.HasPrefix(id, "cus_") {
			if _, err := cl.UnpinCustodian(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "unpinned %s: its bundles are refused\n", printable(id))
			return nil
		}
		if _, err := cl.RemoveTrust(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s: tokens exchanged for its ID tokens are dead\n", printable(fs.Arg(0)))
		return nil
	}
	return usageError("unknown trust command %q (add, list, custodian, custodians, remove)", args[0])
}

// partiesText is ", authorized parties a, b" for a trust entry's
// authorized parties, or "" when there are none.
func partiesText(parties []string) string {
	if len(parties) == 0 {
		return ""
	}
	shown := make([]string, len(parties))
	for i, p := range parties {
		shown[i] = printable(p)
	}
	return ", authorized parties " + strings.Join(shown, ", ")
}

// runCard prints this custodian's public card, to give to another
// custodian that is to pin it (phc trust custodian CARD.json there).
func runCard(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "card", &c)
	out := fs.String("out", "", "write the card to this file (mode 0600) instead of stdout")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("usage: phc card [--out FILE]")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	card, err := cl.Card(ctx)
	if err != nil {
		return err
	}
	pretty, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		return err
	}
	pretty = append(pretty, '\n')
	if *out == "" {
		_, err := env.Stdout.Write(pretty)
		return err
	}
	return writeFile0600(*out, pretty)
}
