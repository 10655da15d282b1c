package webui_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestConsoleSecurity checks the console's defences over a real socket
// with a plain HTTP client: the headers every page carries, the one-time
// sign-in link, the CSRF token, the local API's Origin and Host checks,
// and that a lock ends the session.
func TestConsoleSecurity(t *testing.T) {
	c := startConsole(t)

	t.Run("signed out", func(t *testing.T) {
		c := c.with(t)
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		fake := "/ui/s/" + strings.Repeat("A", 43)
		status, _, h := get(t, cl, c.base+fake+"/review")
		if status != http.StatusSeeOther || h.Get("Location") != "/ui/signin" {
			t.Errorf("GET %s/review signed out = %d to %q; want 303 to /ui/signin", fake, status, h.Get("Location"))
		}
		status, _ = post(t, cl, c.base+fake+"/lock", url.Values{"csrf": {"x"}}, nil)
		if status != http.StatusUnauthorized {
			t.Errorf("POST %s/lock signed out = %d; want 401", fake, status)
		}
		status, page, _ := get(t, cl, c.base+"/ui")
		if status != http.StatusOK || !strings.Contains(page, "Sign in") {
			t.Errorf("GET /ui = %d; want 200 and the sign-in page", status)
		}
	})

	t.Run("session path", func(t *testing.T) {
		// A session's path is shown only to its browser: the sign-in page
		// never redirects, and never names it, whatever cookies arrive.
		c := c.with(t)
		cl, ui := c.signedIn()
		path := strings.TrimPrefix(ui, c.base)
		for _, p := range []string{"/ui", "/ui/signin"} {
			req, _ := http.NewRequest("GET", c.base+p, nil)
			for _, ck := range cl.Jar.Cookies(mustURL(t, ui+"/review")) {
				req.AddCookie(ck)
			}
			req.AddCookie(&http.Cookie{Name: "phc_console", Value: "planted"})
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || strings.Contains(string(body), path) || strings.Contains(resp.Header.Get("Location"), path) {
				t.Errorf("GET %s with the session's cookie = %d; want 200, the sign-in page, without the session's path", p, resp.StatusCode)
			}
		}
		// Planted cookies before the session's own do not hide it, and
		// alone they sign nobody in.
		req, _ := http.NewRequest("GET", ui+"/review", nil)
		req.AddCookie(&http.Cookie{Name: "phc_console", Value: "planted-1"})
		req.AddCookie(&http.Cookie{Name: "phc_console", Value: "planted-2"})
		for _, ck := range cl.Jar.Cookies(mustURL(t, ui+"/review")) {
			req.AddCookie(ck)
		}
		plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the session's cookie after two planted ones = %d; want 200", resp.StatusCode)
		}
		req, _ = http.NewRequest("GET", ui+"/review", nil)
		req.AddCookie(&http.Cookie{Name: "phc_console", Value: "planted-1"})
		resp, err = plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin" {
			t.Errorf("a planted cookie alone = %d to %q; want 303 to /ui/signin", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("headers", func(t *testing.T) {
		c := c.with(t)
		cl, ui := c.signedIn()
		status, page, h := get(t, cl, ui+"/review")
		if status != 200 {
			t.Fatalf("GET /ui/review = %d", status)
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'none'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Content-Security-Policy = %q; want %s in it", csp, want)
			}
		}
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-store"} {
			if got := h.Get(k); got != want {
				t.Errorf("%s = %q; want %q", k, got, want)
			}
		}
		if strings.Contains(page, "<script") || strings.Contains(page, "style=") {
			t.Errorf("the page has a script or an inline style:\n%s", page)
		}
	})

	t.Run("cookie", func(t *testing.T) {
		c := c.with(t)
		var link struct {
			Path string `json:"path"`
		}
		c.must(201, "POST", "/ui/link", c.owner(), nil, &link)
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := cl.Get(c.base + link.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var found bool
		for _, ck := range resp.Cookies() {
			if ck.Name != "phc_console" {
				continue
			}
			found = true
			base, _ := strings.CutSuffix(resp.Header.Get("Location"), "/review")
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || !sessionPath.MatchString(ck.Path) || ck.Path != base {
				t.Errorf("session cookie = %+v; want HttpOnly, SameSite=Strict, Path=the session's own path %q", ck, base)
			}
			if strings.HasPrefix(ck.Value, "ctx_") || ck.Value == c.owner() {
				t.Error("the session cookie is an API token")
			}
		}
		if !found {
			t.Fatal("no session cookie after the sign-in link")
		}
		// The link works once.
		resp, err = cl.Get(c.base + link.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the sign-in link used twice = %d; want 401", resp.StatusCode)
		}
		// Only the owner's session mints one.
		status, _ := c.do("POST", "/ui/link", "", nil, nil)
		if status != http.StatusUnauthorized {
			t.Errorf("POST /ui/link without a token = %d; want 401", status)
		}
		tok := c.app("linker", "*", "read")
		status, _ = c.do("POST", "/ui/link", tok, nil, nil)
		if status != http.StatusForbidden {
			t.Errorf("POST /ui/link with a service token = %d; want 403", status)
		}
	})

	t.Run("csrf", func(t *testing.T) {
		c := c.with(t)
		cl, ui := c.signedIn()
		_, page, _ := get(t, cl, ui+"/personas")
		token := csrfOf(t, page)
		form := url.Values{"id": {"hobby"}, "name": {"Hobby"}}
		for _, bad := range []string{"", "wrong", token + "x"} {
			form.Set("csrf", bad)
			status, body := post(t, cl, ui+"/personas", form, nil)
			if status != http.StatusBadRequest || !strings.Contains(body, "CSRF") {
				t.Errorf("POST /ui/personas with csrf %q = %d; want 400 naming the CSRF token", bad, status)
			}
		}
		var personas struct {
			Personas []struct {
				ID string `json:"id"`
			} `json:"personas"`
		}
		c.must(200, "GET", "/phc/v1/personas", c.owner(), nil, &personas)
		if len(personas.Personas) != 0 {
			t.Fatalf("personas after refused posts = %v; want none", personas)
		}
		form.Set("csrf", token)
		if status, body := post(t, cl, ui+"/personas", form, nil); status != http.StatusSeeOther {
			t.Fatalf("POST /ui/personas with the token = %d %s; want 303", status, body)
		}
		// Another session's token does not do.
		other, otherUI := c.signedIn()
		form.Set("id", "other")
		if status, _ := post(t, other, otherUI+"/personas", form, nil); status != http.StatusBadRequest {
			t.Errorf("POST with another session's CSRF token = %d; want 400", status)
		}

		// Narrowing a grant is a state change like any other.
		c.app("csrf-app", "*", "read")
		grant := c.grant("csrf-app", "assist", "read", map[string]any{"keys": []string{"work.*"}})
		narrow := url.Values{"operations": {"read"}, "keys": {"work.title"}, "had_keys": {"1"}}
		for _, bad := range []string{"", "wrong", token + "x"} {
			narrow.Set("csrf", bad)
			if status, body := post(t, cl, ui+"/grants/"+grant+"/narrow", narrow, nil); status != http.StatusBadRequest || !strings.Contains(body, "CSRF") {
				t.Errorf("POST /ui/grants/…/narrow with csrf %q = %d; want 400 naming the CSRF token", bad, status)
			}
		}
		keys := func() []string {
			var gs struct {
				Grants []struct {
					ID        string `json:"id"`
					Selectors struct {
						Keys []string `json:"keys"`
					} `json:"selectors"`
				} `json:"grants"`
			}
			c.must(200, "GET", "/phc/v1/grants", c.owner(), nil, &gs)
			for _, g := range gs.Grants {
				if g.ID == grant {
					return g.Selectors.Keys
				}
			}
			return nil
		}
		if got := keys(); len(got) != 1 || got[0] != "work.*" {
			t.Fatalf("the grant's keys after refused narrowings = %v; want [work.*]", got)
		}
		narrow.Set("csrf", token)
		if status, body := post(t, cl, ui+"/grants/"+grant+"/narrow", narrow, nil); status != http.StatusSeeOther {
			t.Fatalf("POST /ui/grants/…/narrow with the token = %d %s; want 303", status, body)
		}
		if got := keys(); len(got) != 1 || got[0] != "work.title" {
			t.Errorf("the grant's keys after narrowing = %v; want [work.title]", got)
		}
	})

	t.Run("origin and host", func(t *testing.T) {
		c := c.with(t)
		cl, ui := c.signedIn()
		_, page, _ := get(t, cl, ui+"/personas")
		form := url.Values{"csrf": {csrfOf(t, page)}, "id": {"x1"}, "name": {"X"}}
		for name, h := range map[string]map[string]string{
			"foreign origin":     {"Origin": "http://evil.example"},
			"other local port":   {"Origin": "http://127.0.0.1:1"},
			"cross-site fetch":   {"Sec-Fetch-Site": "cross-site"},
			"same-site elsewhen": {"Sec-Fetch-Site": "same-site"},
		} {
			if status, _ := post(t, cl, ui+"/personas", form, h); status != http.StatusBadRequest {
				t.Errorf("%s: POST = %d; want 400", name, status)
			}
		}
		req, _ := http.NewRequest("GET", ui+"/review", nil)
		req.Host = "attacker.example"
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET with a rebound Host = %d; want 400", resp.StatusCode)
		}
		var personas struct {
			Personas []struct {
				ID string `json:"id"`
			} `json:"personas"`
		}
		c.must(200, "GET", "/phc/v1/personas", c.owner(), nil, &personas)
		for _, p := range personas.Personas {
			if p.ID == "x1" {
				t.Error("a refused post created a persona")
			}
		}
	})

	t.Run("lock ends sessions", func(t *testing.T) {
		c := c.with(t)
		a, aUI := c.signedIn()
		b, bUI := c.signedIn()
		_, page, _ := get(t, a, aUI+"/review")
		if status, _ := post(t, a, aUI+"/lock", url.Values{"csrf": {csrfOf(t, page)}}, nil); status != http.StatusSeeOther {
			t.Fatalf("POST /ui/lock = %d; want 303", status)
		}
		if !c.core.Svc.Locked() {
			t.Fatal("the vault is not locked after the console's lock")
		}
		for i, cl := range []*http.Client{a, b} {
			status, _, h := get(t, cl, []string{aUI, bUI}[i]+"/review")
			if status != http.StatusSeeOther || h.Get("Location") != "/ui/signin" {
				t.Errorf("session %d after lock: GET /ui/review = %d to %q; want 303 to /ui/signin", i, status, h.Get("Location"))
			}
		}
		// Sign in again with the password and Secret Key.
		status, page, _ := get(t, a, c.base+"/ui/signin")
		if status != 200 || !strings.Contains(page, "Secret Key") {
			t.Fatalf("GET /ui/signin = %d", status)
		}
		form := url.Values{"csrf": {csrfOf(t, page)}, "password": {"wrong password"}, "secret_key": {c.sk}}
		if status, body := post(t, a, c.base+"/ui/signin", form, nil); status != http.StatusUnauthorized || !strings.Contains(body, "wrong password or Secret Key") {
			t.Errorf("sign-in with a wrong password = %d; want 401 saying so", status)
		}
		_, page, _ = get(t, a, c.base+"/ui/signin")
		form = url.Values{"csrf": {csrfOf(t, page)}, "password": {testPassword}, "secret_key": {c.sk}}
		req, _ := http.NewRequest("POST", c.base+"/ui/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := a.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		newUI, ok := strings.CutSuffix(resp.Header.Get("Location"), "/review")
		if resp.StatusCode != http.StatusSeeOther || !ok || !sessionPath.MatchString(newUI) {
			t.Fatalf("sign-in = %d to %q; want 303 to /ui/s/…/review", resp.StatusCode, resp.Header.Get("Location"))
		}
		if newUI == strings.TrimPrefix(aUI, c.base) {
			t.Error("signing in again reuses the old session's path")
		}
		if status, _, _ := get(t, a, c.base+newUI+"/review"); status != 200 {
			t.Errorf("GET …/review after signing in = %d; want 200", status)
		}
		if status, _, _ := get(t, b, bUI+"/review"); status != http.StatusSeeOther {
			t.Errorf("the other session after a new unlock: GET …/review = %d; want 303", status)
		}
	})
}

// TestConsoleSessionIdle: a console session unused for fifteen minutes is
// over; used, it goes on.
func TestConsoleSessionIdle(t *testing.T) {
	clock := &testClock{now: time.Now().UTC()}
	c := startConsoleAt(t, clock)
	cl, ui := c.signedIn()
	for range 3 { // each use keeps it alive
		clock.advance(10 * time.Minute)
		if status, _, _ := get(t, cl, ui+"/review"); status != 200 {
			t.Fatalf("GET /ui/review after 10 minutes = %d; want 200", status)
		}
	}
	clock.advance(16 * time.Minute)
	status, _, h := get(t, cl, ui+"/review")
	if status != http.StatusSeeOther || h.Get("Location") != "/ui/signin" {
		t.Errorf("GET /ui/review after 16 idle minutes = %d to %q; want 303 to /ui/signin", status, h.Get("Location"))
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
