package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
)

// helpEntry is the help of one command or subcommand: what phc help PATH
// and phc PATH --help print, and what completion offers.
type helpEntry struct {
	path    string // "consumer add"
	summary string // one line: what it is for
	usage   string // the arguments after "phc PATH"
	example []string
	// group marks a command that does nothing itself but name its
	// subcommands (phc consumer): its help lists them and has no flags.
	group bool
}

// helpEntries is every command and subcommand. TestHelp checks that each
// command of commands() and each subcommand it dispatches has one, and
// that each answers --help.
var helpEntries = []helpEntry{
	{path: "init", summary: "create a vault in the data dir (prints the emergency kit once)", usage: "",
		example: []string{"PHC_PASSWORD='a long passphrase' phc init --data /tmp/phc-demo"}},
	{path: "serve", summary: "run the custodian daemon (creating the vault on first start)", usage: "[--addr 127.0.0.1:PORT] [--secret-key-file FILE] [--idle-lock 30m]",
		example: []string{"phc serve", "phc serve --addr 127.0.0.1:7300 --data /tmp/phc-demo"}},
	{path: "unlock", summary: "unlock the daemon's vault (password and Secret Key)", usage: "[--secret-key-file FILE]",
		example: []string{"phc unlock", "PHC_SECRET_KEY='PHC1-…' phc unlock"}},
	{path: "lock", summary: "lock the daemon's vault", example: []string{"phc lock"}},
	{path: "status", summary: "show whether the vault is locked, and its counts", usage: "[--json]", example: []string{"phc status"}},
	{path: "ui", summary: "open the owner's console in the browser, signed in with this session", usage: "[--print]",
		example: []string{"phc ui", "phc ui --print"}},
	{path: "consumer", summary: "manage consumers (apps): add, list, approve, remove", group: true,
		example: []string{"phc consumer add tutor --secret tutor-secret-0123456789", "phc consumer list"}},
	{path: "consumer add", summary: "register a consumer, approved at once (prints its secret if you give none)", usage: "NAME [--secret S]",
		example: []string{"phc consumer add tutor --secret tutor-secret-0123456789"}},
	{path: "consumer list", summary: "list consumers and whether each is approved", usage: "[--json]", example: []string{"phc consumer list"}},
	{path: "consumer approve", summary: "approve a consumer that registered itself", usage: "NAME", example: []string{"phc consumer approve tutor"}},
	{path: "consumer remove", summary: "remove a consumer: its tokens and grants end", usage: "NAME", example: []string{"phc consumer remove tutor"}},
	{path: "token", summary: "obtain a service token for a consumer (or: token list, token revoke)", usage: "--consumer NAME --secret S [--scope P] [--mode M] [--ttl D | --long-lived] [--purpose P]",
		example: []string{"phc token --consumer tutor --secret tutor-secret-0123456789 --scope 'learning.*' --mode write"}},
	{path: "token list", summary: "list service tokens (prefix, consumer, mode, state, expiry)", usage: "[--json]", example: []string{"phc token list"}},
	{path: "token revoke", summary: "revoke a service token by the prefix phc token list shows", usage: "PREFIX", example: []string{"phc token revoke ctxs_9Z3VFf0T"}},
	{path: "persona", summary: "create, list, rename, edit and remove personas", group: true,
		example: []string{"phc persona add learning Learning", "phc persona list"}},
	{path: "persona add", summary: "create a persona", usage: "ID NAME", example: []string{"phc persona add learning Learning"}},
	{path: "persona list", summary: "list personas with their preferences and guardrails", usage: "[--json]", example: []string{"phc persona list"}},
	{path: "persona rename", summary: "rename a persona (its id stays)", usage: "ID NAME", example: []string{"phc persona rename learning Languages"}},
	{path: "persona set", summary: "replace a persona's preferences and guardrails", usage: "ID [--preference TEXT …|--no-preferences] [--guardrail G …|--no-guardrails]",
		example: []string{"phc persona set learning --preference 'short answers' --guardrail no_training --guardrail max_sensitivity=standard"}},
	{path: "persona remove", summary: "remove a persona (claims stay; grants that needed it are narrowed or revoked)", usage: "ID", example: []string{"phc persona remove learning"}},
	{path: "review", summary: "the review queue: list proposals (the default), confirm or reject them", usage: "[--json]",
		example: []string{"phc review", "phc review confirm prp_… --persona learning"}},
	{path: "review list", summary: "list the proposals waiting for you, with conflicts and diffs", usage: "[--json]", example: []string{"phc review list"}},
	{path: "review confirm", summary: "confirm proposals into claims (several ids: one write)", usage: "PROPOSAL_ID… --persona ID[,ID]",
		example: []string{"phc review confirm prp_… --persona learning"}},
	{path: "review reject", summary: "reject proposals", usage: "PROPOSAL_ID… [--reason TEXT]", example: []string{"phc review reject prp_… --reason 'not true'"}},
	{path: "claims", summary: "list your active claims (the default), or show, correct, dispute, retract and delete one", usage: "[--key PATTERN] [--persona ID] [--json]",
		example: []string{"phc claims", "phc claims --key 'learning.*'"}},
	{path: "claims list", summary: "list active claims", usage: "[--key PATTERN] [--persona ID] [--json]", example: []string{"phc claims list --persona learning"}},
	{path: "claims show", summary: "show one claim", usage: "CLAIM_ID [--json]", example: []string{"phc claims show clm_…"}},
	{path: "claims versions", summary: "show every version of a claim", usage: "CLAIM_ID [--json]", example: []string{"phc claims versions clm_…"}},
	{path: "claims correct", summary: "correct a claim: a new version with your value", usage: "CLAIM_ID --value VALUE",
		example: []string{"phc claims correct clm_… --value 'Practice Spanish three times a week'"}},
	{path: "claims dispute", summary: "mark a claim disputed (served as disputed, never as confirmed)", usage: "CLAIM_ID", example: []string{"phc claims dispute clm_…"}},
	{path: "claims undispute", summary: "withdraw a dispute", usage: "CLAIM_ID", example: []string{"phc claims undispute clm_…"}},
	{path: "claims retract", summary: "retract a claim for good: no recipient receives it again", usage: "CLAIM_ID", example: []string{"phc claims retract clm_…"}},
	{path: "claims delete", summary: "delete a claim", usage: "CLAIM_ID", example: []string{"phc claims delete clm_…"}},
	{path: "propose", summary: "propose a claim yourself, into the review queue (phc review confirm makes it a claim)", usage: "KEY --value VALUE [--kind K] [--assertion A] [--subject ent_…] [--json]",
		example: []string{"phc propose learning.goal --value 'Practice Spanish twice a week' --kind goal",
			`phc propose people.ana.relation --kind relationship --value '{"from":"self","to":"ent_…","relation":"friend"}'`}},
	{path: "entity", summary: "people, projects, goals and other things claims can be about", group: true,
		example: []string{"phc entity add person --name Ana --key people.ana.name --persona learning"}},
	{path: "entity add", summary: "create an entity (prints its id); with --name, also the claim naming it", usage: "TYPE [--name NAME] [--key KEY] [--sensitivity TIER] [--persona ID …] [--json]",
		example: []string{"phc entity add person --name Ana --key people.ana.name --persona learning"}},
	{path: "entity list", summary: "list entities", usage: "[--json]", example: []string{"phc entity list"}},
	{path: "summary", summary: "summaries derived from exact claim versions", group: true,
		example: []string{"phc summary add 'Ana and I practise Spanish' --from clm_…@1 --from clm_…@1"}},
	{path: "summary add", summary: "record a summary derived from claim versions (prints its id)", usage: "TEXT --from clm_…@VERSION … [--json]",
		example: []string{"phc summary add 'Ana and I practise Spanish' --from clm_…@1 --from clm_…@1"}},
	{path: "grant", summary: "grant a recipient access for a purpose (or: grant list, grant narrow)",
		usage:   "--to CONSUMER --purpose P [--ops read,contribute] [--keys K] [--personas P] [--expires 24h|2d|2026-12-31] [--category C] [--disclosure value|reference]",
		example: []string{"phc grant --to coach --purpose learning --ops read --personas learning --expires 30d"}},
	{path: "grant list", summary: "list grants with their recipient, purpose, selectors and state", usage: "[--json]", example: []string{"phc grant list"}},
	{path: "grant narrow", summary: "narrow a grant in place: fewer operations, keys, personas or claims, an earlier end (never wider)",
		usage:   "GRANT_ID [--ops read] [--keys K] [--personas P] [--claims C] [--expires 12h|2d|2026-12-31]",
		example: []string{"phc grant narrow grt_… --keys contact.email --expires 7d"}},
	{path: "revoke", summary: "revoke a grant", usage: "GRANT_ID", example: []string{"phc revoke grt_…"}},
	{path: "receipts", summary: "list receipts (newest first) or verify their hash chain", usage: "[--limit N] [--verify] [--json]",
		example: []string{"phc receipts --limit 50", "phc receipts --verify"}},
	{path: "requests", summary: "list context requests waiting for your approval", usage: "[--json]", example: []string{"phc requests"}},
	{path: "approve", summary: "approve a context request (--password for critical data)", usage: "REQUEST_ID [--password] [--requires POLICY | --drop-requires] [--disclosure value|reference]",
		example: []string{"phc approve req_…"}},
	{path: "deny", summary: "deny a context request", usage: "REQUEST_ID", example: []string{"phc deny req_…"}},
	{path: "dec", summary: "DEC evidence chains: pin issuers, add admission policies, verify chains", group: true,
		example: []string{"phc dec verify examples/dec/chain.json --trust examples/dec/tutor-keys.jwks.json --issuer https://releases.example/tutor"}},
	{path: "dec trust", summary: "pin an issuer's public keys (re-pinning merges revocations)", usage: "ISSUER JWKS.json [--revoked KID@TIME …]",
		example: []string{"phc dec trust https://releases.example/tutor examples/dec/tutor-keys.jwks.json"}},
	{path: "dec unrevoke", summary: "withdraw the revocation of a pinned issuer's key", usage: "ISSUER KID",
		example: []string{"phc dec unrevoke https://releases.example/tutor tutor-release-2026"}},
	{path: "dec policy", summary: "admission policies", group: true, example: []string{"phc dec policy add examples/dec/policy.json"}},
	{path: "dec policy add", summary: "add (or replace) an admission policy from a JSON file", usage: "POLICY.json",
		example: []string{"phc dec policy add examples/dec/policy.json"}},
	{path: "dec verify", summary: "verify a DEC chain, against the pinned keys or offline", usage: "FILE [--trust JWKS.json --issuer ISSUER [--revoked KID@TIME …]]",
		example: []string{"phc dec verify examples/dec/chain.json"}},
	{path: "trust", summary: "trust OIDC issuers for recipients, and pin other custodians", group: true,
		example: []string{"phc trust add https://accounts.example.com --audience phc-alice", "phc trust list"}},
	{path: "trust add", summary: "trust an OIDC issuer, whose ID tokens must name the audience", usage: "ISSUER --audience AUD [--authorized-party CLIENT …]",
		example: []string{"phc trust add https://accounts.example.com --audience phc-alice"}},
	{path: "trust list", summary: "list trusted OIDC issuers", usage: "[--json]", example: []string{"phc trust list"}},
	{path: "trust custodian", summary: "pin another custodian's card: only bundles it signs are accepted", usage: "CARD.json",
		example: []string{"phc trust custodian their-card.json"}},
	{path: "trust custodians", summary: "list pinned custodians", usage: "[--json]", example: []string{"phc trust custodians"}},
	{path: "trust remove", summary: "remove a trusted issuer (iss_…) or a pinned custodian (cus_…)", usage: "ID", example: []string{"phc trust remove iss_…"}},
	{path: "settings", summary: "show and change your settings: auto_grant, rates, quotas, retention, token lifetimes, disclosure", group: true,
		example: []string{"phc settings get", "phc settings set long_lived_tokens true"}},
	{path: "settings get", summary: "show every setting (\"(default)\" marks one left at its default), or the value of one", usage: "[NAME] [--json]",
		example: []string{"phc settings get", "phc settings get reads_per_minute", "phc settings get disclosure"}},
	{path: "settings set", summary: "change settings: each NAME takes its VALUE (default puts it back)", usage: "NAME VALUE [NAME VALUE …]",
		example: []string{"phc settings set reads_per_minute 120 long_lived_tokens true", "phc settings set disclosure.critical value", "phc settings set auto_grant none"}},
	{path: "card", summary: "print this custodian's public card, for another custodian to pin", usage: "[--out FILE]", example: []string{"phc card --out my-card.json"}},
	{path: "backup", summary: "save what this vault's owner made (claims, personas, entities, summaries) to a file (mode 0600)", usage: "FILE [--force]", example: []string{"phc backup phc-backup.json"}},
	{path: "restore", summary: "load a backup made by phc backup (merge, or --replace)", usage: "FILE [--replace] [--secret-key-file KEYFILE]",
		example: []string{"phc restore phc-backup.json"}},
	{path: "export", summary: "make a signed, encrypted migration bundle for another custodian", usage: "--to CARD.json [--persona P …] [--out FILE]",
		example: []string{"phc export --to their-card.json --out bundle.jwe"}},
	{path: "import", summary: "hold a migration bundle, or another memory system's export, in the quarantine", usage: "BUNDLE | [--from SOURCE] [--map FILE] EXPORT", example: []string{"phc import bundle.jwe", "phc import --from mem0 mem0-export.json"}},
	{path: "quarantine", summary: "list held imports (the default), adopt, unblock or reject them", usage: "[--status S] [--problem TEXT]",
		example: []string{"phc quarantine", "phc quarantine adopt --all"}},
	{path: "quarantine adopt", summary: "make held records yours", usage: "ID… | --all [--persona P …] [--map foreign:cus_…/ID=NAME …]",
		example: []string{"phc quarantine adopt --all --persona learning"}},
	{path: "quarantine unblock", summary: "remove an unknown mandatory restriction from a held record", usage: "ID --remove TYPE …",
		example: []string{"phc quarantine unblock clm_… --remove x_future"}},
	{path: "quarantine reject", summary: "drop held records", usage: "ID… | --all", example: []string{"phc quarantine reject --all"}},
	{path: "mcp", summary: "serve MCP on stdin/stdout for an app, through the running daemon", usage: "[--token ctxs_…] [--vault PROFILE]",
		example: []string{"PHC_TOKEN=ctxs_… phc mcp", "PHC_TOKEN=ctxs_… phc mcp --vault default"}},
	{path: "vault-keys", summary: "list local vault keys bound to readers, activate or revoke one", group: true,
		example: []string{"phc vault-keys list", "phc vault-keys activate KID"}},
	{path: "vault-keys list", summary: "list local vault keys (kids) and the readers they are bound to", usage: "[--json]", example: []string{"phc vault-keys list"}},
	{path: "vault-keys activate", summary: "activate a pending local vault key, so that it may resolve references", usage: "KID", example: []string{"phc vault-keys activate KID"}},
	{path: "vault-keys revoke", summary: "revoke a local vault key", usage: "KID", example: []string{"phc vault-keys revoke KID"}},
	{path: "hook", summary: "the local hooks: resolve value references in a tool call on this machine; capture what a completion selects as proposals", group: true,
		example: []string{"phc hook install claude-code", "phc hook resolve < call.json"}},
	{path: "hook resolve", summary: "read a tool call (JSON) on stdin and write it with its references replaced by their values", usage: "[--server URL] [--profile NAME] [--approve]",
		example: []string{"phc hook resolve < call.json"}},
	{path: "hook seen", summary: "note the references an MCP answer (JSON on stdin) showed the model", usage: "[--server URL] [--profile NAME]",
		example: []string{"phc hook seen < answer.json"}},
	{path: "hook header", summary: "print the Client-Vault header of the reader profile", usage: "[--server URL] [--profile NAME]",
		example: []string{"phc hook header"}},
	{path: "hook capture", summary: "a Stop hook: propose, as the app, the remember: lines and <remember> blocks of a completion's last turn (event JSON on stdin)", usage: "[--token-file FILE] [--key-prefix K] [--app NAME]",
		example: []string{"PHC_TOKEN=ctxs_… phc hook capture < stop-event.json"}},
	{path: "hook install", summary: "add the hooks to Claude Code's settings (PreToolUse for Write, Edit and Bash; with --capture-token-file, Stop) and print what changed", usage: "claude-code [--settings FILE] [--server URL] [--profile NAME] [--capture-token-file FILE]",
		example: []string{"phc hook install claude-code", "phc hook install claude-code --capture-token-file ~/.phc-claude-code.token"}},
	{path: "mcp-config", summary: "print a ready MCP host config for an app, with a long-lived token", usage: "--consumer NAME --secret S [--host claude-desktop|claude-code|cursor|vscode] [--purpose P]",
		example: []string{"phc mcp-config --consumer tutor --secret tutor-secret-0123456789 --host cursor"}},
	{path: "check", summary: "verify that the graph agrees with the store, and the receipt chain", usage: "[--json]", example: []string{"phc check"}},
	{path: "validate", summary: "check a document (a claim, a bundle's manifest or records, a held record, …) against the binding, with no daemon", usage: "FILE [--as NAME]", example: []string{"phc validate manifest.json", "phc validate - --as claim < claim.json"}},
	{path: "graph", summary: "rebuild the graph from the store, or export it", group: true, example: []string{"phc graph export --format prov-jsonld"}},
	{path: "graph rebuild", summary: "rebuild the graph from the store", example: []string{"phc graph rebuild"}},
	{path: "graph export", summary: "export the graph (N-Quads or PROV-O JSON-LD)", usage: "[--format nquads|prov-jsonld] [--out FILE]",
		example: []string{"phc graph export --format prov-jsonld --out graph.jsonld"}},
	{path: "conformance", summary: "run the conformance suite (by default against a throwaway custodian)", usage: "[--target URL [--write-test-data]] [--run REGEXP] [--json]",
		example: []string{"phc conformance", "phc conformance --target http://127.0.0.1:7300 --write-test-data"}},
	{path: "bench", summary: "measure a daemon it starts, at several vault sizes", usage: "[--claims 300,30000] [--duration 5s]",
		example: []string{"phc bench --claims 300 --duration 2s"}},
	{path: "completion", summary: "print a shell completion script", usage: "bash|zsh|fish",
		example: []string{"source <(phc completion bash)", "phc completion fish > ~/.config/fish/completions/phc.fish"}},
	{path: "help", summary: "show the help of a command", usage: "[COMMAND [SUBCOMMAND]]", example: []string{"phc help consumer add"}},
	{path: "version", summary: "print phc's version (also phc --version)", example: []string{"phc --version"}},
}

func helpFor(path string) (helpEntry, bool) {
	i := slices.IndexFunc(helpEntries, func(e helpEntry) bool { return e.path == path })
	if i < 0 {
		return helpEntry{}, false
	}
	return helpEntries[i], true
}

// subEntries are the subcommands directly under path.
func subEntries(path string) []helpEntry {
	var out []helpEntry
	for _, e := range helpEntries {
		if rest, ok := strings.CutPrefix(e.path, path+" "); ok && !strings.Contains(rest, " ") {
			out = append(out, e)
		}
	}
	return out
}

// printHelp writes the help of path, with fs's flags when there is one.
func printHelp(w io.Writer, path string, fs *flag.FlagSet) {
	e, _ := helpFor(path)
	fmt.Fprintf(w, "phc %s — %s\n\n", path, e.summary)
	if e.group {
		fmt.Fprintf(w, "usage: phc %s COMMAND [flags]\n", path)
	} else {
		fmt.Fprintf(w, "usage: phc %s\n", strings.TrimSpace(path+" "+e.usage))
	}
	if subs := subEntries(path); len(subs) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		for _, s := range subs {
			fmt.Fprintf(w, "  phc %-22s %s\n", s.path, s.summary)
		}
	}
	if fs != nil {
		fmt.Fprintln(w, "\nflags:")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	if len(e.example) > 0 {
		fmt.Fprintln(w, "\nexample:")
		for _, x := range e.example {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
	if e.group {
		fmt.Fprintf(w, "\nphc help %s COMMAND shows a command's arguments and flags.\n", path)
	}
}

// wantsHelp reports whether args ask for help (-h, -help or --help before
// any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// showHelp prints the help of the command or subcommand args name. A
// command with flags is run with -h alone, so that parse prints its help
// with its own flag set, before the command does anything.
func showHelp(ctx context.Context, env *Env, cmd command, rest []string) error {
	path := cmd.name
	var words []string
	for _, w := range rest {
		if strings.HasPrefix(w, "-") {
			break
		}
		if _, ok := helpFor(path + " " + w); !ok {
			break
		}
		path += " " + w
		words = append(words, w)
	}
	e, ok := helpFor(path)
	if !ok {
		return fmt.Errorf("no help for %q", path)
	}
	if e.group {
		if env.helpFlags != nil {
			env.helpFlags(path, nil)
		} else {
			printHelp(env.Stdout, path, nil)
		}
		return nil
	}
	// The command's own flag set, which its parse hands over on -h (for
	// phc review, that of its default, phc review list).
	var flags *flag.FlagSet
	henv := *env
	henv.helpFlags = func(_ string, fs *flag.FlagSet) { flags = fs }
	err := cmd.run(ctx, &henv, append(words, "-h"))
	if !errors.Is(err, flag.ErrHelp) {
		if err == nil {
			err = fmt.Errorf("phc %s printed no help", path)
		}
		return err
	}
	if env.helpFlags != nil {
		env.helpFlags(path, flags)
	} else {
		printHelp(env.Stdout, path, flags)
	}
	return nil
}

// runHelp is phc help [COMMAND [SUBCOMMAND]].
func runHelp(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		usage(env.Stdout)
		return nil
	}
	if wantsHelp(args[:1]) {
		if env.helpFlags != nil {
			return flag.ErrHelp // showHelp prints it
		}
		printHelp(env.Stdout, "help", nil)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return showHelp(ctx, env, c, args[1:])
		}
	}
	return usageError("unknown command %q (phc help lists them)", args[0])
}

// version is phc's version, from the build information Go records: the
// module version (a tag, or a pseudo-version from the commit) and the
// commit, its time and whether the tree was modified.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "phc (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	out := "phc " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += fmt.Sprintf(" (commit %s %s%s)", rev, at, modified)
	}
	return out + " " + bi.GoVersion
}

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newBareFlags(env, "version")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, version())
	return nil
}
