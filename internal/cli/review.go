package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

type proposalView struct {
	ID        string          `json:"proposal_id"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Kind      string          `json:"kind"`
	Assertion string          `json:"assertion"`
	Producer  struct {
		Authenticated struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		} `json:"authenticated"`
		Reported map[string]string `json:"reported"`
	} `json:"producer"`
	ProposedAt string `json:"proposed_at"`
}

func runReview(ctx context.Context, env *Env, args []string) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	var c common
	switch sub {
	case "list":
		fs := newFlags(env, "review list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args); err != nil {
			return err
		}
		var out struct {
			Proposals []json.RawMessage `json:"proposals"`
		}
		if err := ownerDo(ctx, env, c, "GET", "/phc/v1/review", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, out)
		}
		if len(out.Proposals) == 0 {
			fmt.Fprintln(env.Stdout, "the review queue is empty")
		}
		for _, raw := range out.Proposals {
			var p proposalView
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s  %s  (%s, %s) from %s:%s at %s\n    value: %s\n",
				p.ID, printable(p.Key), p.Kind, p.Assertion,
				p.Producer.Authenticated.Kind, printable(p.Producer.Authenticated.ID), p.ProposedAt,
				printable(string(p.Value)))
		}
		return nil
	case "confirm":
		fs := newFlags(env, "review confirm", &c)
		personas := fs.String("persona", "", "comma-separated persona ids to confirm into")
		id, rest := firstArg(args)
		if err := parse(fs, rest); err != nil {
			return err
		}
		if id == "" {
			id = fs.Arg(0)
		}
		if id == "" {
			return usageError("usage: phc review confirm PROPOSAL_ID --persona ID[,ID]")
		}
		var out struct {
			Claim struct {
				ID      string `json:"id"`
				Version int    `json:"version"`
			} `json:"claim"`
			Revision uint64 `json:"revision"`
		}
		body := map[string]any{"personas": splitList(*personas)}
		if err := ownerDo(ctx, env, c, "POST", "/phc/v1/proposals/"+url.PathEscape(id)+"/confirm", body, &out); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "confirmed as %s version %d (revision %d)\n", out.Claim.ID, out.Claim.Version, out.Revision)
		return nil
	case "reject":
		fs := newFlags(env, "review reject", &c)
		reason := fs.String("reason", "", "why")
		id, rest := firstArg(args)
		if err := parse(fs, rest); err != nil {
			return err
		}
		if id == "" {
			id = fs.Arg(0)
		}
		if id == "" {
			return usageError("usage: phc review reject PROPOSAL_ID [--reason TEXT]")
		}
		if err := ownerDo(ctx, env, c, "POST", "/phc/v1/proposals/"+url.PathEscape(id)+"/reject", map[string]string{"reason": *reason}, nil); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "rejected")
		return nil
	}
	return usageError("unknown review command %q", sub)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
