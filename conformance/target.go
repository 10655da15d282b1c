package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request is one request of the suite, as a face of a custodian receives
// it: an HTTP method and request target (path and query, below the base
// URL), header fields, an optional Host override and a body.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Host   string // "" for the target's own host
	Body   []byte // nil for no body
}

// Response is a face's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Target is a face of a custodian that the suite can talk to: the HTTP API
// of a running daemon ([HTTPTarget]), or any other face that can carry the
// same requests (an MCP face translates them to tool calls). Do returns an
// error only when no answer was received; an answer with any status is a
// Response. A face that cannot express a request returns an error wrapping
// [ErrUnsupported], and the case is reported as skipped with that reason.
type Target interface {
	Do(ctx context.Context, r *Request) (*Response, error)
	// String names the target in reports (a URL, "in-process", …).
	String() string
}

// ErrUnsupported is returned (wrapped) by a Target for a request its face
// cannot carry.
var ErrUnsupported = errors.New("request not supported by this target")

// maxAnswer bounds the bytes read of one answer.
const maxAnswer = 16 << 20

// HTTPTarget sends the suite's requests over HTTP to a base URL.
type HTTPTarget struct {
	base   *url.URL
	client *http.Client
}

// NewHTTPTarget returns a Target for the custodian at baseURL (scheme,
// host and port; a path prefix is allowed). client may be nil.
func NewHTTPTarget(baseURL string, client *http.Client) (*HTTPTarget, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("target URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("target URL must be http(s)://host[:port][/prefix]")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	// Redirects are answers to assert, not to follow.
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &HTTPTarget{base: u, client: &c}, nil
}

func (t *HTTPTarget) String() string { return t.base.String() }

// Do sends r. The request target is written as given: no path cleaning and
// no re-escaping, so that malformed paths reach the server.
func (t *HTTPTarget) Do(ctx context.Context, r *Request) (*Response, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	p, q, hasQuery := strings.Cut(r.Path, "?")
	p = t.base.Path + p
	req, err := http.NewRequestWithContext(ctx, r.Method, t.base.Scheme+"://"+t.base.Host+"/", body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(p, "//") {
		// An opaque "//…" would be sent in absolute form; the parsed
		// path keeps its doubled slash anyway.
		u, err := url.Parse(t.base.Scheme + "://" + t.base.Host + p)
		if err != nil {
			return nil, fmt.Errorf("%w: path %q", ErrUnsupported, p)
		}
		req.URL = u
	} else {
		// Opaque sends the path verbatim: no cleaning, no re-escaping.
		req.URL.Opaque = p
		req.URL.Path, req.URL.RawPath = "", ""
	}
	if hasQuery {
		req.URL.RawQuery = q
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if r.Host != "" {
		req.Host = r.Host
	}
	if r.Body != nil {
		req.ContentLength = int64(len(r.Body))
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}
