package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPTarget is the MCP face of a custodian: the requests an application
// makes with its service token that an MCP tool carries go over MCP
// (streamable HTTP, the Go SDK's client), translated to the tool call; the
// rest — the owner's, anonymous ones, and what no tool expresses — go over
// HTTP (next). A translated answer is given back as the HTTP face would
// give it: the status the error table gives the tool error's constraint
// (or the route's success status), and the tool's JSON as the body. So the
// suite's cases check both faces against one expectation.
type MCPTarget struct {
	next     Target
	endpoint string
	client   *http.Client

	connect  sync.Mutex // held while a session is opened
	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession // by bearer token
	carried  int                           // requests carried over MCP
}

// NewMCPTarget returns the MCP face of the custodian whose HTTP face is
// next and whose MCP endpoint is endpoint (…/mcp).
func NewMCPTarget(next Target, endpoint string) *MCPTarget {
	return &MCPTarget{next: next, endpoint: endpoint, client: &http.Client{Timeout: 30 * time.Second},
		sessions: map[string]*mcp.ClientSession{}}
}

// String is the HTTP face's: the suite derives the custodian's host from
// it (same-origin cases).
func (t *MCPTarget) String() string { return t.next.String() }

// Carried is how many requests went over MCP.
func (t *MCPTarget) Carried() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.carried
}

// Close ends every MCP session.
func (t *MCPTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	for _, s := range t.sessions {
		err = errors.Join(err, s.Close())
	}
	t.sessions = map[string]*mcp.ClientSession{}
	return err
}

// statusOf is the HTTP status of a constraint code, from the suite's one
// table of outcome classes (docs/design.md §6), plus internal's 500. A tool
// error has no method, so invalid_request is always 400.
func statusOf(constraint string) (int, bool) {
	if constraint == "internal" {
		return 500, true
	}
	for name, o := range classes {
		if o.constraint == constraint && name != "method-not-allowed" {
			return o.status, true
		}
	}
	return 0, false
}

// call is a request translated to a tool call.
type call struct {
	tool    string
	args    any                                 // a map, or the request's own JSON object (json.RawMessage), byte for byte
	success func(structured map[string]any) int // the HTTP face's success status
}

func ok200(map[string]any) int { return http.StatusOK }

// translate maps r to a tool call, or returns nil for a request no tool
// carries as the HTTP face would take it.
func translate(r *Request) *call {
	bearer := r.Header.Get("Authorization")
	if !strings.HasPrefix(bearer, "Bearer ctxs_") || r.Host != "" || len(r.Header) > 1 || len(r.Body) > 64<<10 {
		return nil
	}
	path, rawQuery, _ := strings.Cut(r.Path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil
	}
	purpose := func(args map[string]any) map[string]any {
		for k, v := range q {
			if k != "purpose" || len(v) != 1 {
				return nil
			}
			args["purpose"] = v[0]
		}
		return args
	}
	// object is the body as the tool's arguments, byte for byte (so that
	// duplicate members and the like reach the core as over HTTP), with
	// more members spliced in first; nil for a body that is not one JSON
	// object, which JSON-RPC could not carry as it is.
	object := func(more map[string]any) json.RawMessage {
		b := strings.TrimSpace(string(r.Body))
		if r.Body == nil || !json.Valid([]byte(b)) || !strings.HasPrefix(b, "{") {
			return nil
		}
		prefix := ""
		for k, v := range more {
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(v)
			prefix += string(kb) + ":" + string(vb) + ","
		}
		inner := strings.TrimSpace(b[1:])
		if inner == "}" {
			prefix = strings.TrimSuffix(prefix, ",")
		}
		return json.RawMessage("{" + prefix + inner)
	}
	id := func(prefix string) (string, bool) {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok || rest == "" || strings.Contains(rest, "/") {
			return "", false
		}
		v, err := url.PathUnescape(rest)
		return v, err == nil && v != "" && !strings.Contains(v, "/")
	}
	switch {
	case r.Method == "GET" && path == "/context/status" && rawQuery == "" && r.Body == nil:
		return &call{"context_status", map[string]any{}, ok200}
	case r.Method == "GET" && path == "/context/fields" && r.Body == nil:
		if a := purpose(map[string]any{}); a != nil {
			return &call{"context_list", a, ok200}
		}
	case r.Method == "GET" && path == "/context/context" && r.Body == nil:
		if a := purpose(map[string]any{}); a != nil {
			return &call{"context_context", a, ok200}
		}
	case r.Method == "GET" && strings.HasPrefix(path, "/context/fields/") && !strings.HasPrefix(path, "/context/fields/category/") && r.Body == nil:
		if v, ok := id("/context/fields/"); ok {
			if a := purpose(map[string]any{"id": v}); a != nil {
				return &call{"context_get", a, ok200}
			}
		}
	case r.Method == "PUT" && strings.HasPrefix(path, "/context/fields/") && rawQuery == "":
		v, ok := id("/context/fields/")
		if !ok {
			return nil
		}
		body := object(map[string]any{"id": v})
		if body == nil {
			return nil
		}
		return &call{"context_set", body, func(s map[string]any) int {
			if _, field := s["id"]; field {
				return http.StatusOK
			}
			return http.StatusAccepted // a write waiting for the owner
		}}
	case r.Method == "GET" && path == "/context/search" && r.Body == nil:
		args := map[string]any{}
		for k, v := range q {
			if len(v) != 1 {
				return nil
			}
			switch k {
			case "q":
				args["query"] = v[0]
			case "purpose":
				args["purpose"] = v[0]
			case "limit":
				n, err := strconv.Atoi(v[0])
				if err != nil {
					return nil
				}
				args["limit"] = n
			default:
				return nil
			}
		}
		return &call{"context_search", args, ok200}
	case r.Method == "GET" && strings.HasPrefix(path, "/phc/v1/proposals/") && rawQuery == "" && r.Body == nil:
		if v, ok := id("/phc/v1/proposals/"); ok {
			return &call{"memory_status", map[string]any{"proposal_id": v}, ok200}
		}
	case r.Method == "POST" && strings.HasPrefix(path, "/phc/v1/proposals/") && strings.HasSuffix(path, "/withdraw") && rawQuery == "" && r.Body == nil:
		rest := strings.TrimSuffix(strings.TrimPrefix(path, "/phc/v1/proposals/"), "/withdraw")
		if v, err := url.PathUnescape(rest); err == nil && v != "" && !strings.Contains(v, "/") {
			return &call{"memory_withdraw", map[string]any{"proposal_id": v}, ok200}
		}
	case r.Method == "POST" && path == "/phc/v1/proposals" && rawQuery == "":
		if body := object(nil); body != nil {
			return &call{"memory_propose", body, func(map[string]any) int { return http.StatusCreated }}
		}
	}
	return nil
}

// Do carries r over MCP when a tool expresses it, else over HTTP.
func (t *MCPTarget) Do(ctx context.Context, r *Request) (*Response, error) {
	c := translate(r)
	if c == nil {
		return t.next.Do(ctx, r)
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	cs, err := t.session(ctx, token)
	if err != nil {
		// A token the MCP endpoint refuses: the HTTP face's answer to it.
		return t.next.Do(ctx, r)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		// The endpoint refused the request itself (a token revoked since
		// the session began, a locked vault: 401 before any tool runs):
		// the session is over, and the answer is the HTTP face's.
		t.mu.Lock()
		delete(t.sessions, token)
		t.mu.Unlock()
		cs.Close()
		resp, herr := t.next.Do(ctx, r)
		if herr == nil && resp.Status < 300 {
			return nil, fmt.Errorf("mcp %s: the MCP endpoint refused a request the HTTP face accepted: %w", c.tool, err)
		}
		return resp, herr
	}
	t.mu.Lock()
	t.carried++
	t.mu.Unlock()
	var text string
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	var structured map[string]any
	if err := json.Unmarshal([]byte(text), &structured); err != nil {
		return nil, fmt.Errorf("mcp %s: the tool's text is not its JSON: %w", c.tool, err)
	}
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	status := c.success(structured)
	if res.IsError {
		constraint, _ := structured["constraint"].(string)
		var ok bool
		if status, ok = statusOf(constraint); !ok {
			return nil, fmt.Errorf("mcp %s: a tool error without a known constraint: %s", c.tool, text)
		}
		if secs, ok := structured["retry_after"].(float64); ok && secs > 0 {
			h.Set("Retry-After", strconv.Itoa(int(secs)))
		}
	}
	return &Response{Status: status, Header: h, Body: []byte(text + "\n")}, nil
}

func (t *MCPTarget) session(ctx context.Context, token string) (*mcp.ClientSession, error) {
	t.connect.Lock() // one session per token, even with parallel steps
	defer t.connect.Unlock()
	t.mu.Lock()
	cs, ok := t.sessions[token]
	t.mu.Unlock()
	if ok {
		return cs, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "phc-conformance", Version: "1"}, nil)
	hc := *t.client
	hc.Transport = bearer{token: token, base: http.DefaultTransport}
	cs, err := client.Connect(context.WithoutCancel(ctx), &mcp.StreamableClientTransport{Endpoint: t.endpoint, HTTPClient: &hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.sessions[token] = cs
	t.mu.Unlock()
	return cs, nil
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
