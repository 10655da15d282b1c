package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/phc-project/phc/custodian"
)

func printClaim(env *Env, c custodian.Claim) {
	fmt.Fprintf(env.Stdout, "%s@%d  %s = %s\n    %s, %s, %s, %s, by %s, personas [%s]\n",
		c.ID, c.Version, printable(c.Key), printable(string(c.Value)),
		c.Kind, c.Assertion, c.Confirmation.Status, c.Status, printable(c.WrittenBy),
		printable(strings.Join(c.Personas, ",")))
}

func runClaims(ctx context.Context, env *Env, args []string) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	var c common
	fs := newFlags(env, "claims "+sub, &c)
	asJSON := fs.Bool("json", false, "print JSON")
	var key, persona, value *string
	switch sub {
	case "list":
		key = fs.String("key", "", "only keys matching this pattern (a key, prefix.* or *)")
		persona = fs.String("persona", "", "only claims in this persona")
	case "correct":
		value = fs.String("value", "", "the corrected value as JSON (a bare word is taken as a string)")
	case "show", "versions", "delete", "dispute", "undispute", "retract":
	default:
		return usageError("unknown claims command %q (list, show, versions, correct, delete, dispute, undispute, retract)", sub)
	}
	id, rest := firstArg(args)
	if err := parse(fs, rest); err != nil {
		return err
	}
	if id == "" {
		id = fs.Arg(0)
	}
	if sub != "list" && id == "" {
		return usageError("usage: phc claims %s CLAIM_ID", sub)
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	// out is the answer as phc claims --json prints it: a list, or one
	// claim, and the revision.
	var out claimsJSON
	switch sub {
	case "list":
		var l custodian.ClaimList
		l, err = cl.Claims(ctx, *key, *persona)
		out = claimListJSON(l.Claims, nil, l.Revision)
	case "show":
		var r custodian.ClaimRead
		r, err = cl.Claim(ctx, id)
		out = claimListJSON(nil, &r.Claim, r.Revision)
	case "versions":
		var l custodian.ClaimList
		l, err = cl.Versions(ctx, id)
		out = claimListJSON(l.Claims, nil, l.Revision)
	case "delete":
		out.Revision, err = cl.DeleteClaim(ctx, id)
	default:
		var w custodian.Written
		switch sub {
		case "correct":
			raw := json.RawMessage(*value)
			if !json.Valid(raw) {
				raw, _ = json.Marshal(*value)
			}
			w, err = cl.Correct(ctx, id, custodian.CorrectionInput{Value: raw})
		case "dispute":
			w, err = cl.Dispute(ctx, id)
		case "undispute":
			w, err = cl.WithdrawDispute(ctx, id)
		case "retract":
			w, err = cl.Retract(ctx, id)
		}
		out = claimListJSON(nil, &w.Claim, w.Revision)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	if out.Claim != nil {
		printClaim(env, out.Claim.claim)
	}
	for _, cv := range out.Claims {
		printClaim(env, cv.claim)
	}
	if sub == "delete" {
		fmt.Fprintf(env.Stdout, "deleted (revision %d)\n", out.Revision)
	}
	if sub == "list" && len(out.Claims) == 0 {
		fmt.Fprintln(env.Stdout, "no claims")
	}
	return nil
}
