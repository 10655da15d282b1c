package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

type claimView struct {
	ID           string          `json:"id"`
	Version      int             `json:"version"`
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value"`
	Kind         string          `json:"kind"`
	Assertion    string          `json:"assertion"`
	Status       string          `json:"status"`
	Personas     []string        `json:"personas"`
	WrittenBy    string          `json:"written_by"`
	Sensitivity  string          `json:"sensitivity"`
	Confirmation struct {
		Status string `json:"status"`
	} `json:"confirmation"`
}

func printClaim(env *Env, c claimView) {
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
	path := "/phc/v1/claims/" + url.PathEscape(id)
	var out struct {
		Claims   []claimView `json:"claims"`
		Claim    *claimView  `json:"claim"`
		Revision uint64      `json:"revision"`
	}
	switch sub {
	case "list":
		q := url.Values{}
		if *key != "" {
			q.Set("key", *key)
		}
		if *persona != "" {
			q.Set("persona", *persona)
		}
		err = cl.do(ctx, "GET", "/phc/v1/claims?"+q.Encode(), nil, &out)
	case "show":
		err = cl.do(ctx, "GET", path, nil, &out)
	case "versions":
		err = cl.do(ctx, "GET", path+"/versions", nil, &out)
	case "correct":
		raw := json.RawMessage(*value)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(*value)
		}
		err = cl.do(ctx, "PUT", path, map[string]any{"value": raw}, &out)
	case "delete":
		err = cl.do(ctx, "DELETE", path, nil, &out)
	case "dispute":
		err = cl.do(ctx, "POST", path+"/dispute", nil, &out)
	case "undispute":
		err = cl.do(ctx, "DELETE", path+"/dispute", nil, &out)
	case "retract":
		err = cl.do(ctx, "POST", path+"/retract", nil, &out)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	if out.Claim != nil {
		printClaim(env, *out.Claim)
	}
	for _, cv := range out.Claims {
		printClaim(env, cv)
	}
	if sub == "delete" {
		fmt.Fprintf(env.Stdout, "deleted (revision %d)\n", out.Revision)
	}
	if sub == "list" && len(out.Claims) == 0 {
		fmt.Fprintln(env.Stdout, "no claims")
	}
	return nil
}
