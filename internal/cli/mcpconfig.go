package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

// mcpHost is an MCP host phc mcp-config writes a config for, and where it
// keeps it.
type mcpHost struct {
	name, where string
	// servers is the top-level member that holds the servers.
	servers string
	// typed hosts want "type": "stdio" on each server.
	typed bool
}

// mcpHosts are the hosts phc mcp-config knows.
var mcpHosts = []mcpHost{
	{"claude-desktop", "claude_desktop_config.json (Settings → Developer → Edit Config)", "mcpServers", false},
	// Each place is the person's own configuration, not a project's file
	// (.mcp.json, .cursor/mcp.json, .vscode/mcp.json), which is meant to be
	// committed: the config holds a long-lived token.
	{"claude-code", "your user scope: claude mcp add-json --scope user phc '<the \"phc\" object>' (not a project's .mcp.json, which is meant to be committed: this holds a token)", "mcpServers", true},
	{"cursor", "~/.cursor/mcp.json (not a project's .cursor/mcp.json, which is meant to be committed: this holds a token)", "mcpServers", false},
	{"vscode", "your user mcp.json (command MCP: Open User Configuration; not .vscode/mcp.json, which is meant to be committed: this holds a token)", "servers", true},
}

func mcpHostNames() []string {
	var names []string
	for _, h := range mcpHosts {
		names = append(names, h.name)
	}
	return names
}

// runMCPConfig prints a ready MCP host config that starts phc mcp (by its
// absolute path) with a long-lived service token of the consumer.
func runMCPConfig(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "mcp-config", &c)
	consumer := fs.String("consumer", "", "the consumer (app) the host acts as")
	secret := fs.String("secret", "", "the consumer's secret (default: $PHC_CONSUMER_SECRET)")
	host := fs.String("host", "claude-desktop", "the MCP host: "+strings.Join(mcpHostNames(), ", "))
	scope := fs.String("scope", "*", "comma-separated key patterns the token may reach (grants decide the rest)")
	mode := fs.String("mode", "read-write", "read, write or read-write")
	purpose := fs.String("purpose", "", "the one purpose the token reads under (default: that of the app's only grant; asked on a terminal when it has several)")
	name := fs.String("name", "phc", "the server's name in the host")
	bin := fs.String("bin", "", "the phc binary the host starts (default: this one, by its absolute path)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("mcp-config takes no arguments (see phc mcp-config -h)")
	}
	if *secret == "" {
		*secret = env.Getenv("PHC_CONSUMER_SECRET")
	}
	if *consumer == "" || *secret == "" {
		return usageError("usage: phc mcp-config --consumer NAME --secret S [--host %s] (the secret phc consumer add printed)", strings.Join(mcpHostNames(), "|"))
	}
	hi := -1
	for i, h := range mcpHosts {
		if h.name == *host {
			hi = i
		}
	}
	if hi < 0 {
		return usageError("unknown --host %q: choose one of %s", *host, strings.Join(mcpHostNames(), ", "))
	}
	h := mcpHosts[hi]
	path := *bin
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot tell where this phc is (%v): give --bin PATH", err)
		}
		if strings.Contains(exe, "go-build") {
			return fmt.Errorf("this phc runs from a temporary build (go run), which is gone when it exits, so a host could not start it: run go install ./cmd/phc, then $(go env GOPATH)/bin/phc mcp-config … (or give --bin PATH)")
		}
		path = exe
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return fmt.Errorf("--bin %s: no such program", printable(path))
	}
	data, err := filepath.Abs(c.data)
	if err != nil {
		return err
	}
	if *purpose == "" {
		p, err := choosePurpose(ctx, env, c, *consumer, *mode)
		if err != nil {
			return err
		}
		*purpose = p
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	tok, err := cl.MintToken(ctx, client.TokenRequest{Consumer: *consumer, Secret: *secret, Scope: *scope, Mode: *mode, TTL: "8760h", Purpose: *purpose})
	if err != nil {
		return err
	}
	server := map[string]any{"command": path, "args": []string{"mcp"},
		"env": map[string]string{"PHC_TOKEN": tok.Token, "PHC_HOME": data}}
	if h.typed {
		server["type"] = "stdio"
	}
	if err := printJSON(env.Stdout, map[string]any{h.servers: map[string]any{*name: server}}); err != nil {
		return err
	}
	for _, w := range tok.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(env.Stderr, "Put this in %s and restart the host.\n", h.where)
	fmt.Fprintf(env.Stderr, "The token expires at %s: before then, run this command again, replace the config and restart the host (phc token list shows it; phc token revoke ends the old one).\n", humanExpiry(tok.ExpiresAt, time.Now()))
	return nil
}

// choosePurpose picks the purpose of a config's token when --purpose names
// none: a token bound to no purpose reads only what auto_grant gives every
// app, so a config with one would read next to nothing. It is the purpose
// of the app's live grants for what the mode does (read, or contribute for
// a write-only token) when they share one; with several, the owner picks
// one on a terminal, and elsewhere the command refuses and lists them.
func choosePurpose(ctx context.Context, env *Env, c common, consumer, mode string) (string, error) {
	op := "read"
	if mode == "write" {
		op = "contribute"
	}
	var grants []custodian.Grant
	cl, err := newClient(env, c, true)
	if err == nil {
		grants, err = cl.Grants(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("no --purpose, and the purposes of %s's grants cannot be listed: %w; give --purpose P", printable(consumer), err)
	}
	var purposes []string
	now := time.Now()
	for _, g := range grants {
		if g.Recipient.Kind != "consumer" || g.Recipient.ID != consumer || g.RevokedAt != nil || g.SpentAt != nil ||
			!g.ExpiresAt.After(now) || !slices.Contains(g.Operations, op) || slices.Contains(purposes, g.Purpose) {
			continue
		}
		purposes = append(purposes, g.Purpose)
	}
	quoted := make([]string, len(purposes))
	for i, p := range purposes {
		quoted[i] = strconv.Quote(p)
	}
	switch {
	case len(purposes) == 0:
		return "", fmt.Errorf("%s has no live %s grant, so a config for it would read nothing: grant it one first (phc grant --to %s --purpose P --ops %s --keys 'K.*'), then run this again (or give --purpose P)",
			printable(consumer), op, printable(consumer), op)
	case len(purposes) == 1:
		fmt.Fprintf(env.Stderr, "The token reads under %s, the purpose of %s's %s grant.\n", printable(quoted[0]), printable(consumer), op)
		return purposes[0], nil
	case !env.IsTerminal():
		return "", usageError("%s's %s grants have several purposes (%s): choose one with --purpose", printable(consumer), op, printable(strings.Join(quoted, ", ")))
	}
	fmt.Fprintf(env.Stderr, "%s's %s grants have several purposes; the token reads under one:\n", printable(consumer), op)
	for i, q := range quoted {
		fmt.Fprintf(env.Stderr, "  %d) %s\n", i+1, printable(q))
	}
	fmt.Fprint(env.Stderr, "purpose (number): ")
	line, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if n, convErr := strconv.Atoi(strings.TrimSpace(line)); convErr == nil && n >= 1 && n <= len(purposes) {
		return purposes[n-1], nil
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	return "", usageError("no purpose chosen (a number from 1 to %d): choose one with --purpose", len(purposes))
}
