package cli

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var loginLink = regexp.MustCompile(`http://127\.0\.0\.1:\d+/ui/login\?code=[A-Za-z0-9_-]{43}`)

// consolePage is where a spent link sends the browser: the review page
// under the new console session's secret path.
var consolePage = regexp.MustCompile(`^/ui/s/[A-Za-z0-9_-]{43}/review$`)

// TestUI runs phc ui against a real daemon: it opens (or prints) a
// one-time sign-in link bound to the CLI's session, which the console
// accepts once.
func TestUI(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	run := func(open func(string) error, args ...string) string {
		t.Helper()
		env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
		env.OpenBrowser = open
		if code := Run(context.Background(), env, append([]string{"ui"}, args...)); code != 0 {
			t.Fatalf("phc ui %v = exit %d: %s", args, code, errb)
		}
		return out.String()
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(link string) (int, string) {
		t.Helper()
		resp, err := noRedirect.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}

	// Opened in the browser: the link goes to the opener, not the terminal.
	var opened string
	out := run(func(u string) error { opened = u; return nil })
	if !loginLink.MatchString(opened) || loginLink.MatchString(out) {
		t.Fatalf("phc ui opened %q and printed %q; want the link opened, not printed", opened, out)
	}
	if code, to := status(opened); code != http.StatusSeeOther || !consolePage.MatchString(to) {
		t.Errorf("GET the link = %d to %q; want 303 to /ui/s/…/review (the session's own path)", code, to)
	}
	if code, _ := status(opened); code != http.StatusUnauthorized {
		t.Errorf("GET the link again = %d; want 401 (it works once)", code)
	}

	// Printed: with --print, or when no browser opens.
	for _, tc := range []struct {
		name string
		open func(string) error
		args []string
	}{
		{"print", func(string) error { t.Error("--print opened a browser"); return nil }, []string{"--print"}},
		{"no opener", func(string) error { return errors.New("no browser") }, nil},
	} {
		out := run(tc.open, tc.args...)
		link := loginLink.FindString(out)
		if link == "" {
			t.Fatalf("%s: phc ui printed %q; want a sign-in link", tc.name, out)
		}
		if code, _ := status(link); code != http.StatusSeeOther {
			t.Errorf("%s: GET the printed link = %d; want 303", tc.name, code)
		}
	}

	// Locked: no session to bind a link to; phc ui says where to sign in.
	h.phcOK("lock")
	out = run(func(string) error { t.Error("opened a browser with no session"); return nil })
	if !strings.Contains(out, "/ui and sign in") || loginLink.MatchString(out) {
		t.Errorf("phc ui on a locked vault printed %q", out)
	}
}
