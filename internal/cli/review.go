package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"slices"
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
	Evidence   []struct {
		Ref string `json:"ref"`
	} `json:"evidence"`
	Current *struct {
		ClaimID   string          `json:"claim_id"`
		Version   int             `json:"version"`
		Value     json.RawMessage `json:"value"`
		WrittenBy string          `json:"written_by"`
	} `json:"current"`
	Diff []struct {
		Path string          `json:"path"`
		From json.RawMessage `json:"from"`
		To   json.RawMessage `json:"to"`
	} `json:"diff"`
	Conflict bool `json:"conflict"`
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
				p.Producer.Authenticated.Kind, printable(p.Producer.Authenticated.ID), humanTime(p.ProposedAt),
				printable(string(p.Value)))
			if reported := p.Producer.Reported; len(reported) > 0 {
				keys := make([]string, 0, len(reported))
				for k := range reported {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				parts := make([]string, len(keys))
				for i, k := range keys {
					parts[i] = printable(k) + "=" + printable(reported[k])
				}
				fmt.Fprintf(env.Stdout, "    reported by the app (unverified): %s\n", strings.Join(parts, " "))
			}
			for _, e := range p.Evidence {
				fmt.Fprintf(env.Stdout, "    evidence: %s\n", printable(e.Ref))
			}
			if cur := p.Current; cur != nil {
				fmt.Fprintf(env.Stdout, "    CONFLICT: %s already has %s version %d (written by %s): %s\n",
					printable(p.Key), cur.ClaimID, cur.Version, printable(cur.WrittenBy), printable(string(cur.Value)))
				if len(p.Diff) == 0 {
					fmt.Fprintln(env.Stdout, "    diff: the same value")
				}
				for _, d := range p.Diff {
					path := d.Path
					if path == "" {
						path = "(the value)"
					}
					switch {
					case d.From == nil:
						fmt.Fprintf(env.Stdout, "    diff: + %s %s\n", printable(path), printable(string(d.To)))
					case d.To == nil:
						fmt.Fprintf(env.Stdout, "    diff: - %s %s\n", printable(path), printable(string(d.From)))
					default:
						fmt.Fprintf(env.Stdout, "    diff: ~ %s %s -> %s\n", printable(path), printable(string(d.From)), printable(string(d.To)))
					}
				}
			}
		}
		return nil
	case "confirm":
		fs := newFlags(env, "review confirm", &c)
		personas := fs.String("persona", "", "comma-separated persona ids to confirm into")
		ids, err := idsAndFlags(fs, args)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return usageError("usage: phc review confirm PROPOSAL_ID… --persona ID[,ID]")
		}
		if len(ids) > 1 {
			return bulkReview(ctx, env, c, "confirm", map[string]any{"ids": ids, "personas": splitList(*personas)})
		}
		id := ids[0]
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
		ids, err := idsAndFlags(fs, args)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return usageError("usage: phc review reject PROPOSAL_ID… [--reason TEXT]")
		}
		if len(ids) > 1 {
			return bulkReview(ctx, env, c, "reject", map[string]any{"ids": ids, "reason": *reason})
		}
		id := ids[0]
		if err := ownerDo(ctx, env, c, "POST", "/phc/v1/proposals/"+url.PathEscape(id)+"/reject", map[string]string{"reason": *reason}, nil); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "rejected")
		return nil
	}
	return usageError("unknown review command %q", sub)
}

// idsAndFlags parses args where positional arguments (ids, names, files)
// and flags may come in any order: those before the first flag, then those
// after the flags.
func idsAndFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var ids []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		ids, args = append(ids, args[0]), args[1:]
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return append(ids, fs.Args()...), nil
}

// bulkReview decides many proposals in one write (POST
// /phc/v1/review/confirm|reject) and prints each outcome.
func bulkReview(ctx context.Context, env *Env, c common, verb string, body map[string]any) error {
	var out struct {
		Decided int `json:"decided"`
		Items   []struct {
			ProposalID string `json:"proposal_id"`
			ClaimID    string `json:"claim_id"`
			Version    int    `json:"version"`
			Constraint string `json:"constraint"`
			Error      string `json:"error"`
		} `json:"items"`
		Revision uint64 `json:"revision"`
	}
	if err := ownerDo(ctx, env, c, "POST", "/phc/v1/review/"+verb, body, &out); err != nil {
		return err
	}
	for _, it := range out.Items {
		switch {
		case it.Constraint != "":
			fmt.Fprintf(env.Stdout, "%s  not decided: %s (%s)\n", printable(it.ProposalID), it.Constraint, printable(it.Error))
		case it.ClaimID != "":
			fmt.Fprintf(env.Stdout, "%s  confirmed as %s version %d\n", printable(it.ProposalID), it.ClaimID, it.Version)
		default:
			fmt.Fprintf(env.Stdout, "%s  %sed\n", printable(it.ProposalID), verb)
		}
	}
	fmt.Fprintf(env.Stdout, "%d of %d %sed in one write (revision %d)\n", out.Decided, len(out.Items), verb, out.Revision)
	if out.Decided < len(out.Items) {
		return fmt.Errorf("%d of %d proposals were not decided", len(out.Items)-out.Decided, len(out.Items))
	}
	return nil
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
