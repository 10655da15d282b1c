package oidctoken

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The whole verification (discovery, JWKS, every refused token) is tested
// with an issuer served over HTTP in internal/cli/oidc_test.go, and the
// bounds on fetches in internal/httpapi/exchange_limits_test.go.

func TestCheckIssuerURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://accounts.example.com", true},
		{"https://accounts.example.com/tenant/v2.0", true},
		{"http://127.0.0.1:8080", true},
		{"http://localhost:9000/realms/x", true},
		{"http://[::1]:8080", true},
		{"http://accounts.example.com", false},
		{"https://user:pw@accounts.example.com", false},
		{"https://accounts.example.com/?x=1", false},
		{"https://accounts.example.com/#f", false},
		{"https://accounts.example.com#", false},
		{"https://accounts.example.com?", false},
		{"ftp://accounts.example.com", false},
		{"accounts.example.com", false},
		{"", false},
	} {
		if err := CheckIssuerURL(c.url); (err == nil) != c.ok {
			t.Errorf("CheckIssuerURL(%q) = %v; want ok=%v", c.url, err, c.ok)
		}
	}
}

func TestVerifyRefusesAnUntrustableIssuerWithoutFetching(t *testing.T) {
	v := New(nil, nil)
	if _, err := v.Verify(context.Background(), "http://accounts.example.com", "aud", "x.y.z"); !errors.Is(err, ErrUntrustedURL) {
		t.Fatalf("Verify over plain http to a remote host = %v; want ErrUntrustedURL", err)
	}
}

// TestKeyFetcher: an issuer's key set is fetched at most once per
// KeyRefetchInterval; in between, the last answer, or failure, is given
// again. Served over real HTTP.
func TestKeyFetcher(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		advance time.Duration // between the two gets
		hits    int64         // requests the server gets
		ok      bool          // whether both gets succeed
	}{
		{"again at once: the last answer", 200, `{"keys":[]}`, 0, 1, true},
		{"again within the interval: the last answer", 200, `{"keys":[]}`, KeyRefetchInterval - time.Second, 1, true},
		{"again after the interval: fetched", 200, `{"keys":[]}`, KeyRefetchInterval, 2, true},
		{"a failure, again within the interval: the same failure", 503, "down", time.Second, 1, false},
		{"a failure, again after the interval: fetched", 503, "down", KeyRefetchInterval, 2, false},
		{"too large", 200, strings.Repeat(" ", maxKeySet+1), 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			client := &http.Client{Transport: &keyFetcher{client: srv.Client(), now: func() time.Time { return now }}}
			for i := range 2 {
				if i == 1 {
					now = now.Add(tt.advance)
				}
				resp, err := client.Get(srv.URL + "/jwks")
				if err != nil {
					if tt.ok {
						t.Fatalf("get %d = %v; want the key set", i+1, err)
					}
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !tt.ok || resp.StatusCode != 200 || string(body) != tt.body {
					t.Fatalf("get %d = %d %q; want ok=%v", i+1, resp.StatusCode, body, tt.ok)
				}
			}
			if got := hits.Load(); got != tt.hits {
				t.Errorf("the server got %d requests; want %d", got, tt.hits)
			}
		})
	}
}
