//go:build slow

package webui_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// otherServer is a second HTTP server on another loopback port, as any
// local program may run: browsers send it the cookies of 127.0.0.1
// whatever their port, and let it set cookies that they then send to the
// daemon. It keeps every cookie it receives.
type otherServer struct {
	base string
	mu   sync.Mutex
	got  []*http.Cookie
	seen []string // the paths requested
}

// plantPaths are the paths for which the second server sets its own
// console cookies: the console's, more specific ones (which a browser
// sends first) and less specific ones.
var plantPaths = []string{"/", "/ui", "/ui/", "/ui/review", "/ui/claims", "/ui/personas", "/ui/signin", "/ui/login", "/ui/s", "/ui/s/"}

// guessedPaths are console paths the second server's pages load from
// their own origin, to collect what the browser sends there.
var guessedPaths = []string{"/ui", "/ui/x", "/ui/review", "/ui/signin", "/ui/login", "/ui/assets/style.css", "/ui/s", "/ui/s/x/review"}

func startOtherServer(t *testing.T) *otherServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &otherServer{base: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.got = append(o.got, r.Cookies()...)
		o.seen = append(o.seen, r.URL.Path)
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<!doctype html><title>other</title><h1 id="other">A page on another port</h1>`)
			for _, p := range guessedPaths {
				fmt.Fprintf(w, `<img src="%s" alt="">`, p)
			}
		case "/plant":
			for i, p := range plantPaths {
				http.SetCookie(w, &http.Cookie{Name: "phc_console", Value: fmt.Sprintf("planted-%d", i), Path: p, SameSite: http.SameSiteLaxMode})
				http.SetCookie(w, &http.Cookie{Name: "phc_console_signin", Value: fmt.Sprintf("planted-signin-%d", i), Path: p, SameSite: http.SameSiteLaxMode})
			}
			io.WriteString(w, `<!doctype html><title>other</title><h1 id="other">Planted</h1>`)
		default:
			io.WriteString(w, `<!doctype html><title>other</title><h1 id="other">Another page on another port</h1>`)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return o
}

func (o *otherServer) received() ([]*http.Cookie, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*http.Cookie(nil), o.got...), append([]string(nil), o.seen...)
}

// signedInWith reports whether the daemon serves a signed-in console page
// at u to a client with no browser that sends only cookie.
func signedInWith(t *testing.T, u string, cookie *http.Cookie) bool {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.Contains(string(raw), `id="lock"`)
}

// consoleBase is the address of the console session's pages the browser
// shows at loc: loc without its page.
func consoleBase(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexByte(u.Path, '/')
	return u.Scheme + "://" + u.Host + u.Path[:i]
}

// TestConsoleOtherPort is the takeover from another local port: after the
// owner signs in to the console in Chromium, the browser visits pages of a
// second server on another loopback port, which collects every cookie it
// is sent and plants its own. Nothing it received signs anyone in when
// replayed to the daemon, and its planted cookies neither sign anyone in
// nor keep the console from loading its pages, nor from signing in again.
func TestConsoleOtherPort(t *testing.T) {
	var dialogs atomic.Int32
	b := newBrowser(t, &dialogs)
	c := startConsole(t)
	other := startOtherServer(t)

	// The owner signs in with the password and Secret Key.
	signIn := func(t *testing.T, b *browser) string {
		b.do(chromedp.Navigate(c.base + "/ui"))
		b.do(chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("secret_key"), c.sk))
		b.submit("#unlock", "#lock")
		if got := b.text("h1"); !strings.Contains(got, "Review queue") {
			t.Fatalf("after signing in the page says %q", got)
		}
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return consoleBase(t, loc)
	}
	c.must(200, "POST", "/context/lock", c.owner(), nil, nil)
	ui := signIn(t, b)
	// Many visits, as the owner goes on working.
	for _, p := range []string{"/claims", "/personas", "/review"} {
		b.do(chromedp.Navigate(ui + p))
	}

	t.Run("nothing the other port receives signs in", func(t *testing.T) {
		b := b.with(t)
		b.do(chromedp.Navigate(other.base + "/"))
		b.text("#other")
		for _, p := range []string{"/ui/review", "/ui/x", "/ui/s/guess/review", "/ui/signin"} {
			b.do(chromedp.Navigate(other.base + p))
			b.text("#other")
		}
		cookies, seen := other.received()
		for _, p := range guessedPaths {
			if !strings.Contains(strings.Join(seen, " ")+" ", p+" ") {
				t.Errorf("the other server was never asked for %s (seen %v): the test proves nothing", p, seen)
			}
		}
		for _, ck := range cookies {
			// Replayed with no browser, to the daemon, under every name and
			// at every console path, the session's own included (which the
			// other server does not know; trying it is the stronger test).
			for _, name := range []string{ck.Name, "phc_console"} {
				for _, u := range []string{c.base + "/ui/review", c.base + "/ui/claims", ui + "/review", ui + "/claims"} {
					if signedInWith(t, u, &http.Cookie{Name: name, Value: ck.Value}) {
						t.Errorf("the cookie %s the other port received, replayed as %s, signs in at %s", ck.Name, name, u)
					}
				}
			}
		}
		t.Logf("the other port received %d cookies on %d requests", len(cookies), len(seen))
	})

	t.Run("planted cookies neither sign in nor trap the console", func(t *testing.T) {
		b := b.with(t)
		b.do(chromedp.Navigate(other.base + "/plant"))
		b.text("#other")
		jar, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{c.base + "/ui/review", c.base + "/ui/signin", ui + "/review"}})
		if err != nil {
			t.Fatal(err)
		}
		planted := 0
		for _, ck := range jar.Cookies {
			if strings.HasPrefix(ck.Value, "planted-") {
				planted++
			}
		}
		if planted < 4 {
			t.Fatalf("the browser sends the daemon %d planted cookies; want several (the test proves nothing)", planted)
		}

		// The console still loads its pages, with no redirect loop, and
		// its forms still work.
		for _, p := range []string{"/review", "/claims", "/personas", "/grants", "/requests"} {
			b.do(chromedp.Navigate(ui + p))
			if at := eval[string](b, `location.href`); !strings.HasPrefix(at, ui+p) || !eval[bool](b, `document.getElementById("lock") !== null`) {
				t.Fatalf("with planted cookies, %s ended at %s, signed out", p, at)
			}
		}
		b.do(chromedp.Navigate(ui + "/personas"))
		b.do(chromedp.SendKeys(chromedp.ID("pid"), "planted"), chromedp.SendKeys(chromedp.ID("pname"), "Planted"))
		if got := b.submit("#new-persona button[type=submit]", "#flash"); !strings.Contains(got, "Created persona planted") {
			t.Errorf("creating a persona with planted cookies says %q", got)
		}
		// The console's address still answers with its sign-in page.
		b.do(chromedp.Navigate(c.base + "/ui"))
		if got := b.text("h1"); !strings.Contains(got, "Sign in") {
			t.Errorf("/ui with planted cookies shows %q", got)
		}

		// Lock, and sign in again past the planted sign-in cookies.
		b.do(chromedp.Navigate(ui + "/review"))
		b.submit("#lock", "#unlock")
		again := signIn(t, b)
		if again == ui {
			t.Error("signing in again reuses the old session's path")
		}
		if signedInWith(t, ui+"/review", &http.Cookie{Name: "phc_console", Value: "planted-0"}) {
			t.Error("the old session works after the lock")
		}

		// No planted value is a session, before or after signing in.
		for i := range plantPaths {
			for _, base := range []string{ui, again, c.base + "/ui"} {
				for _, name := range []string{"phc_console", "phc_console_signin"} {
					v := fmt.Sprintf("planted-%d", i)
					if name == "phc_console_signin" {
						v = fmt.Sprintf("planted-signin-%d", i)
					}
					if signedInWith(t, base+"/review", &http.Cookie{Name: "phc_console", Value: v}) {
						t.Errorf("the planted cookie %s=%s signs in at %s", name, v, base)
					}
				}
			}
		}
	})
}
