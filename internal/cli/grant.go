package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/humanfmt"
)

func runGrant(ctx context.Context, env *Env, args []string) error {
	var c common
	if len(args) > 0 && args[0] == "list" {
		fs := newFlags(env, "grant list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		grants, err := cl.Grants(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"grants": grants})
		}
		for _, g := range grants {
			state := "until " + humanfmt.Time(g.ExpiresAt)
			if g.NarrowedAt != nil {
				state += " (narrowed " + humanfmt.Time(*g.NarrowedAt) + ")"
			}
			if g.RevokedAt != nil {
				state = "revoked " + humanfmt.Time(*g.RevokedAt)
			}
			category := g.Category
			if category == "" {
				category = "unspecified"
			}
			recipient := g.Recipient.Kind + ":" + g.Recipient.ID
			if g.Recipient.Kind == "oidc" {
				recipient = "oidc:" + g.Recipient.ID + " of " + g.Recipient.Issuer
			}
			requires := ""
			if g.Requires != nil {
				requires = "  requires DEC admission " + g.Requires.Qualification
			}
			fmt.Fprintf(env.Stdout, "%s  %s  purpose %s (%s)  %s  keys [%s] personas [%s]  %s%s\n",
				g.ID, printable(recipient), printable(g.Purpose), category,
				strings.Join(g.Operations, ","), printable(strings.Join(g.Selectors.Keys, ",")),
				printable(strings.Join(g.Selectors.Personas, ",")), state, printable(requires))
		}
		return nil
	}
	if len(args) > 0 && args[0] == "narrow" {
		return runGrantNarrow(ctx, env, args[1:])
	}
	fs := newFlags(env, "grant", &c)
	to := fs.String("to", "", "recipient consumer name")
	oidcIssuer := fs.String("oidc", "", "or an OIDC recipient: its issuer (as phc trust list shows it), with --subject")
	subject := fs.String("subject", "", "the OIDC recipient's subject (its sub), with --oidc")
	purpose := fs.String("purpose", "", "the purpose the grant is for")
	category := fs.String("category", "", "what kind of use the purpose is: service_provision, personalisation, research_and_development, marketing, model_training, legal_compliance, security (no_training claims need one that is not model_training)")
	ops := fs.String("ops", "read", "comma-separated operations: read, contribute, confirm, share")
	keys := fs.String("keys", "", "comma-separated key patterns, e.g. learning.*")
	personas := fs.String("personas", "", "comma-separated persona ids")
	expires := fs.String("expires", "24h", "when it ends: a duration from now (12h, 90m, 2d, 4w), a date (2026-12-31: to the end of that day, local time) or a time (2026-12-31T18:00:00Z)")
	disclosure := fs.String("disclosure", "", "value or reference: how the values this grant serves reach the recipient (default: your per-tier setting, reference for critical)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*to == "") == (*oidcIssuer == "") || *purpose == "" {
		return usageError("usage: phc grant --to CONSUMER | --oidc ISSUER --subject SUB, --purpose P [--category C] [--ops read] [--keys K] [--personas P] [--expires 24h] (phc help grant)")
	}
	if (*oidcIssuer == "") != (*subject == "") {
		return usageError("--oidc ISSUER and --subject SUB go together: the recipient is the subject SUB of the issuer ISSUER")
	}
	at, err := parseExpiry(*expires, time.Now())
	if err != nil {
		return usageError("%v", err)
	}
	for _, o := range splitList(*ops) {
		if !slices.Contains(custodian.Operations, o) {
			return usageError("--ops: %q is not an operation; give one or more of %s, comma-separated (e.g. --ops read,contribute)", printable(o), strings.Join(custodian.Operations, ", "))
		}
	}
	if len(splitList(*ops)) == 0 {
		return usageError("--ops: give one or more of %s, comma-separated", strings.Join(custodian.Operations, ", "))
	}
	if *category != "" && !slices.Contains(custodian.PurposeCategories, *category) {
		return usageError("--category: %q is not a purpose category; give one of %s", printable(*category), strings.Join(custodian.PurposeCategories, ", "))
	}
	if len(splitList(*keys)) == 0 && len(splitList(*personas)) == 0 {
		return usageError("a grant needs something to cover: --keys with key patterns (--keys 'learning.*'), --personas with persona ids (--personas learning), or both")
	}
	in := custodian.GrantInput{
		Recipient:  custodian.Recipient{Kind: "consumer", ID: *to},
		Purpose:    *purpose,
		Category:   *category,
		Operations: splitList(*ops),
		Selectors:  custodian.Selectors{Keys: nonEmpty(splitList(*keys)), Personas: nonEmpty(splitList(*personas))},
		ExpiresAt:  at.UTC().Truncate(time.Second), // to the second, as the grant shows it
		Disclosure: *disclosure,
	}
	if *oidcIssuer != "" {
		in.Recipient = custodian.Recipient{Kind: "oidc", Issuer: *oidcIssuer, ID: *subject}
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.CreateGrant(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "granted %s (revision %d)\n", out.ID, out.Revision)
	return nil
}

// parseExpiry reads an expiry as a person types it: a duration from now
// (Go's, like 12h or 90m, or whole days or weeks, 2d or 4w), a date
// (2026-12-31, meaning to the end of that day in local time), or an RFC
// 3339 time.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("--expires %q: give a duration from now (12h, 90m, 2d, 4w), a date (2026-12-31: to the end of that day) or a time (2026-12-31T18:00:00Z)", printable(s))
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--expires %q: the grant must end in the future", printable(s))
		}
		return now.Add(d), nil
	}
	for unit, length := range map[string]int{"d": 1, "w": 7} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			days, err := strconv.Atoi(n)
			if err != nil || days <= 0 || days > 100*365 {
				return time.Time{}, bad
			}
			return now.AddDate(0, 0, days*length), nil
		}
	}
	if day, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		return day.AddDate(0, 0, 1), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, bad
}

// runGrantNarrow narrows a grant in force in place: each flag given
// replaces that term of the grant, each left out keeps it. The custodian
// refuses anything wider than the grant.
func runGrantNarrow(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "grant narrow", &c)
	ops := fs.String("ops", "", "the operations it keeps, comma-separated (a subset of the grant's)")
	keys := fs.String("keys", "", "the key patterns it keeps, comma-separated, each within one of the grant's (e.g. contact.email within contact.*)")
	personas := fs.String("personas", "", "the persona ids it keeps, comma-separated (a subset of the grant's, or any when it names none)")
	claims := fs.String("claims", "", "the claim ids it keeps, comma-separated (a subset of the grant's, or any when it names none)")
	expires := fs.String("expires", "", "an earlier end: a duration from now (12h, 2d), a date (2026-12-31) or a time (2026-12-31T18:00:00Z)")
	id, ok, err := parseOne(fs, args)
	if err != nil {
		return err
	}
	const usage = "usage: phc grant narrow GRANT_ID [--ops read] [--keys K] [--personas P] [--claims C] [--expires 12h] (phc help grant narrow)"
	if !ok {
		return usageError(usage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var in custodian.GrantTerms
	if set["ops"] {
		list := splitList(*ops)
		for _, o := range list {
			if !slices.Contains(custodian.Operations, o) {
				return usageError("--ops: %q is not an operation; give one or more of %s, comma-separated", printable(o), strings.Join(custodian.Operations, ", "))
			}
		}
		if len(list) == 0 {
			return usageError("--ops: give the operations the grant keeps; to end the grant, phc revoke %s", printable(id))
		}
		in.Operations = list
	}
	// A selector given replaces the grant's (given empty, it clears it);
	// one left nil keeps it.
	given := func(name string, v *string) []string {
		if !set[name] {
			return nil
		}
		return append([]string{}, splitList(*v)...)
	}
	sel := custodian.TermSelectors{Keys: given("keys", keys), Personas: given("personas", personas), Claims: given("claims", claims)}
	if set["keys"] || set["personas"] || set["claims"] {
		in.Selectors = &sel
	}
	if set["expires"] {
		at, err := parseExpiry(*expires, time.Now())
		if err != nil {
			return usageError("%v", err)
		}
		in.ExpiresAt = new(at.UTC().Truncate(time.Second))
	}
	if in.Operations == nil && in.Selectors == nil && in.ExpiresAt == nil {
		return usageError("name at least one term to narrow: --ops, --keys, --personas, --claims or --expires (" + usage + ")")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.NarrowGrant(ctx, id, in)
	if err != nil {
		return err
	}
	g := out.Grant
	fmt.Fprintf(env.Stdout, "narrowed %s (revision %d): %s  keys [%s] personas [%s] claims [%s]  until %s\n",
		printable(id), out.Revision, strings.Join(g.Operations, ","), printable(strings.Join(g.Selectors.Keys, ",")),
		printable(strings.Join(g.Selectors.Personas, ",")), strings.Join(g.Selectors.Claims, ","), humanfmt.Time(g.ExpiresAt))
	return nil
}

func runRevoke(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "revoke", &c)
	id, rest := firstArg(args)
	if err := parse(fs, rest); err != nil {
		return err
	}
	if id == "" {
		id = fs.Arg(0)
	}
	if id == "" {
		return usageError("usage: phc revoke GRANT_ID")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	rev, err := cl.RevokeGrant(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "revoked (revision %d)\n", rev)
	return nil
}

func runReceipts(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "receipts", &c)
	limit := fs.Int("limit", 20, "how many, newest first (at most 1000)")
	verify := fs.Bool("verify", false, "verify the whole hash chain instead")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	if *verify {
		out, err := cl.VerifyReceipts(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, verificationJSON{OK: out.OK, Count: out.Count, Problems: out.Problems})
		}
		if !out.OK {
			for _, p := range out.Problems {
				fmt.Fprintln(env.Stdout, printable(p))
			}
			return fmt.Errorf("the receipt chain does not verify (%d receipts)", out.Count)
		}
		fmt.Fprintf(env.Stdout, "ok: %d receipts, chain intact\n", out.Count)
		return nil
	}
	receipts, err := cl.Receipts(ctx, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, receiptsJSONOf(receipts))
	}
	for _, r := range receipts {
		line := fmt.Sprintf("%6d %s %-18s %-6s %s", r.Seq, humanfmt.Time(r.At), r.Operation, r.Decision, printable(r.Actor))
		if r.Purpose != "" {
			line += " purpose=" + printable(r.Purpose)
		}
		if r.Constraint != "" {
			line += " " + r.Constraint
		}
		if len(r.Records) > 0 {
			line += " [" + strings.Join(r.Records, " ") + "]"
		}
		fmt.Fprintln(env.Stdout, line)
	}
	return nil
}
