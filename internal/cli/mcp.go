package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/phc-project/phc/internal/mcpserver"
)

// runMCP is phc mcp: an MCP server on standard input and output for a host
// that starts its servers as subprocesses. It relays every message to and
// from the running daemon's /mcp endpoint with the consumer's token, so
// the daemon alone decides, under the same access control as HTTP.
func runMCP(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "mcp", &c)
	token := fs.String("token", "", "the app's service token (default: $PHC_TOKEN)")
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
	// A clear error before the host's first message: daemon down, or
	// locked.
	var status struct {
		Locked bool `json:"locked"`
	}
	if err := cl.do(ctx, "GET", "/context/status", nil, &status); err != nil {
		return err
	}
	if status.Locked {
		return errors.New("the vault is locked: unlock it first (phc unlock)")
	}
	upstream, err := (&mcp.StreamableClientTransport{
		Endpoint:   cl.base + "/mcp",
		HTTPClient: &http.Client{Transport: mcpserver.BearerTransport{Token: *token}},
	}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect to the daemon's MCP endpoint: %w", err)
	}
	defer upstream.Close()
	host, err := (&mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}).Connect(ctx)
	if err != nil {
		return err
	}
	defer host.Close()
	return relay(ctx, host, upstream)
}

// servePublic serves a host that gave phc mcp no token: it starts, and
// answers context_status (public in PCP §9) with the daemon's status;
// every other tool answers unauthenticated. It says so on standard error,
// where a host shows a server's log.
func servePublic(ctx context.Context, env *Env, cl *client) error {
	fmt.Fprintln(env.Stderr, "phc mcp: no token (PHC_TOKEN or --token): only context_status answers; "+
		"every other tool is unauthenticated until the server is started with the app's token (see phc token)")
	srv := mcpserver.Public(func(ctx context.Context) (any, error) {
		var status json.RawMessage
		if err := cl.do(ctx, "GET", "/context/status", nil, &status); err != nil {
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

// relay copies messages both ways until either side ends. The host ending
// its input is a normal end.
func relay(ctx context.Context, host, upstream mcp.Connection) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	pump := func(from, to mcp.Connection, what string) {
		for {
			msg, err := from.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if err := to.Write(ctx, msg); err != nil {
				errc <- fmt.Errorf("%s: %w", what, err)
				return
			}
		}
	}
	go pump(host, upstream, "to the daemon")
	go pump(upstream, host, "to the host")
	err := <-errc
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		// Give the last answer a moment to reach the host.
		time.Sleep(50 * time.Millisecond)
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
