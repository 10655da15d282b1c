package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/clientvault"
	"github.com/phc-project/phc/internal/daemon"
)

// runHook is phc hook: the local vault hook of Client-Vault v=1
// (docs/formats/reference.md). resolve replaces the references in a tool call with
// their values, just before the call runs on this machine; header prints
// the Client-Vault header of the reader profile (for an MCP client's
// configuration); install claude-code adds the PreToolUse entry that runs
// resolve before Write, Edit and Bash.
func runHook(ctx context.Context, env *Env, args []string) error {
	sub, rest := firstArg(args)
	switch sub {
	case "resolve":
		return runHookResolve(ctx, env, rest)
	case "header":
		return runHookHeader(ctx, env, rest)
	case "seen":
		return runHookSeen(ctx, env, rest)
	case "install":
		return runHookInstall(ctx, env, rest)
	case "capture":
		return runHookCapture(ctx, env, rest)
	}
	return usageError("usage: phc hook resolve|seen|header|capture|install claude-code [--server URL] [--profile NAME]")
}

// runHookSeen records the references in a JSON document on standard input
// (a PostToolUse event of an MCP tool: the answer the model got) as seen
// now, unless seen before. It prints nothing and changes nothing else:
// the sighting is what lets the server answer expired for a key it
// minted again after the model got it.
func runHookSeen(ctx context.Context, env *Env, args []string) error {
	h, parseFlags := newHookFlags(env, "hook seen")
	if err := parseFlags(args); err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(env.Stdin, maxToolCall+1))
	if err != nil {
		return err
	}
	var doc any
	if len(raw) > maxToolCall || json.Unmarshal(raw, &doc) != nil {
		return nil // not a document to look at: nothing seen
	}
	keys := clientvault.Keys(doc)
	if len(keys) == 0 {
		return nil
	}
	server, err := h.serverURL(env)
	if err != nil {
		return err
	}
	origin, err := clientvault.Origin(server)
	if err != nil {
		return usageError("bad --server: %v", err)
	}
	_, err = clientvault.Seen(h.c.data, origin, *h.profile, keys, time.Now())
	return err
}

// hookFlags are the flags every hook verb takes: the server (its MCP URL)
// and the reader profile, which pick the key file.
type hookFlags struct {
	c       common
	server  *string
	profile *string
	// approve is phc hook resolve's --approve, settings phc hook
	// install's --settings.
	approve  *bool
	settings *string
	// capture is phc hook install's --capture-token-file: a Stop hook
	// that proposes what a completion selects, with that token.
	capture *string
}

func newHookFlags(env *Env, name string) (*hookFlags, func(args []string) error) {
	h := &hookFlags{}
	fs := newFlags(env, name, &h.c)
	h.server = fs.String("server", "", "the MCP URL of the server whose references to resolve (default: the daemon's, http://ADDR/mcp)")
	h.profile = fs.String("profile", "default", "the reader profile: one key per server origin and profile")
	switch name {
	case "hook resolve":
		h.approve = fs.Bool("approve", false, `allow the call once its references resolve, but a shell command (Bash), which always asks (default: "ask", the person approves it as usual)`)
	case "hook install":
		h.settings = fs.String("settings", "", "Claude Code's settings file (default: ~/.claude/settings.json)")
		h.capture = fs.String("capture-token-file", "", "also add the Stop hook phc hook capture, proposing with the write token in this file")
	}
	return h, func(args []string) error { return parse(fs, args) }
}

// serverURL is the MCP URL the hook speaks to.
func (h *hookFlags) serverURL(env *Env) (string, error) {
	if *h.server != "" {
		return *h.server, nil
	}
	cl, err := newClient(env, h.c, false)
	if err != nil {
		return "", err
	}
	return cl.Base + "/mcp", nil
}

// key returns K for the server origin and profile, made on first use.
func (h *hookFlags) key(env *Env) (k []byte, server string, err error) {
	if server, err = h.serverURL(env); err != nil {
		return nil, "", err
	}
	origin, err := clientvault.Origin(server)
	if err != nil {
		return nil, "", usageError("bad --server: %v", err)
	}
	if *h.profile == "" || strings.ContainsAny(*h.profile, "\x00/\\") {
		return nil, "", usageError("bad --profile: a name without / or NUL")
	}
	k, _, err = clientvault.LoadKey(h.c.data, origin, *h.profile)
	return k, server, err
}

func runHookHeader(ctx context.Context, env *Env, args []string) error {
	h, parse := newHookFlags(env, "hook header")
	if err := parse(args); err != nil {
		return err
	}
	k, _, err := h.key(env)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", clientvault.HeaderName, clientvault.Header(k))
	return nil
}

// maxToolCall bounds the tool call the hook reads.
const maxToolCall = 16 << 20

// runHookResolve reads a tool call on standard input and writes it with
// every reference replaced by its value. A Claude Code PreToolUse event
// (an object with tool_input) is answered in the hook's JSON: the
// updated input, with the decision "ask" (the person approves the call
// as usual; --approve says "allow", but for a shell command), or "deny"
// naming the key and the status. Any other JSON document is written back
// replaced, and a refusal exits 2 with the reason on standard error. One bad reference denies the
// whole call: nothing is ever resolved in part.
func runHookResolve(ctx context.Context, env *Env, args []string) error {
	h, parseFlags := newHookFlags(env, "hook resolve")
	if err := parseFlags(args); err != nil {
		return err
	}
	approve := *h.approve
	raw, err := io.ReadAll(io.LimitReader(env.Stdin, maxToolCall+1))
	if err != nil {
		return err
	}
	if len(raw) > maxToolCall {
		return &exitError{code: 2, err: errors.New("the tool call is above 16 MiB")}
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return &exitError{code: 2, err: errors.New("the tool call on standard input is not JSON")}
	}
	event, isEvent := doc.(map[string]any)
	input := doc
	if isEvent {
		if ti, ok := event["tool_input"]; ok {
			input = ti
		} else {
			isEvent = false
		}
	}
	deny := func(reason string) error {
		reason = "phc hook: " + reason
		if isEvent {
			return writeHookDecision(env, "deny", reason, nil)
		}
		return &exitError{code: 2, err: errors.New(reason)}
	}
	keys := clientvault.Keys(input)
	if len(keys) == 0 {
		if isEvent {
			return nil // nothing to do: the call runs as it is
		}
		_, err := env.Stdout.Write(raw)
		return err
	}
	if len(keys) > 100 {
		return deny(fmt.Sprintf("%d references in one call; at most 100", len(keys)))
	}
	k, server, err := h.key(env)
	if err != nil {
		return err
	}
	defer clear(k)
	hc := &http.Client{Timeout: 30 * time.Second}
	endpoint, err := clientvault.Discover(ctx, hc, server)
	if err != nil {
		return deny(err.Error())
	}
	origin, _ := clientvault.Origin(server)
	now := time.Now()
	seen, err := clientvault.Seen(h.c.data, origin, *h.profile, keys, now)
	if err != nil {
		return err
	}
	refs := make([]clientvault.Ref, len(keys))
	for i, key := range keys {
		refs[i] = clientvault.Ref{Key: key, SeenAt: seen[key]}
	}
	values, err := clientvault.Resolve(ctx, hc, endpoint, k, now, refs)
	if err != nil {
		return deny(err.Error())
	}
	out, bad := clientvault.Replace(input, values)
	clear(values)
	if bad != "" {
		return deny("reference " + bad + ": expired: it shows another value than its key now names (read it again)")
	}
	if isEvent {
		decision, reason := "ask", fmt.Sprintf("phc hook: resolved %s on this machine", strings.Join(keys, ", "))
		switch tool, _ := event["tool_name"].(string); {
		case approve && tool == "Bash":
			// A command can send what it holds anywhere (curl, a pipe): one
			// a prompt put there would carry the values out unseen. A shell
			// command with values in it is always the person's to approve.
			reason += "; a shell command with values in it always asks, even with --approve"
		case approve:
			decision = "allow"
		}
		return writeHookDecision(env, decision, reason, out)
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeHookDecision writes a PreToolUse hook answer.
func writeHookDecision(env *Env, decision, reason string, input any) error {
	o := map[string]any{"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}
	if input != nil {
		o["updatedInput"] = input
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"hookSpecificOutput": o})
}

// runHookInstall adds the hook entries to a Claude Code settings file
// (default ~/.claude/settings.json): PreToolUse resolve for Write, Edit
// and Bash, PostToolUse seen for MCP tools. It keeps everything else in
// the file and prints what it changed.
func runHookInstall(ctx context.Context, env *Env, args []string) error {
	client, rest := firstArg(args)
	if client != "claude-code" && wantsHelp(args) {
		// phc hook install --help: the flag set prints the help.
		_, parseFlags := newHookFlags(env, "hook install")
		return parseFlags(args)
	}
	if client != "claude-code" {
		return usageError("usage: phc hook install claude-code [--settings FILE] [--server URL] [--profile NAME] [--capture-token-file FILE]")
	}
	h, parseFlags := newHookFlags(env, "hook install")
	if err := parseFlags(rest); err != nil {
		return err
	}
	settings := *h.settings
	if settings == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		settings = filepath.Join(home, ".claude", "settings.json")
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := filepath.Abs(h.c.data)
	if err != nil {
		return err
	}
	command := shellQuote(bin) + " hook resolve --data " + shellQuote(data) + " --profile " + shellQuote(*h.profile)
	if *h.server != "" {
		command += " --server " + shellQuote(*h.server)
	}
	doc := map[string]any{}
	mode := os.FileMode(0o600)
	if raw, err := os.ReadFile(settings); err == nil {
		if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
			return fmt.Errorf("%s is not a JSON object; not changed", settings)
		}
		if fi, err := os.Stat(settings); err == nil {
			mode = fi.Mode().Perm()
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		if _, there := doc["hooks"]; there {
			return fmt.Errorf("%s: hooks is not an object; not changed", settings)
		}
		hooks = map[string]any{}
	}
	// resolve before Write, Edit and Bash; seen after every MCP tool, so
	// that a reference's first sighting is when the model got it.
	seenCommand := strings.Replace(command, " hook resolve ", " hook seen ", 1)
	var added []string
	wants := []struct{ event, matcher, command string }{
		{"PreToolUse", "Write|Edit|Bash", command},
		{"PostToolUse", "mcp__.*", seenCommand},
	}
	if *h.capture != "" {
		tf, err := filepath.Abs(*h.capture)
		if err != nil {
			return err
		}
		if _, err := os.Stat(tf); err != nil {
			return fmt.Errorf("--capture-token-file: %w (write the app's token there first: phc token --consumer NAME --secret S --mode write --ttl 8760h)", err)
		}
		wants = append(wants, struct{ event, matcher, command string }{"Stop", "",
			shellQuote(bin) + " hook capture --data " + shellQuote(data) + " --token-file " + shellQuote(tf)})
	}
	for _, want := range wants {
		list, _ := hooks[want.event].([]any)
		if hooks[want.event] != nil && list == nil {
			return fmt.Errorf("%s: hooks.%s is not a list; not changed", settings, want.event)
		}
		there := false
		for _, e := range list {
			m, _ := e.(map[string]any)
			hs, _ := m["hooks"].([]any)
			for _, x := range hs {
				if hm, _ := x.(map[string]any); hm != nil && hm["command"] == want.command {
					there = true
				}
			}
		}
		if there {
			continue
		}
		hooks[want.event] = append(list, map[string]any{"matcher": want.matcher,
			"hooks": []any{map[string]any{"type": "command", "command": want.command, "timeout": 30}}})
		added = append(added, fmt.Sprintf("hooks.%s entry {matcher: %s, command: %s}", want.event, want.matcher, want.command))
	}
	if len(added) == 0 {
		fmt.Fprintf(env.Stdout, "%s already runs %s before Write, Edit and Bash: nothing changed\n", settings, command)
		return nil
	}
	doc["hooks"] = hooks
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		return err
	}
	if err := daemon.WriteFile0600(settings, append(raw, '\n')); err != nil {
		return err
	}
	if mode != 0o600 {
		if err := os.Chmod(settings, mode); err != nil {
			return err
		}
	}
	for _, a := range added {
		fmt.Fprintf(env.Stdout, "added to %s: %s\n", settings, a)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
