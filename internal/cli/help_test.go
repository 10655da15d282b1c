package cli

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelp runs, for every command and subcommand, phc PATH --help, phc
// PATH -h and phc help PATH: each exits 0 and prints the one-line purpose,
// the usage, the flags (of a command that has any) and an example, without
// a literal \n; and every command of the dispatcher has its help. No daemon
// runs: a command that did anything but print its help would fail.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		if _, ok := helpFor(c.name); !ok {
			t.Errorf("command %s has no help entry", c.name)
		}
	}
	for _, e := range helpEntries {
		if _, ok := lookupCommand(strings.Fields(e.path)[0]); !ok {
			t.Errorf("help entry %q names no command", e.path)
		}
		if e.summary == "" || len(e.example) == 0 {
			t.Errorf("%s: no summary or no example", e.path)
		}
		words := strings.Fields(e.path)
		for _, args := range [][]string{append(slices.Clone(words), "--help"), append(slices.Clone(words), "-h"), append([]string{"help"}, words...)} {
			env, out, errb := testEnv(t, map[string]string{"PHC_HOME": filepath.Join(t.TempDir(), "none")})
			code := Run(t.Context(), env, args)
			o := out.String()
			if code != 0 {
				t.Errorf("phc %s = exit %d: %s", strings.Join(args, " "), code, errb)
				continue
			}
			want := []string{"phc " + e.path + " — " + e.summary, "usage: phc " + e.path, "example:"}
			if !e.group && e.path != "help" {
				want = append(want, "flags:")
			}
			for _, w := range want {
				if !strings.Contains(o, w) {
					t.Errorf("phc %s: no %q in\n%s", strings.Join(args, " "), w, o)
				}
			}
			if strings.Contains(o+errb.String(), `\n`) {
				t.Errorf("phc %s prints a literal \\n:\n%s", strings.Join(args, " "), o)
			}
		}
	}
	// A group without a command, and a bad flag, say where the help is.
	for _, args := range [][]string{{"consumer"}, {"dec"}, {"trust"}, {"graph"}, {"persona"}, {"consumer", "add", "--nope"}} {
		env, _, errb := testEnv(t, map[string]string{"PHC_HOME": filepath.Join(t.TempDir(), "none")})
		if code := Run(t.Context(), env, args); code != 2 || strings.Contains(errb.String(), `\n`) {
			t.Errorf("phc %s = exit %d: %s", strings.Join(args, " "), code, errb)
		}
	}
	env, out, _ := testEnv(t, nil)
	if code := Run(t.Context(), env, []string{"--version"}); code != 0 || !strings.HasPrefix(out.String(), "phc ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("phc --version = %d %q", code, out)
	}
}

// TestCompletion checks the completion scripts: bash completes commands,
// subcommands and a subcommand's flags when the script is sourced in a
// real bash; zsh's is bash's under bashcompinit; fish's names every
// command.
func TestCompletion(t *testing.T) {
	t.Parallel()
	script := func(shell string) string {
		env, out, errb := testEnv(t, nil)
		if code := Run(t.Context(), env, []string{"completion", shell}); code != 0 {
			t.Fatalf("phc completion %s = %d %s", shell, code, errb)
		}
		return out.String()
	}
	bash := script("bash")
	file := filepath.Join(t.TempDir(), "phc.bash")
	if err := os.WriteFile(file, []byte(bash), 0o600); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string][]string{
		"phc ":                      {"consumer", "serve", "mcp-config", "completion"},
		"phc con":                   {"consumer", "conformance"},
		"phc consumer ":             {"add", "list", "approve", "remove"},
		"phc consumer add tutor --": {"--secret", "--data"},
		"phc dec policy ":           {"add"},
		"phc grant --":              {"--to", "--purpose", "--expires"},
		"phc completion ":           {"bash", "zsh", "fish"},
	} {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _phc; printf '%s\n' "${COMPREPLY[@]}"`, "bash", file)
		cmd.Args = append(cmd.Args, words...)
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash completion of %q: %v", line, err)
		}
		for _, w := range want {
			if !slices.Contains(strings.Fields(string(got)), w) {
				t.Errorf("completing %q: no %q in %q", line, w, got)
			}
		}
	}
	if zsh := script("zsh"); !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "complete -o default -F _phc phc") {
		t.Errorf("zsh script:\n%s", zsh)
	}
	fish := script("fish")
	for _, c := range commands() {
		if !strings.Contains(fish, "-a '"+c.name+"'") {
			t.Errorf("fish script does not complete %s", c.name)
		}
	}
	if !strings.Contains(fish, "-l 'secret'") {
		t.Errorf("fish script has no flags")
	}
	// The zsh and fish scripts in the shells themselves (CI installs both;
	// elsewhere a missing shell skips its part).
	shellFile := func(shell, script string) (string, bool) {
		t.Helper()
		if _, err := exec.LookPath(shell); err != nil {
			if os.Getenv("CI") != "" {
				t.Errorf("%s is not installed; .ci/run installs it", shell)
			} else {
				t.Logf("%s is not installed: its completion is checked as text only", shell)
			}
			return "", false
		}
		f := filepath.Join(t.TempDir(), "phc."+shell)
		if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		return f, true
	}
	if f, ok := shellFile("zsh", script("zsh")); ok {
		// Loaded as a user would (compinit, then the script), phc has a
		// completion function, and it offers phc's commands.
		out, err := exec.Command("zsh", "-f", "-c", `autoload -U compinit && compinit -u -D && source "$1" && print -r -- ${_comps[phc]} && COMP_WORDS=(phc con) COMP_CWORD=1 && _phc && print -l -- $COMPREPLY`, "zsh", f).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "conformance") || !strings.Contains(string(out), "consumer") {
			t.Errorf("zsh: loading the completion and completing 'phc con' = %v:\n%s", err, out)
		}
	}
	if f, ok := shellFile("fish", fish); ok {
		out, err := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C"phc con"; complete -C"phc consumer add x --se"`, f).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "consumer") || !strings.Contains(string(out), "conformance") || !strings.Contains(string(out), "--secret") {
			t.Errorf("fish: completing 'phc con' and a flag = %v:\n%s", err, out)
		}
	}
	env, _, _ := testEnv(t, nil)
	if code := Run(t.Context(), env, []string{"completion", "powershell"}); code != 2 {
		t.Errorf("completion powershell = %d; want 2", code)
	}
}

// TestHelpFlagsApply: a command's help lists only flags the command uses.
// Commands that talk to no daemon list no --addr, those that use no data
// dir no --data either; the daemon's commands list both; and every flag a
// command's usage line names is one its help lists.
func TestHelpFlagsApply(t *testing.T) {
	t.Parallel()
	flagsOf := map[string][]string{}
	env, _, _ := testEnv(t, nil)
	env.helpFlags = func(path string, fs *flag.FlagSet) {
		if fs != nil {
			fs.VisitAll(func(f *flag.Flag) { flagsOf[path] = append(flagsOf[path], "--"+f.Name) })
		}
	}
	for _, e := range helpEntries {
		if e.group {
			continue
		}
		flagsOf[e.path] = nil
		if code := Run(t.Context(), env, append(strings.Fields(e.path), "--help")); code != 0 {
			t.Fatalf("phc %s --help = exit %d", e.path, code)
		}
		for _, f := range regexp.MustCompile(`--[a-z][a-z-]*`).FindAllString(e.usage, -1) {
			if !slices.Contains(flagsOf[e.path], f) {
				t.Errorf("phc %s: the usage names %s, which is not one of its flags %v", e.path, f, flagsOf[e.path])
			}
		}
	}
	for path, not := range map[string][]string{
		"version":     {"--data", "--addr"},
		"completion":  {"--data", "--addr"},
		"init":        {"--addr"},
		"conformance": {"--addr"},
		"bench":       {"--data", "--addr"},
	} {
		for _, f := range not {
			if slices.Contains(flagsOf[path], f) {
				t.Errorf("phc %s --help lists %s, which it does not use", path, f)
			}
		}
	}
	for _, path := range []string{"serve", "status", "settings get", "consumer add", "ui"} {
		if !slices.Contains(flagsOf[path], "--data") || !slices.Contains(flagsOf[path], "--addr") {
			t.Errorf("phc %s --help lists %v; want --data and --addr", path, flagsOf[path])
		}
	}
	// The conformance suite still says what to give instead of --addr.
	env2, _, errb := testEnv(t, nil)
	if code := Run(t.Context(), env2, []string{"conformance", "--addr", "127.0.0.1:7200"}); code != 2 || !strings.Contains(errb.String(), "--target") {
		t.Errorf("phc conformance --addr = exit %d %q", code, errb)
	}
}

// TestCompletionIDs: the bash completion, sourced in a real bash with the
// phc program on the PATH and a real daemon, offers the daemon's ids where a
// command takes one — claims, proposals, grants, requests, token prefixes
// — persona ids after --persona and where a command takes a persona, and
// consumer names; and the setting names after phc settings set.
func TestCompletionIDs(t *testing.T) {
	t.Parallel()
	bin := phcBinary(t)
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.phcOK("persona", "add", "work", "Work")
	tok := h.consumerFor("tutor", "*", "read-write", "learning")
	h.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
	var prp struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tok, map[string]any{"key": "learning.goal", "value": "Spanish", "kind": "goal", "assertion": "reported"}, &prp)
	var req struct {
		ID string `json:"request_id"`
	}
	h.must(202, "POST", "/context/requests", tok, map[string]any{"scope": "health.*", "purpose": "learning"}, &req)
	h.phcOK("review", "confirm", prp.ID, "--persona", "learning")
	h.must(201, "POST", "/phc/v1/proposals", tok, map[string]any{"key": "learning.pace", "value": "slow", "kind": "preference", "assertion": "reported"}, &prp)
	var claims struct {
		Claims []struct{ ID string } `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims", h.owner, nil, &claims)
	var grants struct {
		Grants []struct{ ID string } `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	var tokens struct {
		Tokens []struct{ Prefix string } `json:"tokens"`
	}
	h.must(200, "GET", "/context/tokens/service", h.owner, nil, &tokens)
	if len(claims.Claims) != 1 || len(grants.Grants) != 1 || len(tokens.Tokens) != 1 {
		t.Fatalf("fixture: %d claims, %d grants, %d tokens", len(claims.Claims), len(grants.Grants), len(tokens.Tokens))
	}

	env, out, _ := testEnv(t, nil)
	if code := Run(t.Context(), env, []string{"completion", "bash"}); code != 0 {
		t.Fatal("phc completion bash failed")
	}
	file := filepath.Join(t.TempDir(), "phc.bash")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	complete := func(line string) []string {
		t.Helper()
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _phc; printf '%s\n' "${COMPREPLY[@]}"`, "bash", file)
		cmd.Args = append(cmd.Args, words...)
		cmd.Env = append(os.Environ(), "PHC_HOME="+h.dir, "PHC_ADDR=", "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash completion of %q: %v", line, err)
		}
		return strings.Fields(string(got))
	}
	for line, want := range map[string][]string{
		"phc claims show ":                    {claims.Claims[0].ID},
		"phc claims retract clm":              {claims.Claims[0].ID},
		"phc review confirm ":                 {prp.ID},
		"phc review confirm prp_x --persona ": {"learning", "work"},
		"phc grant narrow ":                   {grants.Grants[0].ID},
		"phc revoke ":                         {grants.Grants[0].ID},
		"phc approve ":                        {req.ID},
		"phc deny ":                           {req.ID},
		"phc token revoke ":                   {tokens.Tokens[0].Prefix},
		"phc persona remove ":                 {"learning", "work"},
		"phc claims --persona w":              {"work"},
		"phc grant --to ":                     {"tutor"},
		"phc consumer remove ":                {"tutor"},
		"phc settings set ":                   {"reads_per_minute", "disclosure.critical"},
	} {
		got := complete(line)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q: no %q in %q", line, w, got)
			}
		}
	}
	// Ids of one kind only: a claim command offers no grant id.
	if got := complete("phc claims show "); slices.Contains(got, grants.Grants[0].ID) || slices.Contains(got, prp.ID) {
		t.Errorf("completing claims show offers %q", got)
	}
	// fish asks phc for the same ids (the shell itself runs in CI).
	env, out, _ = testEnv(t, nil)
	if code := Run(t.Context(), env, []string{"completion", "fish"}); code != 0 ||
		!strings.Contains(out.String(), "-a '(phc completion ids claim 2>/dev/null)'") || !strings.Contains(out.String(), "-l 'persona' -x -a '(phc completion ids persona 2>/dev/null)'") {
		t.Errorf("the fish script does not complete ids:\n%s", out)
	}
	// No daemon: no ids, and no error on the terminal.
	h.stop()
	if got := complete("phc claims show "); slices.ContainsFunc(got, func(w string) bool { return !strings.HasPrefix(w, "--") }) {
		t.Errorf("completing with no daemon = %q", got)
	}
}
