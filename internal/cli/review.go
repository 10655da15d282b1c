package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/humanfmt"
)

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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		items, err := cl.Review(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"proposals": items})
		}
		if len(items) == 0 {
			fmt.Fprintln(env.Stdout, "the review queue is empty")
		}
		for _, p := range items {
			fmt.Fprintf(env.Stdout, "%s  %s  (%s, %s) from %s:%s at %s\n    value: %s\n",
				p.ID, printable(p.Key), p.Kind, p.Assertion,
				p.Producer.Authenticated.Kind, printable(p.Producer.Authenticated.ID), humanfmt.Time(p.ProposedAt),
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
			if p.Blind {
				fmt.Fprintln(env.Stdout, "    BLIND: the app may not read this field; it was answered as for a new field (committed) and does not see this proposal")
			}
			if cur := p.Current; cur != nil {
				fmt.Fprintf(env.Stdout, "    CONFLICT: %s already has %s version %d (written by %s): %s\n",
					printable(p.Key), cur.ClaimID, cur.Version, printable(cur.WrittenBy), printable(string(cur.Value)))
				printDiff(env.Stdout, "    ", p.Diff)
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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if len(ids) > 1 {
			out, err := cl.ConfirmBulk(ctx, custodian.BulkConfirmInput{IDs: ids, Personas: splitList(*personas)})
			return bulkReview(env, "confirm", out, err)
		}
		out, err := cl.Confirm(ctx, ids[0], custodian.ConfirmInput{Personas: splitList(*personas)})
		if err != nil {
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
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if len(ids) > 1 {
			out, err := cl.RejectBulk(ctx, custodian.BulkRejectInput{IDs: ids, Reason: *reason})
			return bulkReview(env, "reject", out, err)
		}
		if _, err := cl.Reject(ctx, ids[0], custodian.RejectInput{Reason: *reason}); err != nil {
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

// bulkReview prints each outcome of many proposals decided in one write
// (POST /phc/v1/review/confirm|reject), or the write's error.
func bulkReview(env *Env, verb string, out custodian.BulkDecision, err error) error {
	if err != nil {
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

// nonEmpty is list, or nil when it is empty (a member left out).
func nonEmpty(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list
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

// printDiff writes, one line each after indent, how a value differs from
// the one here: + a member added, - one removed, ~ one changed.
func printDiff(w io.Writer, indent string, diff []custodian.ValueChange) {
	if len(diff) == 0 {
		fmt.Fprintln(w, indent+"diff: the same value")
	}
	for _, d := range diff {
		path := d.Path
		if path == "" {
			path = "(the value)"
		}
		switch {
		case d.From == nil:
			fmt.Fprintf(w, "%sdiff: + %s %s\n", indent, printable(path), printable(string(d.To)))
		case d.To == nil:
			fmt.Fprintf(w, "%sdiff: - %s %s\n", indent, printable(path), printable(string(d.From)))
		default:
			fmt.Fprintf(w, "%sdiff: ~ %s %s -> %s\n", indent, printable(path), printable(string(d.From)), printable(string(d.To)))
		}
	}
}
