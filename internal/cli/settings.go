package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

// setting is one of the owner's settings (GET/PUT /phc/v1/settings), as
// phc settings shows and sets it.
type setting struct {
	name string
	kind string // "bool", "int", "string", "list" (a comma-separated string list), "tiers" (disclosure)
	// def is what the daemon uses while the setting is left out (or 0).
	def string
	doc string
}

// settingsTable is every setting the CLI knows. A setting the daemon
// answers that is not here is still shown, and set by its JSON type.
var settingsTable = []setting{
	{"auto_grant", "string", "public", "the highest tier every approved app reads without asking: none, public or standard"},
	{"reads_per_minute", "int", "60", "the most reads a service token makes a minute"},
	{"writes_per_minute", "int", "10", "the most writes a service token makes a minute"},
	{"live_tokens_per_app", "int", "10", "the most service tokens an app holds at once"},
	{"pending_proposals_per_app", "int", "100", "the most of an app's proposals waiting for review"},
	{"receipt_retention_days", "int", "365", "how long receipts are kept in full"},
	{"long_lived_tokens", "bool", "false", "let a service token live up to a year (else at most 30 days)"},
	{"elicited_approvals", "bool", "false", "let an app's MCP host ask you to approve a request for sensitive data"},
	{"local_vaults", "bool", "false", "turn on the Client-Vault resolve endpoint for local vault hooks"},
	{"disclosure", "tiers", "", "how each tier's values reach readers: disclosure.TIER value|reference"},
	{"user_only_write", "list", "", "key patterns only you may write, besides the built-in ones (comma-separated)"},
}

// disclosureTiers are the tiers of the disclosure setting, with their
// defaults.
var disclosureTiers = []struct{ tier, def string }{
	{"public", "value"}, {"standard", "value"}, {"sensitive", "value"}, {"critical", "reference"},
}

func settingNamed(name string) (setting, bool) {
	i := slices.IndexFunc(settingsTable, func(s setting) bool { return s.name == name })
	if i < 0 {
		return setting{}, false
	}
	return settingsTable[i], true
}

// settingNames are the names phc settings get and set take, disclosure's
// one per tier.
func settingNames() []string {
	var out []string
	for _, s := range settingsTable {
		if s.kind == "tiers" {
			for _, t := range disclosureTiers {
				out = append(out, s.name+"."+t.tier)
			}
			continue
		}
		out = append(out, s.name)
	}
	return out
}

// runSettings is phc settings [get [NAME] | set NAME VALUE …].
func runSettings(ctx context.Context, env *Env, args []string) error {
	sub, rest := firstArg(args)
	switch sub {
	case "", "get":
		if sub == "" {
			rest = args
		}
		return runSettingsGet(ctx, env, rest)
	case "set":
		return runSettingsSet(ctx, env, rest)
	}
	return usageError("unknown settings command %q: phc settings get [NAME], phc settings set NAME VALUE", sub)
}

// parsePositional parses args whose flags and positional arguments may
// come in any order, and returns the positional ones.
func parsePositional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// getSettings reads the owner's settings as the daemon answers them, by
// name (a setting at its default is absent).
func getSettings(ctx context.Context, cl *client.Client) (map[string]json.RawMessage, error) {
	s, err := cl.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return settingsByName(s)
}

// settingsByName is s as the daemon writes it, member by member: the
// daemon encodes the same type, so a member it left out (a setting at its
// default) is left out here too.
func settingsByName(s custodian.Settings) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// settingLines are the lines phc settings get prints for cur: each
// setting's name and value, "(default)" after one left at its default.
func settingLines(cur map[string]json.RawMessage) [][2]string {
	var lines [][2]string
	for _, s := range settingsTable {
		raw, set := cur[s.name]
		switch s.kind {
		case "tiers":
			var m map[string]string
			json.Unmarshal(raw, &m)
			for _, t := range disclosureTiers {
				if v, ok := m[t.tier]; ok {
					lines = append(lines, [2]string{s.name + "." + t.tier, v})
				} else {
					lines = append(lines, [2]string{s.name + "." + t.tier, t.def + " (default)"})
				}
			}
			continue
		case "list":
			var l []string
			json.Unmarshal(raw, &l)
			if len(l) == 0 {
				lines = append(lines, [2]string{s.name, "(none besides the built-in ones)"})
			} else {
				lines = append(lines, [2]string{s.name, strings.Join(l, ",")})
			}
			continue
		}
		v := strings.Trim(string(raw), `"`)
		if !set || v == "0" || v == s.def {
			lines = append(lines, [2]string{s.name, s.def + " (default)"})
			continue
		}
		lines = append(lines, [2]string{s.name, v})
	}
	// Settings this phc does not know (a newer daemon's), as answered.
	for _, name := range slices.Sorted(maps.Keys(cur)) {
		if _, ok := settingNamed(name); !ok {
			lines = append(lines, [2]string{name, string(cur[name])})
		}
	}
	return lines
}

func runSettingsGet(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "settings get", &c)
	asJSON := fs.Bool("json", false, "print the settings as the daemon answers them (JSON)")
	pos, err := parsePositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError("usage: phc settings get [NAME] (one name at most)")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cur, err := getSettings(ctx, cl)
	if err != nil {
		return err
	}
	if *asJSON && len(pos) == 0 {
		return printJSON(env.Stdout, cur)
	}
	lines := settingLines(cur)
	if len(pos) == 1 {
		name := pos[0]
		var found [][2]string
		for _, l := range lines {
			if l[0] == name || strings.HasPrefix(l[0], name+".") {
				found = append(found, l)
			}
		}
		switch {
		case len(found) == 0:
			return usageError("no setting %q: the settings are %s", printable(name), strings.Join(settingNames(), ", "))
		case len(found) == 1 && found[0][0] == name:
			// One value alone, for scripts: without "(default)".
			fmt.Fprintln(env.Stdout, printable(strings.TrimSuffix(found[0][1], " (default)")))
			return nil
		}
		lines = found
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(env.Stdout, "%-*s  %s\n", width, l[0], printable(l[1]))
	}
	return nil
}

func runSettingsSet(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "settings set", &c)
	pos, err := parsePositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || len(pos)%2 != 0 {
		return usageError("usage: phc settings set NAME VALUE [NAME VALUE …] (phc settings get lists the names)")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cur, err := getSettings(ctx, cl)
	if err != nil {
		return err
	}
	patch := client.SettingsPatch{}
	var disclosure map[string]string
	for i := 0; i < len(pos); i += 2 {
		name, value := pos[i], pos[i+1]
		if tier, ok := strings.CutPrefix(name, "disclosure."); ok {
			if disclosure == nil {
				disclosure = map[string]string{}
				json.Unmarshal(cur["disclosure"], &disclosure)
			}
			if !slices.ContainsFunc(disclosureTiers, func(t struct{ tier, def string }) bool { return t.tier == tier }) {
				return usageError("no setting %q: disclosure.TIER takes a tier: public, standard, sensitive or critical", printable(name))
			}
			switch value {
			case "default":
				delete(disclosure, tier)
			case "value", "reference":
				disclosure[tier] = value
			default:
				return usageError("%s is value or reference (or default), not %q", name, printable(value))
			}
			patch["disclosure"] = disclosure
			continue
		}
		v, err := settingValue(name, value, cur)
		if err != nil {
			return err
		}
		patch[name] = v
	}
	out, err := cl.PutSettings(ctx, patch)
	if err != nil {
		return err
	}
	settings, err := settingsByName(out.Settings)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	for i := 0; i < len(pos); i += 2 {
		changed[pos[i]] = true
	}
	for _, l := range settingLines(settings) {
		if changed[l[0]] {
			fmt.Fprintf(env.Stdout, "%s  %s\n", l[0], printable(l[1]))
		}
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", printable(w))
	}
	return nil
}

// settingValue is the JSON value of setting name written as text: by the
// setting's kind, or, for one this phc does not know, by the type of its
// current value. "default" puts a number or a switch back to its default.
func settingValue(name, value string, cur map[string]json.RawMessage) (any, error) {
	s, ok := settingNamed(name)
	if !ok {
		raw, known := cur[name]
		if !known {
			return nil, usageError("no setting %q: the settings are %s", printable(name), strings.Join(settingNames(), ", "))
		}
		switch {
		case bytes.Equal(raw, []byte("true")) || bytes.Equal(raw, []byte("false")):
			s.kind = "bool"
		case len(raw) > 0 && raw[0] == '"':
			s.kind = "string"
		case len(raw) > 0 && raw[0] == '[':
			s.kind = "list"
		case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
			s.kind = "int"
		default:
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				return nil, usageError("%s takes JSON: %v", name, err)
			}
			return v, nil
		}
	}
	switch s.kind {
	case "bool":
		switch value {
		case "true", "on", "yes":
			return true, nil
		case "false", "off", "no", "default":
			return false, nil
		}
		return nil, usageError("%s is true or false, not %q", name, printable(value))
	case "int":
		if value == "default" {
			return 0, nil
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return nil, usageError("%s is a whole number (or default), not %q", name, printable(value))
		}
		return n, nil
	case "tiers":
		return nil, usageError("set %s one tier at a time: %s.TIER value|reference (TIER: public, standard, sensitive, critical)", name, name)
	case "list":
		if value == "default" {
			return []string{}, nil
		}
		return splitList(value), nil
	}
	if value == "default" && s.def != "" {
		return s.def, nil
	}
	return value, nil
}
