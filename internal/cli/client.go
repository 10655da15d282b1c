package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/humanfmt"
)

// client talks to a running daemon over its HTTP API.
type client struct {
	base  string
	token string
	http  *http.Client
	// addrFrom names where the address came from ("--addr", "PHC_ADDR",
	// or "" for the data dir's addr file or the default), and dir is the
	// data dir whose session the client holds: together they decide
	// whether the session may go to base (see refusedSession).
	addrFrom string
	dir      string
}

// newClient finds the daemon (--addr, else PHC_ADDR, else DIR/addr, else
// the default) and, when session is set, reads the owner session token from
// DIR/session.
func newClient(env *Env, c common, session bool) (*client, error) {
	addr, from := c.addr, "--addr"
	if addr == "" {
		addr, from = env.Getenv("PHC_ADDR"), "PHC_ADDR"
	}
	if addr == "" {
		from = ""
		if raw, err := os.ReadFile(filepath.Join(c.data, addrFile)); err == nil {
			addr = strings.TrimSpace(string(raw))
		}
	}
	if addr == "" {
		addr = defaultAddr
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	cl := &client{base: "http://" + addr, http: &http.Client{Timeout: 60 * time.Second}, addrFrom: from, dir: c.data}
	if session {
		raw, err := os.ReadFile(filepath.Join(c.data, sessionFile))
		if err != nil {
			return nil, fmt.Errorf("no owner session in %s (is the daemon running and unlocked? try phc unlock)", c.data)
		}
		cl.token = strings.TrimSpace(string(raw))
	}
	return cl, nil
}

// refusedSession says why the owner session of cl.dir is not sent when
// --addr or PHC_ADDR chose a daemon other than that data dir's own: the
// session belongs to the daemon whose address the data dir records, no
// other daemon knows it, and another server must never receive it. It
// returns nil when the two agree (a stale session, which the daemon's own
// answer explains).
func (cl *client) refusedSession() error {
	if cl.addrFrom == "" {
		return nil
	}
	addr := strings.TrimPrefix(cl.base, "http://")
	raw, err := os.ReadFile(filepath.Join(cl.dir, addrFile))
	if err != nil {
		return fmt.Errorf("%s names the daemon at %s, which does not know the owner session of the data dir %s (PHC_HOME or --data); no daemon of %s is running (it has no addr file): point PHC_HOME (or --data) at the data dir of the daemon at %s, or unset %s and start the daemon of %s with phc serve",
			cl.addrFrom, addr, printable(cl.dir), printable(cl.dir), addr, cl.addrFrom, printable(cl.dir))
	}
	home := strings.TrimSpace(string(raw))
	if sameAddr(home, addr) {
		return nil
	}
	return fmt.Errorf("%s names the daemon at %s, but the data dir %s (PHC_HOME or --data) belongs to another daemon, at %s: the owner session of one does not work at the other; unset %s (or set it to %s), or point PHC_HOME (or --data) at the data dir of the daemon at %s",
		cl.addrFrom, addr, printable(cl.dir), printable(home), cl.addrFrom, printable(home), addr)
}

// sameAddr reports whether two host:port addresses name the same loopback
// socket ("localhost" is 127.0.0.1).
func sameAddr(a, b string) bool {
	norm := func(s string) string {
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return s
		}
		if strings.EqualFold(host, "localhost") {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String()
		}
		return net.JoinHostPort(host, port)
	}
	return norm(a) == norm(b)
}

// apiError is an error answer of the daemon.
type apiError struct {
	Status     int               `json:"-"`
	Message    string            `json:"error"`
	Constraint string            `json:"constraint"`
	Violations []json.RawMessage `json:"violations,omitempty"`
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Constraint)
	for _, raw := range e.Violations {
		// One line: the field and what is wrong with it.
		var v struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &v) == nil && v.Message != "" {
			if v.Path == "" {
				v.Path = "the request"
			}
			msg += fmt.Sprintf("; %s: %s", v.Path, v.Message)
		} else {
			msg += "; " + string(raw)
		}
	}
	return msg
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (if not nil).
func (cl *client) do(ctx context.Context, method, path string, body, out any) error {
	raw, err := cl.send(ctx, method, path, body)
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

// raw sends a request without a body and returns the answer's body as is.
func (cl *client) raw(ctx context.Context, method, path string) ([]byte, error) {
	return cl.send(ctx, method, path, nil)
}

// rawBody is a request body sent as it is, not re-encoded.
type rawBody []byte

// send sends a request and returns a successful answer's body.
func (cl *client) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	resp, err := cl.request(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// request sends a request and returns a successful answer, whose body the
// caller reads and closes; an answer of 300 or more is an *apiError.
func (cl *client) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd = bytes.NewReader(b) // sent byte for byte
	default:
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.token != "" {
		// The owner session goes only to the daemon of the data dir it
		// came from: never to another server PHC_ADDR or --addr names.
		if err := cl.refusedSession(); err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+cl.token)
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok && ue.Timeout() && ctx.Err() == nil {
			// On loopback a refusal is immediate: something accepted the
			// connection and did not answer in time — a busy daemon (phc
			// check holds every write for minutes at millions of claims).
			return nil, fmt.Errorf("the daemon at %s took the request but did not answer within %s: it is busy (see its log); retry later", cl.base, humanfmt.Duration(cl.http.Timeout))
		}
		return nil, fmt.Errorf("cannot reach the daemon at %s (is phc serve running?): %w", cl.base, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Constraint == "" {
			e.Message, e.Constraint = http.StatusText(resp.StatusCode), "unknown"
		}
		return nil, e
	}
	return resp, nil
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ownerDo sends one request with the owner's session (see client.do).
func ownerDo(ctx context.Context, env *Env, c common, method, path string, body, out any) error {
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	return cl.do(ctx, method, path, body, out)
}

// bulkTimeout bounds a request that moves or reads a whole vault (an
// export, an import, an adopt of everything held, phc check, a graph
// rebuild or export): minutes for 100,000 claims on a slow machine, and
// for phc check at millions of claims on a cold disk, where every other
// request takes a minute at most.
const bulkTimeout = 30 * time.Minute

// ownerBulk is ownerDo for such a request.
func ownerBulk(ctx context.Context, env *Env, c common, method, path string, body, out any) error {
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	cl.http.Timeout = bulkTimeout
	return cl.do(ctx, method, path, body, out)
}
