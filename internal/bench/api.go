package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode"

	"github.com/phc-project/phc/internal/client"
)

// api sends the setup requests (seeding, grants, checks) over one shared
// keep-alive transport.
type api struct {
	base string
	http *http.Client
}

func newAPI(base string) *api {
	return &api{base: base, http: &http.Client{
		// A bulk confirmation of a thousand proposals is one request.
		Timeout:   5 * time.Minute,
		Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true, IdleConnTimeout: time.Minute},
	}}
}

func (a *api) close() { a.http.CloseIdleConnections() }

// client is a typed client of the daemon that sends token (none if
// empty) over a's connections: the setup requests go through it, the
// measured requests through send.
func (a *api) client(token string) *client.Client {
	c := client.New(a.base)
	c.HTTP = a.http
	return c.WithToken(token)
}

// statusError is an answer with another status than the one wanted. Its
// text holds the method, path, status and the start of the answer, never a
// request's credentials or body.
type statusError struct {
	method, path string
	status, want int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s = %d %s; want %d", e.method, e.path, e.status, e.body, e.want)
}

// call sends one request: body is nil, a []byte sent as is, or a value
// encoded as JSON; the answer must have status want, and is decoded into
// out unless out is nil. The token goes into the Authorization header and
// never into an error.
func (a *api) call(ctx context.Context, method, path, token string, body any, want int, out any) error {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return err
		}
	}
	status, resp, err := a.send(ctx, method, path, token, raw)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status != want {
		return &statusError{method: method, path: path, status: status, want: want, body: snippet(resp, 300)}
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
		}
	}
	return nil
}

func (a *api) send(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// snippet shows at most n bytes of an answer, with anything unprintable
// escaped.
func snippet(b []byte, n int) string {
	cut := len(b) > n
	if cut {
		b = b[:n]
	}
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if unicode.IsPrint(r) {
			out = append(out, string(r)...)
		} else {
			out = strconv.AppendQuoteRuneToASCII(out, r)
		}
	}
	if cut {
		out = append(out, "…"...)
	}
	return string(out)
}
