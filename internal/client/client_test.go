package client

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A daemon that takes a request and does not answer in time is busy, not
// gone: the error says so; a port nobody listens on is "cannot reach".
func TestClientBusyOrUnreachable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // answers only once the test is done
	}))
	t.Cleanup(busy.Close)
	t.Cleanup(func() { close(release) })
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	tests := []struct {
		name, base, want, not string
	}{
		{"busy", busy.URL, "did not answer within", "is phc serve running"},
		{"gone", gone.URL, "is phc serve running", "did not answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A short client timeout stands for the CLI's minute; the busy
			// server never answers, so the outcome does not depend on it.
			cl := New(tc.base)
			cl.HTTP.Timeout = 50 * time.Millisecond
			_, err := cl.Check(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Errorf("error = %v; want one saying %q", err, tc.want)
			}
		})
	}
}
