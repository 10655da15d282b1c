package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/humanfmt"
)

func runRequests(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "requests", &c)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	requests, err := cl.Requests(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, requestsJSONOf(requests))
	}
	for _, r := range requests {
		category := r.Category // as the app states it
		if category == "" {
			category = "unspecified"
		}
		fmt.Fprintf(env.Stdout, "%s  %-8s %s wants [%s] for %s, category %s (%s data, for %s, %s)\n", r.ID, r.Status,
			printable(r.Consumer), printable(strings.Join(r.Scope, ",")), printable(r.Purpose), category, r.Tier, humanfmt.Seconds(r.Duration), r.Usage)
	}
	return nil
}

func runApprove(ctx context.Context, env *Env, args []string) error {
	return decide(ctx, env, args, "approve")
}
func runDeny(ctx context.Context, env *Env, args []string) error {
	return decide(ctx, env, args, "deny")
}

// decide approves or denies a context request. Approving a request that
// may reach critical data asks for the owner's password again.
func decide(ctx context.Context, env *Env, args []string, verb string) error {
	var c common
	fs := newFlags(env, verb, &c)
	critical := fs.Bool("password", false, "re-enter the password (needed to approve critical data)")
	requires := fs.String("requires", "", "the grant also requires a current DEC admission under this policy (approve only)")
	dropRequires := fs.Bool("drop-requires", false, "drop the qualification the app's earlier grants over the scope require (approve only)")
	disclosure := fs.String("disclosure", "", "value or reference: how the grant's values reach the app (approve only; default: what the app asked, else your per-tier setting)")
	id, rest := firstArg(args)
	if err := parse(fs, rest); err != nil {
		return err
	}
	if id == "" {
		id = fs.Arg(0)
	}
	if id == "" {
		return usageError("usage: phc %s REQUEST_ID", verb)
	}
	in := custodian.DecisionInput{DropRequires: *dropRequires, Disclosure: *disclosure}
	if *critical {
		pw, err := password(env, false)
		if err != nil {
			return err
		}
		in.Password = string(pw)
	}
	if *requires != "" {
		in.Requires = &custodian.Requires{Qualification: *requires}
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.DecideRequest(ctx, id, verb == "approve", in)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %s %s\n", id, out.Status, out.GrantID)
	return nil
}
