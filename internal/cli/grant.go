package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

func runGrant(ctx context.Context, env *Env, args []string) error {
	var c common
	if len(args) > 0 && args[0] == "list" {
		fs := newFlags(env, "grant list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		var out struct {
			Grants []struct {
				ID        string `json:"id"`
				Recipient struct {
					Kind string `json:"kind"`
					ID   string `json:"id"`
				} `json:"recipient"`
				Purpose    string   `json:"purpose"`
				Category   string   `json:"purpose_category"`
				Operations []string `json:"operations"`
				Selectors  struct {
					Keys     []string `json:"keys"`
					Personas []string `json:"personas"`
				} `json:"selectors"`
				ExpiresAt string  `json:"expires_at"`
				RevokedAt *string `json:"revoked_at"`
			} `json:"grants"`
		}
		if err := ownerDo(ctx, env, c, "GET", "/phc/v1/grants", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, out)
		}
		for _, g := range out.Grants {
			state := "until " + g.ExpiresAt
			if g.RevokedAt != nil {
				state = "revoked " + *g.RevokedAt
			}
			category := g.Category
			if category == "" {
				category = "unspecified"
			}
			fmt.Fprintf(env.Stdout, "%s  %s:%s  purpose %s (%s)  %s  keys [%s] personas [%s]  %s\n",
				g.ID, g.Recipient.Kind, printable(g.Recipient.ID), printable(g.Purpose), category,
				strings.Join(g.Operations, ","), printable(strings.Join(g.Selectors.Keys, ",")),
				printable(strings.Join(g.Selectors.Personas, ",")), state)
		}
		return nil
	}
	fs := newFlags(env, "grant", &c)
	to := fs.String("to", "", "recipient consumer name")
	purpose := fs.String("purpose", "", "the purpose the grant is for")
	category := fs.String("category", "", "what kind of use the purpose is: service_provision, personalisation, research_and_development, marketing, model_training, legal_compliance, security (no_training claims need one that is not model_training)")
	ops := fs.String("ops", "read", "comma-separated operations: read, contribute, confirm, share")
	keys := fs.String("keys", "", "comma-separated key patterns, e.g. learning.*")
	personas := fs.String("personas", "", "comma-separated persona ids")
	expires := fs.String("expires", "24h", "expiry: a duration from now (24h) or an RFC 3339 time")
	disclosure := fs.String("disclosure", "", "value or reference: how the values this grant serves reach the recipient (default: your per-tier setting, reference for critical)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *to == "" || *purpose == "" {
		return usageError("usage: phc grant --to CONSUMER --purpose P [--category C] [--ops read] [--keys K] [--personas P] [--expires 24h]")
	}
	at, err := parseExpiry(*expires)
	if err != nil {
		return usageError("bad --expires: %v", err)
	}
	sel := map[string][]string{}
	if k := splitList(*keys); len(k) > 0 {
		sel["keys"] = k
	}
	if p := splitList(*personas); len(p) > 0 {
		sel["personas"] = p
	}
	body := map[string]any{
		"recipient":  map[string]string{"kind": "consumer", "id": *to},
		"purpose":    *purpose,
		"operations": splitList(*ops),
		"selectors":  sel,
		"expires_at": at.UTC().Format(time.RFC3339),
	}
	if *category != "" {
		body["purpose_category"] = *category
	}
	if *disclosure != "" {
		body["disclosure"] = *disclosure
	}
	var out struct {
		ID       string `json:"id"`
		Revision uint64 `json:"revision"`
	}
	if err := ownerDo(ctx, env, c, "POST", "/phc/v1/grants", body, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "granted %s (revision %d)\n", out.ID, out.Revision)
	return nil
}

func parseExpiry(s string) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(d), nil
	}
	return time.Parse(time.RFC3339, s)
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
	var out struct {
		Revision uint64 `json:"revision"`
	}
	if err := ownerDo(ctx, env, c, "DELETE", "/phc/v1/grants/"+url.PathEscape(id), nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "revoked (revision %d)\n", out.Revision)
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
		var out struct {
			OK       bool     `json:"ok"`
			Count    uint64   `json:"count"`
			Problems []string `json:"problems"`
		}
		if err := cl.do(ctx, "GET", "/phc/v1/receipts/verify", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, out)
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
	var out struct {
		Receipts []struct {
			Seq        uint64   `json:"seq"`
			At         string   `json:"at"`
			Actor      string   `json:"actor"`
			Operation  string   `json:"operation"`
			Recipient  string   `json:"recipient"`
			Purpose    string   `json:"purpose"`
			Decision   string   `json:"decision"`
			Constraint string   `json:"constraint"`
			Records    []string `json:"records"`
		} `json:"receipts"`
	}
	if err := cl.do(ctx, "GET", fmt.Sprintf("/phc/v1/receipts?limit=%d", *limit), nil, &out); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	for _, r := range out.Receipts {
		line := fmt.Sprintf("%6d %s %-18s %-6s %s", r.Seq, r.At, r.Operation, r.Decision, printable(r.Actor))
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
