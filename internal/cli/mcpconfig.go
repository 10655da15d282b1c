package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// mcpHosts are the MCP hosts phc mcp-config writes a config for, and where
// each keeps it.
var mcpHosts = []struct {
	name, where string
	// servers is the top-level member that holds the servers.
	servers string
	// typed hosts want "type": "stdio" on each server.
	typed bool
}{
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
	purpose := fs.String("purpose", "", "the one purpose the token reads under")
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
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	var tok struct {
		Token     string   `json:"token"`
		ExpiresAt string   `json:"expires_at"`
		Warnings  []string `json:"warnings"`
	}
	req := map[string]string{"consumer": *consumer, "secret": *secret, "scope": *scope, "mode": *mode, "ttl": "8760h"}
	if *purpose != "" {
		req["purpose"] = *purpose
	}
	if err := cl.do(ctx, "POST", "/context/tokens/service", req, &tok); err != nil {
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
	fmt.Fprintf(env.Stderr, "The token expires at %s: before then, run this command again, replace the config and restart the host (phc token list shows it; phc token revoke ends the old one).\n", tok.ExpiresAt)
	return nil
}
