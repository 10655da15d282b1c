// Package client is a typed client of the phc daemon's HTTP API: one
// method per endpoint that phc's own commands, phc bench and phc
// conformance call. The answers decode into the core's own view types
// (package custodian), which the daemon encodes, so nothing is lost on the
// way; where the daemon wraps a view in an envelope ({"grants": […]}) the
// method returns what is inside. An error answer is an [*Error], decoded
// from the body the daemon writes for every error (custodian.WireError).
//
// The client finds no daemon and reads no file: its caller gives it the
// base URL and the token (the CLI finds them in the data dir, see
// internal/cli).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/humanfmt"
	"github.com/phc-project/phc/schema"
)

// DefaultTimeout bounds a request of a client made by [New]: on loopback
// every request but a bulk one (an export, an import, phc check) answers
// within it.
const DefaultTimeout = 60 * time.Second

// maxAnswer bounds the bytes read of one successful answer, and
// maxErrorAnswer those of an error answer.
const (
	maxAnswer      = 64 << 20
	maxErrorAnswer = 1 << 20
)

// Client sends requests to one daemon. Its fields may be set before its
// first request, not while requests are under way.
type Client struct {
	// Base is the daemon's URL, "http://127.0.0.1:7200", without a
	// trailing slash.
	Base string
	// Token, if set, is sent as the bearer token of every request: the
	// owner's session or an app's token.
	Token string
	// HTTP sends the requests.
	HTTP *http.Client
	// CheckToken, if set, is asked before each request that would carry
	// Token; its error is returned and nothing is sent. The CLI refuses
	// so to send the owner's session to another daemon than its own.
	CheckToken func() error
}

// New returns a client of the daemon at base with no token, whose
// requests time out after [DefaultTimeout].
func New(base string) *Client {
	return &Client{Base: base, HTTP: &http.Client{Timeout: DefaultTimeout}}
}

// WithToken returns a copy of c that sends token (sharing c's HTTP
// client, and so its connections).
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.Token = token
	return &cp
}

// Error is an error answer of the daemon (status 300 or more): its status
// and what its body says. Message is the public text; Constraint is the
// code of the error table ("not_found", "conflict", …), or "unknown" for
// an answer without one (not the daemon's: a proxy's, say).
type Error struct {
	Status     int
	Constraint string
	Message    string
	Violations []schema.Violation // schema_violation only
	RequestID  string             // approval_required only
	Purposes   []string           // purpose_required only
	// RetryAfter is the answer's Retry-After (rate_limited), or 0.
	RetryAfter time.Duration
}

// Error is the message, the status and the code, then each violation on
// the same line: where, and what is wrong there.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Constraint)
	for _, v := range e.Violations {
		if v.Message == "" {
			raw, _ := json.Marshal(v)
			msg += "; " + string(raw)
			continue
		}
		path := v.Path
		if path == "" {
			path = "the request"
		}
		msg += fmt.Sprintf("; %s: %s", path, v.Message)
	}
	return msg
}

// IsConstraint reports whether err is an error answer with the constraint
// code constraint.
func IsConstraint(err error, constraint string) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Constraint == constraint
}

// rawBody is a request body sent byte for byte: a document the caller
// read (a bundle, a card, a DEC document), not a value to encode.
type rawBody []byte

// streamBody is a request body read from r as it is sent (n bytes), with
// extra request headers.
type streamBody struct {
	r      io.Reader
	n      int64
	header http.Header
}

// do sends a request with an optional body (nil, a rawBody, or a value
// encoded as JSON) and decodes a JSON answer into out, unless out is nil.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	raw, err := c.bytes(ctx, method, path, body)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("malformed answer from the daemon: %w", err)
		}
	}
	return nil
}

// bytes sends a request and returns a successful answer's body as it is.
func (c *Client) bytes(ctx context.Context, method, path string, body any) ([]byte, error) {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
}

// send sends a request and returns a successful answer, whose body the
// caller reads and closes; an answer of 300 or more is an *Error.
func (c *Client) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd = bytes.NewReader(b)
	case streamBody:
		rd = b.r
	default:
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b, ok := body.(streamBody); ok {
		req.ContentLength = b.n
		req.Header.Set("Content-Type", "application/octet-stream")
		for k, v := range b.header {
			req.Header[k] = v
		}
	}
	if c.Token != "" {
		if c.CheckToken != nil {
			if err := c.CheckToken(); err != nil {
				return nil, err
			}
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok && ue.Timeout() && ctx.Err() == nil {
			// On loopback a refusal is immediate: something accepted the
			// connection and did not answer in time — a busy daemon (phc
			// check holds every write for minutes at millions of claims).
			return nil, fmt.Errorf("the daemon at %s took the request but did not answer within %s: it is busy (see its log); retry later", c.Base, humanfmt.Duration(c.HTTP.Timeout))
		}
		return nil, fmt.Errorf("cannot reach the daemon at %s (is phc serve running?): %w", c.Base, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
		return nil, answerError(resp, raw)
	}
	return resp, nil
}

// answerError decodes an error answer.
func answerError(resp *http.Response, raw []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var w custodian.WireError
	if json.Unmarshal(raw, &w) != nil || w.Constraint == "" {
		e.Message, e.Constraint = http.StatusText(resp.StatusCode), "unknown"
		return e
	}
	e.Constraint, e.Message, e.Violations, e.RequestID, e.Purposes = w.Constraint, w.Error, w.Violations, w.RequestID, w.Purposes
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}
