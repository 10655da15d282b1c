package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
	"github.com/phc-project/phc/internal/clientvault"
	"github.com/phc-project/phc/internal/mcpserver"
)

// runMCP is phc mcp: an MCP server on standard input and output for a host
// that starts its servers as subprocesses. It relays every message to and
// from the running daemon's /mcp endpoint with the consumer's token, so
// the daemon alone decides, under the same access control as HTTP.
//
// It stays up for as long as the host keeps it: while the vault is locked
// the daemon answers every tool with vault_locked, and the same session
// goes on once it is unlocked. A message too large to relay is answered
// too_large. Once the daemon no longer accepts the token (it expired or
// was revoked), phc mcp says so on standard error and answers every tool
// call unauthenticated until the host restarts it with a new token.
func runMCP(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "mcp", &c)
	token := fs.String("token", "", "the app's service token (default: $PHC_TOKEN)")
	vaultProfile := fs.String("vault", "", "send the Client-Vault header of this local vault profile (its key is made on first use; see phc hook)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *token == "" {
		*token = env.Getenv("PHC_TOKEN")
	}
	cl, err := newClient(env, c, false)
	if err != nil {
		return err
	}
	if *token == "" {
		return servePublic(ctx, env, cl)
	}
	// A clear error before the host's first message: daemon down.
	status, err := cl.Status(ctx)
	if err != nil {
		return err
	}
	if status.Locked {
		fmt.Fprintln(env.Stderr, "phc mcp: the vault is locked: every tool answers vault_locked until it is unlocked (phc unlock); no restart is needed")
	}
	b := &bridge{stderr: env.Stderr, cached: map[string]json.RawMessage{}, asked: map[any]string{}}
	var base http.RoundTripper = mcpserver.BearerTransport{Token: *token}
	if *vaultProfile != "" {
		origin, _ := clientvault.Origin(cl.Base)
		k, _, err := clientvault.LoadKey(c.data, origin, *vaultProfile)
		if err != nil {
			return err
		}
		// Only the kid travels on the MCP connection, never K.
		base = headerTransport{name: clientvault.HeaderName, value: clientvault.Header(k), base: base}
		clear(k)
	}
	upstream, err := (&mcp.StreamableClientTransport{
		Endpoint: cl.Base + "/mcp",
		HTTPClient: &http.Client{Transport: refusalWatch{
			base:    base,
			refused: &b.refused,
		}},
	}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect to the daemon's MCP endpoint: %w", err)
	}
	defer upstream.Close()
	// Read lines longer than the daemon takes, to answer them too_large
	// rather than end.
	host, err := (&mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout},
		MaxLineLength: 4 * mcpserver.MaxMessage}).Connect(ctx)
	if err != nil {
		return err
	}
	defer host.Close()
	b.host, b.up = host, upstream
	return b.relay(ctx)
}

// servePublic serves a host that gave phc mcp no token: it starts, and
// answers context_status (public in PCP §9) with the daemon's status;
// every other tool answers unauthenticated. It says so on standard error,
// where a host shows a server's log.
func servePublic(ctx context.Context, env *Env, cl *client.Client) error {
	fmt.Fprintln(env.Stderr, "phc mcp: no token (PHC_TOKEN or --token): only context_status answers; "+
		"every other tool is unauthenticated until the server is started with the app's token (see phc token)")
	srv := mcpserver.Public(func(ctx context.Context) (any, error) {
		status, err := cl.Status(ctx)
		if err != nil {
			return nil, err
		}
		return status, nil
	}, nil)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// refusalWatch is the bridge's HTTP transport: it notes when the daemon
// refuses the token (401), before the MCP client sees the answer.
type refusalWatch struct {
	base    http.RoundTripper
	refused *atomic.Bool
}

func (w refusalWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		w.refused.Store(true)
	}
	return resp, err
}

// bridge relays between the host (stdio) and the daemon (streamable HTTP).
type bridge struct {
	host, up mcp.Connection
	stderr   io.Writer
	refused  atomic.Bool // the daemon no longer accepts the token
	told     sync.Once

	mu     sync.Mutex
	asked  map[any]string             // id of a host request in flight → its method, for the answers kept
	cached map[string]json.RawMessage // method → the daemon's last answer (tools/list, prompts/list, …)
}

// kept are the methods whose answers the bridge keeps, to give them again
// once the daemon no longer accepts the token.
var kept = map[string]bool{"tools/list": true, "prompts/list": true, "resources/templates/list": true, "resources/list": true}

// relay copies messages both ways until the host ends its input (a normal
// end) or the daemon's side fails for another reason than the token.
func (b *bridge) relay(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- b.fromHost(ctx) }()
	go func() {
		if err := b.fromDaemon(ctx); err != nil {
			errc <- err
		}
	}()
	err := <-errc
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		// Give the last answer a moment to reach the host.
		time.Sleep(50 * time.Millisecond)
		return nil
	}
	return err
}

// fromHost relays the host's messages to the daemon, and answers those it
// cannot relay itself.
func (b *bridge) fromHost(ctx context.Context) error {
	for {
		msg, err := b.host.Read(ctx)
		if err != nil {
			return err
		}
		req, _ := msg.(*jsonrpc.Request)
		if b.refused.Load() {
			if err := b.answerRefused(ctx, req); err != nil {
				return err
			}
			continue
		}
		if raw, err := jsonrpc.EncodeMessage(msg); err == nil && len(raw) > mcpserver.MaxMessage {
			if err := b.answerTooLarge(ctx, req); err != nil {
				return err
			}
			continue
		}
		if req != nil && req.IsCall() && kept[req.Method] {
			b.mu.Lock()
			b.asked[req.ID.Raw()] = req.Method
			b.mu.Unlock()
		}
		if err := b.up.Write(ctx, msg); err != nil {
			if b.refused.Load() {
				b.tell()
				err = b.answerRefused(ctx, req)
			} else {
				err = b.answerError(ctx, req, "the daemon did not take the message: "+err.Error())
			}
			if err != nil {
				return err
			}
		}
	}
}

// fromDaemon relays the daemon's messages to the host. Once the daemon
// no longer accepts the token it stops without ending the bridge.
func (b *bridge) fromDaemon(ctx context.Context) error {
	for {
		msg, err := b.up.Read(ctx)
		if err != nil {
			if b.refused.Load() {
				b.tell()
				return nil
			}
			return fmt.Errorf("from the daemon: %w", err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
			b.mu.Lock()
			if m, ok := b.asked[resp.ID.Raw()]; ok {
				delete(b.asked, resp.ID.Raw())
				b.cached[m] = resp.Result
			}
			b.mu.Unlock()
		}
		if err := b.host.Write(ctx, msg); err != nil {
			return fmt.Errorf("to the host: %w", err)
		}
	}
}

// tell says once, on standard error, that the token is no longer accepted
// and what to do.
func (b *bridge) tell() {
	b.told.Do(func() {
		fmt.Fprintln(b.stderr, "phc mcp: the daemon no longer accepts this app's token: it has expired or was revoked. "+
			"Get a new one (phc token --consumer NAME --ttl …) and restart this MCP server with it (--token or PHC_TOKEN). "+
			"Until then every tool answers unauthenticated.")
	})
}

// answerRefused answers req once the token is no longer accepted: a tool
// call is the tool error unauthenticated, a listing the daemon's last
// answer, a ping an empty result; anything else a JSON-RPC error.
func (b *bridge) answerRefused(ctx context.Context, req *jsonrpc.Request) error {
	if req == nil || !req.IsCall() {
		return nil // a response or a notification: nobody waits for it
	}
	w := custodian.Describe(&custodian.Error{Op: "mcp", Kind: custodian.KindUnauthenticated,
		Public: "the token has expired or was revoked: restart phc mcp with a new token"})
	switch req.Method {
	case "tools/call":
		return b.answerTool(ctx, req, w)
	case "ping":
		return b.host.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
	}
	b.mu.Lock()
	res, ok := b.cached[req.Method]
	b.mu.Unlock()
	if ok {
		return b.host.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: res})
	}
	return b.answerError(ctx, req, w.Error)
}

// answerTooLarge answers req, a message larger than the daemon takes: a
// tool call with the tool error too_large, anything else with a JSON-RPC
// error.
func (b *bridge) answerTooLarge(ctx context.Context, req *jsonrpc.Request) error {
	if req == nil || !req.IsCall() {
		return nil
	}
	w := custodian.Describe(&custodian.Error{Op: "mcp", Kind: custodian.KindTooLarge})
	if req.Method == "tools/call" {
		return b.answerTool(ctx, req, w)
	}
	return b.answerError(ctx, req, w.Error)
}

// answerTool answers the tool call req with the tool error w, as the
// daemon words its own.
func (b *bridge) answerTool(ctx context.Context, req *jsonrpc.Request, w custodian.WireError) error {
	raw, _ := json.Marshal(w)
	res, err := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: json.RawMessage(raw)})
	if err != nil {
		return err
	}
	return b.host.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: res})
}

// answerError answers the call req, if it is one, with a JSON-RPC error.
func (b *bridge) answerError(ctx context.Context, req *jsonrpc.Request, msg string) error {
	if req == nil || !req.IsCall() {
		return nil
	}
	return b.host.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// headerTransport sets one header on every request.
type headerTransport struct {
	name, value string
	base        http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.base.RoundTrip(r)
}
