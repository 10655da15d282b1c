package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
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

// runCompletion prints a completion script: phc completion bash|zsh|fish.
func runCompletion(ctx context.Context, env *Env, args []string) error {
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
	fmt.Fprint(w, `_phc() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path="" i w next
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="${path:+$path }$w"
    if _phc_words "$next" >/dev/null; then path="$next"; fi
  done
  COMPREPLY=($(compgen -W "$(_phc_words "$path")" -- "$cur"))
}
complete -o default -F _phc phc
`)
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
	}
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
