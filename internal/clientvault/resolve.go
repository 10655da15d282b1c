package clientvault

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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/valueref"
)

// Discover reads the RFC 9728 metadata of the MCP URL mcpURL and returns
// its client_vault_endpoint. The endpoint must have the origin of mcpURL,
// over https — or http on a loopback host, where phc's daemon listens.
// A 200 answer without the field means the server has no local vaults
// (or has them off).
func Discover(ctx context.Context, hc *http.Client, mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the server URL %q is not an absolute URL", mcpURL)
	}
	if err := secureOrigin(u); err != nil {
		return "", err
	}
	meta := *u
	meta.Path = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	meta.RawQuery, meta.Fragment = "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, meta.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := noRedirects(hc).Do(req)
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("discovery: the server answered %d", resp.StatusCode)
	}
	var m struct {
		Endpoint string `json:"client_vault_endpoint"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return "", errors.New("discovery: the metadata is not JSON")
	}
	if m.Endpoint == "" {
		return "", errors.New("the server does not offer local vaults (no client_vault_endpoint: is local_vaults on?)")
	}
	e, err := url.Parse(m.Endpoint)
	if err != nil || !strings.EqualFold(e.Scheme, u.Scheme) || !strings.EqualFold(e.Host, u.Host) {
		return "", errors.New("discovery: client_vault_endpoint is not on the origin of the server URL; refused")
	}
	return m.Endpoint, nil
}

// secureOrigin refuses an origin K may not be sent to: anything but https,
// or http on a loopback host.
func secureOrigin(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("the server URL must be https (or http on a loopback host): %s", u.Redacted())
}

// Origin is the origin (scheme://host:port) of the URL s, lower-cased.
func Origin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

func noRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// Ref is one key to resolve and when the vault first saw it.
type Ref struct {
	Key    string    `json:"key"`
	SeenAt time.Time `json:"seen_at"`
}

// Refusal is the server's one error for a resolve: its code (bad_request,
// unknown_key, pending, clock_skew, unknown_ref, expired, too_large,
// too_many_refs, rate_limited, disabled, or "refused" for any answer
// outside the protocol) and the key it names, if any. It never holds K or
// a value.
type Refusal struct {
	Status      int
	Code        string
	Key         string
	ActivatesAt string
	ServerTime  string
	RetryAfter  string
}

func (r *Refusal) Error() string {
	msg := fmt.Sprintf("%s (%d)", r.Code, r.Status)
	if r.Key != "" {
		msg = "reference " + r.Key + ": " + msg
	}
	switch {
	case r.Code == "pending":
		msg += ": the owner has not activated this vault key yet (phc vault-keys activate)"
	case r.ServerTime != "":
		msg += ": server time " + r.ServerTime
	case r.RetryAfter != "":
		msg += ": retry after " + r.RetryAfter + " s"
	}
	return msg
}

// Resolve asks endpoint for the values of refs with K. The answer is every
// value or an error: a *Refusal for the server's refusal, or for any
// answer that is not a 200 with one string for each key.
func Resolve(ctx context.Context, hc *http.Client, endpoint string, k []byte, now time.Time, refs []Ref) (map[string]string, error) {
	type wireRef struct {
		Key    string `json:"key"`
		SeenAt string `json:"seen_at"`
	}
	body := struct {
		Now  string    `json:"now"`
		Refs []wireRef `json:"refs"`
	}{Now: now.UTC().Format(time.RFC3339), Refs: []wireRef{}}
	for _, r := range refs {
		body.Refs = append(body.Refs, wireRef{r.Key, r.SeenAt.UTC().Format(time.RFC3339)})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+Bearer(k))
	req.Header.Set("Content-Type", "application/json")
	resp, err := noRedirects(hc).Do(req)
	if err != nil {
		// The transport's error names the URL, never the header.
		return nil, fmt.Errorf("resolve: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string  `json:"error"`
			Key         string  `json:"key"`
			ActivatesAt *string `json:"activates_at"`
			ServerTime  string  `json:"server_time"`
		}
		ref := &Refusal{Status: resp.StatusCode, Code: "refused", RetryAfter: resp.Header.Get("Retry-After")}
		_ = json.Unmarshal(data, &e) // a body that is not JSON is a refusal all the same
		if valueref.ValidKey(e.Key) {
			ref.Key = e.Key
		}
		if isCode(e.Error) {
			ref.Code = e.Error
		}
		if _, err := time.Parse(time.RFC3339, e.ServerTime); err == nil {
			ref.ServerTime = e.ServerTime
		}
		if e.ActivatesAt != nil {
			if _, err := time.Parse(time.RFC3339, *e.ActivatesAt); err == nil {
				ref.ActivatesAt = *e.ActivatesAt
			}
		}
		if _, err := strconv.Atoi(ref.RetryAfter); err != nil {
			ref.RetryAfter = ""
		}
		return nil, ref
	}
	var ok struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	if err := json.Unmarshal(data, &ok); err != nil || ok.Values == nil {
		return nil, &Refusal{Status: resp.StatusCode, Code: "refused"}
	}
	out := make(map[string]string, len(refs))
	for _, r := range refs {
		v, found := ok.Values[r.Key]
		var s string
		if !found || json.Unmarshal(v, &s) != nil {
			return nil, &Refusal{Status: resp.StatusCode, Code: "refused", Key: r.Key}
		}
		out[r.Key] = s
	}
	return out, nil
}

// isCode reports whether c is a code of the protocol's table.
func isCode(c string) bool {
	switch c {
	case "bad_request", "unknown_key", "pending", "clock_skew", "unknown_ref", "expired",
		"too_large", "too_many_refs", "rate_limited", "disabled":
		return true
	}
	return false
}

// Keys returns the keys of every reference in the strings of the JSON
// value v, sorted, each once.
func Keys(v any) []string {
	seen := map[string]bool{}
	walk(v, func(s string) string {
		for _, k := range valueref.Keys(s) {
			seen[k] = true
		}
		return s
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Replace returns v with every reference in its strings replaced by the
// value of its key. A reference that shows a display the value does not
// match names another value than the one the key now resolves to; it is
// refused as expired (bad names the key), and nothing is replaced.
func Replace(v any, values map[string]string) (out any, bad string) {
	var mismatch string
	out = walk(v, func(s string) string {
		return valueref.Pattern.ReplaceAllStringFunc(s, func(ref string) string {
			m := valueref.Pattern.FindStringSubmatch(ref)
			val, ok := values[m[1]]
			if !ok {
				mismatch = m[1]
				return ref
			}
			if d := valueref.Display(ref); d != "" && valueref.Mask(val) != d && mismatch == "" {
				mismatch = m[1]
			}
			return val
		})
	})
	if mismatch != "" {
		return v, mismatch
	}
	return out, ""
}

// walk returns a copy of the JSON value v with fn applied to every string
// in it (object keys stay).
func walk(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walk(e, fn)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walk(e, fn)
		}
		return out
	}
	return v
}
