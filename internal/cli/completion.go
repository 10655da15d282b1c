package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

// completionWords is, for each command path ("" for phc itself), the words
// that may follow it: its subcommands and its flags (as --name).
func completionWords(ctx context.Context) map[string][]string {
	words := map[string][]string{}
	for _, c := range commands() {
		words[""] = append(words[""], c.name)
	}
	words[""] = append(words[""], "--help", "--version")
	for _, e := range helpEntries {
		for _, s := range subEntries(e.path) {
			words[e.path] = append(words[e.path], s.path[len(e.path)+1:])
		}
		if e.group {
			continue
		}
		// The flags, from the command's own flag set: run with -h, it hands
		// its flag set over before doing anything.
		parts := strings.Fields(e.path)
		cmd, ok := lookupCommand(parts[0])
		if !ok {
			continue
		}
		env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" },
			IsTerminal: func() bool { return false }}
		env.helpFlags = func(_ string, fs *flag.FlagSet) {
			if fs == nil {
				return
			}
			fs.VisitAll(func(f *flag.Flag) { words[e.path] = append(words[e.path], "--"+f.Name) })
		}
		_ = cmd.run(ctx, env, append(parts[1:], "-h"))
	}
	words["completion"] = append(words["completion"], "bash", "zsh", "fish")
	words["settings get"] = append(words["settings get"], settingNames()...)
	words["settings set"] = append(words["settings set"], settingNames()...)
	return words
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// idKinds names, for each command whose argument is an id, what kind of
// id it takes: the completion scripts offer those of the running daemon
// (phc completion ids KIND).
var idKinds = map[string]string{
	"claims show": "claim", "claims versions": "claim", "claims correct": "claim", "claims dispute": "claim",
	"claims undispute": "claim", "claims retract": "claim", "claims delete": "claim",
	"review confirm": "proposal", "review reject": "proposal",
	"grant narrow": "grant", "revoke": "grant",
	"approve": "request", "deny": "request",
	"token revoke":   "token",
	"persona rename": "persona", "persona set": "persona", "persona remove": "persona",
	"consumer approve": "consumer", "consumer remove": "consumer",
}

// personaFlags and consumerFlags take a persona id and a consumer name.
var (
	personaFlags  = []string{"--persona", "--personas"}
	consumerFlags = []string{"--to", "--consumer"}
)

// idSources is where phc completion ids finds each kind of id: the ids
// the owner's list of that kind holds that are worth offering (a grant not
// revoked, a request pending, a token active).
var idSources = map[string]func(ctx context.Context, cl *client.Client) ([]string, error){
	"claim": func(ctx context.Context, cl *client.Client) ([]string, error) {
		l, err := cl.Claims(ctx, "", "")
		return ids(l.Claims, err, func(c custodian.Claim) (string, bool) { return c.ID, true })
	},
	"proposal": func(ctx context.Context, cl *client.Client) ([]string, error) {
		items, err := cl.Review(ctx)
		return ids(items, err, func(p custodian.ReviewItem) (string, bool) { return p.ID, true })
	},
	"grant": func(ctx context.Context, cl *client.Client) ([]string, error) {
		grants, err := cl.Grants(ctx)
		return ids(grants, err, func(g custodian.Grant) (string, bool) { return g.ID, g.RevokedAt == nil })
	},
	"request": func(ctx context.Context, cl *client.Client) ([]string, error) {
		requests, err := cl.Requests(ctx)
		return ids(requests, err, func(r custodian.ContextRequest) (string, bool) {
			return r.ID, r.Status == "" || r.Status == custodian.RequestPending
		})
	},
	"token": func(ctx context.Context, cl *client.Client) ([]string, error) {
		tokens, err := cl.Tokens(ctx)
		return ids(tokens, err, func(t custodian.TokenView) (string, bool) { return t.Prefix, t.Active })
	},
	"persona": func(ctx context.Context, cl *client.Client) ([]string, error) {
		personas, err := cl.Personas(ctx)
		return ids(personas, err, func(p custodian.Persona) (string, bool) { return p.ID, true })
	},
	"consumer": func(ctx context.Context, cl *client.Client) ([]string, error) {
		consumers, err := cl.Consumers(ctx)
		return ids(consumers, err, func(c custodian.ConsumerView) (string, bool) { return c.Name, true })
	},
}

// ids is the id of each item that id says to offer, or err.
func ids[T any](items []T, err error, id func(T) (string, bool)) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		if s, ok := id(it); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// completionIDs is phc completion ids KIND, which the completion scripts
// run as the person presses Tab: the ids of that kind the running daemon
// holds, one a line, that a shell word can hold as they are. It fails
// quietly (printing nothing) when there is no daemon or no session, and
// gives up after two seconds, so that Tab never hangs.
func completionIDs(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "completion ids", &c)
	kind, ok, err := parseOne(fs, args)
	if err != nil {
		return err
	}
	src, known := idSources[kind]
	if !ok || !known {
		return usageError("usage: phc completion ids claim|proposal|grant|request|token|persona|consumer")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return nil
	}
	cl.HTTP.Timeout = 2 * time.Second
	list, err := src(ctx, cl)
	if err != nil {
		return nil
	}
	for _, id := range list {
		// Only words a shell takes as they are: an id an app chose
		// (a consumer's name) is never offered with spaces or quotes.
		if id != "" && !strings.ContainsFunc(id, func(r rune) bool { return !safeWordRune(r) }) {
			fmt.Fprintln(env.Stdout, id)
		}
	}
	return nil
}

func safeWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-:@", r)
}

// runCompletion prints a completion script: phc completion bash|zsh|fish.
func runCompletion(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "ids" {
		return completionIDs(ctx, env, args[1:])
	}
	fs := newBareFlags(env, "completion")
	shell, ok, err := parseOne(fs, args)
	if err != nil {
		return err
	}
	if !ok {
		return usageError("usage: phc completion bash|zsh|fish")
	}
	words := completionWords(ctx)
	switch shell {
	case "bash":
		writeBashCompletion(env.Stdout, words)
	case "zsh":
		fmt.Fprintln(env.Stdout, "#compdef phc")
		fmt.Fprintln(env.Stdout, "# phc completion for zsh: source <(phc completion zsh), or save it as _phc in your $fpath.")
		fmt.Fprintln(env.Stdout, "autoload -U +X bashcompinit && bashcompinit")
		writeBashCompletion(env.Stdout, words)
	case "fish":
		writeFishCompletion(env.Stdout, words)
	default:
		return usageError("unknown shell %q: phc completion bash, zsh or fish", shell)
	}
	return nil
}

func sortedPaths(words map[string][]string) []string {
	paths := make([]string, 0, len(words))
	for p := range words {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// writeBashCompletion writes a bash completion function: the command path
// is the words typed so far that extend a known path (arguments and flags
// are passed over), and the candidates are the words of that path.
func writeBashCompletion(w io.Writer, words map[string][]string) {
	fmt.Fprintln(w, "# phc completion for bash: source <(phc completion bash)")
	fmt.Fprintln(w, "_phc_words() {")
	fmt.Fprintln(w, "  case \"$1\" in")
	for _, p := range sortedPaths(words) {
		fmt.Fprintf(w, "    %q) echo %q ;;\n", p, strings.Join(words[p], " "))
	}
	fmt.Fprintln(w, "    *) return 1 ;;")
	fmt.Fprintln(w, "  esac")
	fmt.Fprintln(w, "}")
	// The kind of id each command takes, which phc completion ids lists.
	fmt.Fprintln(w, "_phc_kind() {")
	fmt.Fprintln(w, "  case \"$1\" in")
	for _, p := range slices.Sorted(maps.Keys(idKinds)) {
		fmt.Fprintf(w, "    %q) echo %s ;;\n", p, idKinds[p])
	}
	fmt.Fprintln(w, "  esac")
	fmt.Fprintln(w, "}")
	fmt.Fprintf(w, `_phc() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" i w next kind ids=""
  (( COMP_CWORD > 1 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    %s) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion ids persona 2>/dev/null)" -- "$cur")); return ;;
    %s) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion ids consumer 2>/dev/null)" -- "$cur")); return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="${path:+$path }$w"
    if _phc_words "$next" >/dev/null; then path="$next"; fi
  done
  kind="$(_phc_kind "$path")"
  if [[ -n "$kind" && "$cur" != -* ]]; then
    ids="$("${COMP_WORDS[0]}" completion ids "$kind" 2>/dev/null)"
  fi
  COMPREPLY=($(compgen -W "$(_phc_words "$path") $ids" -- "$cur"))
}
complete -o default -F _phc phc
`, strings.Join(personaFlags, "|"), strings.Join(consumerFlags, "|"))
}

// writeFishCompletion writes fish completions: the commands, each
// command's subcommands, and every flag of a command or its subcommands.
func writeFishCompletion(w io.Writer, words map[string][]string) {
	fmt.Fprintln(w, "# phc completion for fish: phc completion fish > ~/.config/fish/completions/phc.fish")
	fmt.Fprintln(w, "complete -c phc -f")
	for _, c := range commands() {
		e, _ := helpFor(c.name)
		fmt.Fprintf(w, "complete -c phc -n __fish_use_subcommand -a %s -d %s\n", fishQuote(c.name), fishQuote(e.summary))
	}
	for _, p := range sortedPaths(words) {
		if p == "" {
			continue
		}
		parts := strings.Fields(p)
		cond := "__fish_seen_subcommand_from " + parts[len(parts)-1]
		if len(parts) > 1 {
			cond = fmt.Sprintf("__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s", parts[0], parts[len(parts)-1])
		}
		for _, word := range words[p] {
			if name, ok := strings.CutPrefix(word, "--"); ok {
				fmt.Fprintf(w, "complete -c phc -n %s -l %s\n", fishQuote(cond), fishQuote(name))
			} else {
				fmt.Fprintf(w, "complete -c phc -n %s -a %s\n", fishQuote(cond), fishQuote(word))
			}
		}
		if kind, ok := idKinds[p]; ok {
			fmt.Fprintf(w, "complete -c phc -n %s -a %s\n", fishQuote(cond), fishQuote("(phc completion ids "+kind+" 2>/dev/null)"))
		}
	}
	for _, f := range personaFlags {
		fmt.Fprintf(w, "complete -c phc -l %s -x -a %s\n", fishQuote(strings.TrimPrefix(f, "--")), fishQuote("(phc completion ids persona 2>/dev/null)"))
	}
	for _, f := range consumerFlags {
		fmt.Fprintf(w, "complete -c phc -l %s -x -a %s\n", fishQuote(strings.TrimPrefix(f, "--")), fishQuote("(phc completion ids consumer 2>/dev/null)"))
	}
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
