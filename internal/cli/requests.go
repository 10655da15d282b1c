package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/phc-project/phc/internal/humanfmt"
)

func runRequests(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "requests", &c)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var out struct {
		Requests []struct {
			ID       string   `json:"request_id"`
			Consumer string   `json:"consumer"`
			Scope    []string `json:"scope"`
			Purpose  string   `json:"purpose"`
			Category string   `json:"purpose_category"`
			Tier     string   `json:"tier"`
			Status   string   `json:"status"`
			Duration int64    `json:"duration_seconds"`
			Usage    string   `json:"usage"`
		} `json:"requests"`
	}
	if err := ownerDo(ctx, env, c, "GET", "/context/requests", nil, &out); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	for _, r := range out.Requests {
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
	body := map[string]any{}
	if *critical {
		pw, err := password(env, false)
		if err != nil {
			return err
		}
		body["password"] = string(pw)
	}
	if *requires != "" {
		body["requires"] = map[string]string{"qualification": *requires}
	}
	if *dropRequires {
		body["drop_requires"] = true
	}
	if *disclosure != "" {
		body["disclosure"] = *disclosure
	}
	var out struct {
		Status  string `json:"status"`
		GrantID string `json:"grant_id"`
	}
	if err := ownerDo(ctx, env, c, "POST", "/context/requests/"+url.PathEscape(id)+"/"+verb, body, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %s %s\n", id, out.Status, out.GrantID)
	return nil
}
