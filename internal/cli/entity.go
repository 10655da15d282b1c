package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/phc-project/phc/custodian"
)

// runEntity is phc entity add TYPE [--name N] … | phc entity list.
func runEntity(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "list") {
		return usageError("usage: phc entity add TYPE [--name NAME] [--key KEY] [--sensitivity TIER] [--persona ID …] | phc entity list (phc help entity)")
	}
	var c common
	if args[0] == "list" {
		fs := newFlags(env, "entity list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		entities, err := cl.Entities(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"entities": entities})
		}
		for _, e := range entities {
			fmt.Fprintf(env.Stdout, "%s  %s\n", e.ID, printable(e.Type))
		}
		return nil
	}
	fs := newFlags(env, "entity add", &c)
	name := fs.String("name", "", "its name: also made a claim about it, so grants decide who sees it")
	key := fs.String("key", "", "the name claim's key (default TYPE.name)")
	tier := fs.String("sensitivity", "", "the name claim's tier (public, standard, sensitive, critical; default by key)")
	var personas multiFlag
	fs.Var(&personas, "persona", "a persona the name claim is in (repeatable)")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	typ, ok, err := parseOne(fs, args[1:])
	if err != nil {
		return err
	}
	if !ok {
		return usageError("usage: phc entity add TYPE [--name NAME] [--key KEY] [--sensitivity TIER] [--persona ID …] (TYPE: person, project, goal, event, organisation, …)")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.CreateEntity(ctx, custodian.EntityInput{Type: typ, Name: *name, Key: *key, Sensitivity: *tier, Personas: personas})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	fmt.Fprintln(env.Stdout, out.Entity.ID)
	if out.Claim != nil {
		fmt.Fprintf(env.Stderr, "its name is claim %s\n", out.Claim.ID)
	}
	return nil
}

// runSummary is phc summary add TEXT --from CLAIM@VERSION …
func runSummary(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError("usage: phc summary add TEXT --from clm_…@VERSION [--from …] (phc help summary)")
	}
	var c common
	fs := newFlags(env, "summary add", &c)
	var from multiFlag
	fs.Var(&from, "from", "a claim version it is derived from, as clm_…@VERSION (repeatable; phc claims shows them)")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	text, ok, err := parseOne(fs, args[1:])
	if err != nil {
		return err
	}
	if !ok || len(from) == 0 {
		return usageError("usage: phc summary add TEXT --from clm_…@VERSION [--from …]: a summary says what it is derived from")
	}
	for _, f := range from {
		if id, v, ok := strings.Cut(f, "@"); !ok || !strings.HasPrefix(id, "clm_") && !strings.HasPrefix(id, "sum_") || v == "" {
			return usageError("--from %q: give a claim (or summary) and its version, as clm_…@2 (phc claims shows them as ID@VERSION)", printable(f))
		}
	}
	value, err := json.Marshal(text)
	if err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.CreateSummary(ctx, custodian.SummaryInput{Value: value, DerivedFrom: from})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	fmt.Fprintln(env.Stdout, out.Summary.ID)
	return nil
}

// runPropose is phc propose KEY --value V: the owner's own proposal, into
// the review queue like an app's (phc review confirm makes it a claim).
func runPropose(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "propose", &c)
	value := fs.String("value", "", "the value as JSON (a bare word or sentence is taken as a string)")
	kind := fs.String("kind", "fact", "fact, preference, goal, commitment, decision, relationship or note")
	assertion := fs.String("assertion", "reported", "reported, observed, inferred or source_reference")
	subject := fs.String("subject", "", "what it is about: an entity (ent_…); default yourself")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	key, ok, err := parseOne(fs, args)
	if err != nil {
		return err
	}
	if !ok || *value == "" {
		return usageError("usage: phc propose KEY --value VALUE [--kind K] [--assertion A] [--subject ent_…]")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.Propose(ctx, custodian.ProposalInput{Key: key, Value: jsonOrString(*value), Kind: *kind, Assertion: *assertion, Subject: *subject})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, out)
	}
	fmt.Fprintln(env.Stdout, out.ProposalID)
	return nil
}

// jsonOrString is s as JSON if it is JSON, else s as a string.
func jsonOrString(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	raw, _ := json.Marshal(s)
	return raw
}
