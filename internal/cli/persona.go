package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

const personaUsage = "usage: phc persona add ID NAME | list | rename ID NAME | " +
	"set ID [--preference TEXT …|--no-preferences] [--guardrail G …|--no-guardrails] | remove ID"

// runPersona creates, lists, renames, edits and removes personas (owner).
func runPersona(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usageError(personaUsage)
	}
	var c common
	switch args[0] {
	case "add":
		fs := newFlags(env, "persona add", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return usageError("usage: phc persona add ID NAME")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if _, err := cl.CreatePersona(ctx, custodian.PersonaInput{ID: fs.Arg(0), Name: fs.Arg(1)}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "persona %s created\n", printable(fs.Arg(0)))
		return nil
	case "list":
		fs := newFlags(env, "persona list", &c)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		personas, err := cl.Personas(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.Stdout, map[string]any{"personas": personas})
		}
		for _, p := range personas {
			fmt.Fprintf(env.Stdout, "%-20s %s\n", printable(p.ID), printable(p.Name))
			for _, pref := range p.Preferences {
				fmt.Fprintf(env.Stdout, "    preference (advisory): %s\n", printable(pref))
			}
			for _, g := range p.Guardrails {
				raw, err := json.Marshal(g)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "    guardrail: %s\n", printable(string(raw)))
			}
		}
		return nil
	case "rename":
		fs := newFlags(env, "persona rename", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return usageError("usage: phc persona rename ID NAME")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if _, err := cl.UpdatePersona(ctx, fs.Arg(0), client.PersonaUpdate{Name: fs.Arg(1)}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "persona %s renamed\n", printable(fs.Arg(0)))
		return nil
	case "set":
		fs := newFlags(env, "persona set", &c)
		var prefs, guards multiFlag
		fs.Var(&prefs, "preference", "an advisory preference (repeat; replaces the persona's)")
		fs.Var(&guards, "guardrail", "a guardrail (repeat; replaces the persona's): no_training, local_processing_only, purpose_only=P[,P…], max_sensitivity=TIER, keys_only=PATTERN[,PATTERN…], or a JSON object")
		noPrefs := fs.Bool("no-preferences", false, "remove every preference")
		noGuards := fs.Bool("no-guardrails", false, "remove every guardrail")
		id, ok, err := parseOne(fs, args[1:])
		if err != nil {
			return err
		}
		if !ok {
			id = ""
		}
		var in client.PersonaUpdate
		switch {
		case *noPrefs && len(prefs) > 0:
			return usageError("--preference and --no-preferences together")
		case *noPrefs:
			in.Preferences = &[]string{}
		case len(prefs) > 0:
			list := []string(prefs)
			in.Preferences = &list
		}
		switch {
		case *noGuards && len(guards) > 0:
			return usageError("--guardrail and --no-guardrails together")
		case *noGuards:
			in.Guardrails = &[]json.RawMessage{}
		case len(guards) > 0:
			gs := make([]json.RawMessage, 0, len(guards))
			for _, g := range guards {
				v, err := parseGuardrail(g)
				if err != nil {
					return err
				}
				raw, err := json.Marshal(v)
				if err != nil {
					return err
				}
				gs = append(gs, raw)
			}
			in.Guardrails = &gs
		}
		if id == "" || (in.Preferences == nil && in.Guardrails == nil) {
			return usageError("usage: phc persona set ID [--preference TEXT …|--no-preferences] [--guardrail G …|--no-guardrails]")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if _, err := cl.UpdatePersona(ctx, id, in); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "persona %s updated\n", printable(id))
		return nil
	case "remove":
		fs := newFlags(env, "persona remove", &c)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageError("usage: phc persona remove ID")
		}
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		out, err := cl.DeletePersona(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "persona %s removed (revision %d): %d claims left it (none deleted)\n",
			printable(fs.Arg(0)), out.Revision, len(out.Claims))
		for _, g := range out.GrantsNarrowed {
			fmt.Fprintf(env.Stdout, "    grant %s no longer selects it\n", printable(g))
		}
		for _, g := range out.GrantsRevoked {
			fmt.Fprintf(env.Stdout, "    grant %s revoked: it selected no other persona\n", printable(g))
		}
		return nil
	}
	return usageError("unknown persona command %q", args[0])
}

// parseGuardrail reads a --guardrail: a JSON object as is, a bare type, or
// TYPE=VALUE[,VALUE…] for the types that take parameters.
func parseGuardrail(s string) (any, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, usageError("--guardrail %q: not a JSON object", s)
		}
		return v, nil
	}
	typ, val, hasVal := strings.Cut(s, "=")
	g := map[string]any{"type": typ}
	if !hasVal {
		return g, nil
	}
	list := strings.Split(val, ",")
	switch typ {
	case "purpose_only":
		g["params"] = map[string]any{"purposes": list}
	case "keys_only":
		g["params"] = map[string]any{"keys": list}
	case "max_sensitivity":
		g["params"] = map[string]any{"tier": val}
	default:
		return nil, usageError("--guardrail %q: %s takes no value", s, typ)
	}
	return g, nil
}
