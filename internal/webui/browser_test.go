//go:build slow

package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium driving the console.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string // screenshots
}

// chromium finds the browser, or skips the test outside CI (where .ci/run
// installs it, and a missing browser fails the test instead).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium on PATH: the console's browser tests need it (apt-get install chromium)")
	}
	t.Skip("no Chromium on PATH: skipping the console's browser tests (apt-get install chromium to run them)")
	return ""
}

// newBrowser starts headless Chromium with a fresh profile. Every dialog a
// page opens (an alert an injected script would raise) is counted and
// dismissed.
func newBrowser(t *testing.T, dialogs *atomic.Int32) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	dir := os.Getenv("PHC_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	return &browser{t: t, ctx: ctx, dir: dir}
}

// with is b for subtest t.
func (b *browser) with(t *testing.T) *browser {
	bb := *b
	bb.t = t
	return &bb
}

// do runs actions, failing the test on an error. A wait for something
// that never comes ends a little before the test binary's own deadline
// (go test -timeout), so that the failure shows the page instead of a
// panic.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx := b.ctx
	if dl, ok := b.t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/10))
		defer cancel()
	}
	if err := chromedp.Do(ctx, actions...); err != nil {
		where, _ := chromedp.Run(b.ctx, chromedp.Location())
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("html")))
		b.t.Fatalf("browser: %v\nat %s:\n%s", err, where, html)
	}
}

// text is the visible text of the first element sel matches, once visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)))
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression in the page (from the test, as
// DevTools does: the page's CSP does not apply).
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// shot writes a screenshot of the whole page to the screenshot dir.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "console-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// confirmed clicks the button sel of an irreversible action, which must
// ask first: the page it leads to says what will happen (what is part of
// that), and only its own button acts; then waits for want, as submit.
func (b *browser) confirmed(sel, what, want string) string {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(sel)))
	if got := b.text("#confirm-what"); !strings.Contains(got, what) {
		b.t.Errorf("the confirmation after %s says %q; want %q in it", sel, got, what)
	}
	return b.submit("#confirm-yes", want)
}

// sessionBase is the address of the signed-in session's pages, read from
// the page the browser shows (…/ui/s/<secret>/<page>).
func (b *browser) sessionBase() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		b.t.Fatal(err)
	}
	i := strings.Index(u.Path, "/ui/s/")
	if i < 0 {
		b.t.Fatalf("the signed-in console is at %s; want a path under /ui/s/", loc)
	}
	rest := u.Path[i+len("/ui/s/"):]
	name, _, _ := strings.Cut(rest, "/")
	return u.Scheme + "://" + u.Host + "/ui/s/" + name
}

// submit clicks the button sel and waits for the page after it to show
// want (the flash message, or an error), which the page before it must
// not show.
func (b *browser) submit(sel, want string) string {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(sel)))
	return b.text(want)
}

// propose files a proposal as app and returns its id.
func (c *console) propose(app string, doc map[string]any) string {
	c.t.Helper()
	if doc["kind"] == nil {
		doc["kind"] = "fact"
	}
	if doc["assertion"] == nil {
		doc["assertion"] = "reported"
	}
	var p struct {
		ID string `json:"proposal_id"`
	}
	c.must(201, "POST", "/phc/v1/proposals", app, doc, &p)
	return p.ID
}

// TestConsoleInBrowser drives the console in headless Chromium through
// what the owner does with it: sign in by unlocking, review, decide
// requests, grant and revoke, follow a lineage picture and a correction
// that makes a summary stale, with hostile strings shown as text and
// cross-site posts refused.
func TestConsoleInBrowser(t *testing.T) {
	var dialogs atomic.Int32
	b := newBrowser(t, &dialogs)
	c := startConsole(t)
	ui := c.base + "/ui"

	// The scene: personas, an app that contributes and one that reads.
	c.must(201, "POST", "/phc/v1/personas", c.owner(), map[string]string{"id": "work", "name": "Work"}, nil)
	c.must(201, "POST", "/phc/v1/personas", c.owner(), map[string]string{"id": "home", "name": "Home"}, nil)
	writer := c.app("notes-app", "*", "write")
	c.grant("notes-app", "notes", "contribute", map[string]any{"keys": []string{"work.*", "hobby.*", "food.*"}})
	reader := c.app("reader", "*", "read")

	t.Run("unlock", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		c.must(200, "POST", "/context/lock", c.owner(), nil, nil)
		b.do(chromedp.Navigate(ui))
		b.do(chromedp.WaitVisible(chromedp.ID("unlock")))
		b.shot("signin")
		b.do(chromedp.SendKeys(chromedp.ID("password"), "not the password"), chromedp.SendKeys(chromedp.ID("secret_key"), c.sk))
		if got := b.submit("#unlock", "#error"); !strings.Contains(got, "wrong password or Secret Key") {
			t.Errorf("sign-in with a wrong password says %q", got)
		}
		b.do(chromedp.SendKeys(chromedp.ID("password"), testPassword), chromedp.SendKeys(chromedp.ID("secret_key"), c.sk))
		b.submit("#unlock", "#lock") // the Lock button shows once signed in
		if got := b.text("h1"); !strings.Contains(got, "Review queue") {
			t.Fatalf("after unlocking the page says %q", got)
		}
		ui = b.sessionBase()
		if c.core.Svc.Locked() {
			t.Fatal("the vault is still locked after signing in")
		}
	})

	var claimID string
	t.Run("confirm into a persona", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		id := c.propose(writer, map[string]any{"key": "work.title", "value": "Staff engineer",
			"evidence": []map[string]string{{"ref": "chat://notes/42"}}, "reported": map[string]string{"app": "Notes"}})
		b.do(chromedp.Navigate(ui + "/review"))
		b.do(chromedp.WaitVisible(chromedp.CSS("#" + id)))
		if got := b.text("#" + id + " .producer"); got != "consumer:notes-app" {
			t.Errorf("the authenticated producer shows as %q", got)
		}
		if got := b.text("#" + id + " .reported"); got != "app: Notes" {
			t.Errorf("the reported app shows as %q", got)
		}
		b.shot("review")
		b.do(chromedp.Click(chromedp.CSS(`input[name=personas][value=work]`)))
		if got := b.submit("#"+id+` button[name=one]`, "#flash"); !strings.Contains(got, "Confirmed work.title") {
			t.Fatalf("after confirming the page says %q", got)
		}
		var list struct {
			Claims []struct {
				ID       string   `json:"id"`
				Key      string   `json:"key"`
				Personas []string `json:"personas"`
			} `json:"claims"`
		}
		c.must(200, "GET", "/phc/v1/claims?persona=work", c.owner(), nil, &list)
		if len(list.Claims) != 1 || list.Claims[0].Key != "work.title" {
			t.Fatalf("claims in persona work = %+v; want work.title", list.Claims)
		}
		claimID = list.Claims[0].ID

		// A second proposal for the key shows the current value and the change.
		id2 := c.propose(writer, map[string]any{"key": "work.title", "value": "Principal engineer"})
		b.do(chromedp.Navigate(ui + "/review"))
		if got := b.text("#" + id2 + " .diff"); !strings.Contains(got, "Staff engineer") || !strings.Contains(got, "Principal engineer") {
			t.Errorf("the diff shows %q", got)
		}
		c.must(200, "POST", "/phc/v1/proposals/"+id2+"/reject", c.owner(), map[string]string{}, nil)

		// Edit, then confirm.
		id3 := c.propose(writer, map[string]any{"key": "work.team", "value": "Platfrom"})
		b.do(chromedp.Navigate(ui + "/review"))
		b.do(chromedp.Click(chromedp.CSS("#"+id3+" details summary")),
			chromedp.SendKeys(chromedp.CSS("#"+id3+" textarea"), `"Platform"`))
		if got := b.submit("#"+id3+` button[name=one]`, "#flash"); !strings.Contains(got, "Confirmed work.team") {
			t.Fatalf("after editing and confirming the page says %q", got)
		}
		var team struct {
			Claims []struct {
				Value string `json:"value"`
			} `json:"claims"`
		}
		c.must(200, "GET", "/phc/v1/claims?key=work.team", c.owner(), nil, &team)
		if len(team.Claims) != 1 || team.Claims[0].Value != "Platform" {
			t.Errorf("work.team after the edit = %+v; want Platform", team.Claims)
		}
	})

	t.Run("bulk reject", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		ids := []string{
			c.propose(writer, map[string]any{"key": "hobby.chess", "value": "club level"}),
			c.propose(writer, map[string]any{"key": "hobby.climbing", "value": "bouldering"}),
			c.propose(writer, map[string]any{"key": "food.likes", "value": []string{"figs"}}),
		}
		keep := c.propose(writer, map[string]any{"key": "hobby.piano", "value": "grade 5"})
		b.do(chromedp.Navigate(ui + "/review"))
		for _, id := range ids {
			b.do(chromedp.Click(chromedp.CSS(`input[name=ids][value="` + id + `"]`)))
		}
		if got := b.submit("#reject-selected", "#flash"); !strings.Contains(got, "Rejected 3 of 3") {
			t.Fatalf("after the bulk reject the page says %q", got)
		}
		var raw struct {
			Proposals []struct {
				ID string `json:"proposal_id"`
			} `json:"proposals"`
		}
		c.must(200, "GET", "/phc/v1/review", c.owner(), nil, &raw)
		queue := raw.Proposals
		if len(queue) != 1 || queue[0].ID != keep {
			t.Errorf("the queue after the bulk reject = %+v; want only %s", queue, keep)
		}
	})

	t.Run("requests", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		var sens, crit struct {
			ID string `json:"request_id"`
		}
		c.must(202, "POST", "/context/requests", reader, map[string]any{"scope": "identity.dob", "purpose": "fill in a form", "duration": "1h"}, &sens)
		c.must(202, "POST", "/context/requests", reader, map[string]any{"scope": "identity.ssn", "purpose": "file taxes", "usage": "single"}, &crit)
		b.do(chromedp.Navigate(ui + "/requests"))
		b.do(chromedp.WaitVisible(chromedp.CSS("#" + crit.ID)))
		b.shot("requests")
		if got := b.submit("#"+sens.ID+" button.approve", "#flash"); !strings.Contains(got, "Approved the request of reader") {
			t.Fatalf("approving the sensitive request says %q", got)
		}
		// Critical data: not without the password.
		b.do(chromedp.Navigate(ui + "/requests"))
		if got := b.submit("#"+crit.ID+" button.approve", "#error"); !strings.Contains(got, "needs the owner's password") {
			t.Fatalf("approving critical data without the password says %q", got)
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		b.do(chromedp.SendKeys(chromedp.CSS("#"+crit.ID+" input[name=password]"), "wrong password"))
		if got := b.submit("#"+crit.ID+" button.approve", "#error"); !strings.Contains(got, "wrong password") {
			t.Fatalf("approving critical data with a wrong password says %q", got)
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		b.do(chromedp.SendKeys(chromedp.CSS("#"+crit.ID+" input[name=password]"), testPassword))
		if got := b.submit("#"+crit.ID+" button.approve", "#flash"); !strings.Contains(got, "Approved") {
			t.Fatalf("approving critical data with the password says %q", got)
		}
		// An app that registered itself waits for approval; another is removed.
		c.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "newcomer", "secret": "secret-of-newcomer-0123456789"}, nil)
		c.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "stranger", "secret": "secret-of-stranger-0123456789"}, nil)
		b.do(chromedp.Navigate(ui + "/requests"))
		if got := b.text("#app-newcomer"); !strings.Contains(got, "pending") {
			t.Errorf("the self-registered app shows as %q; want pending", got)
		}
		if got := b.submit("#app-newcomer button.approve-app", "#flash"); !strings.Contains(got, "Approved the app newcomer") {
			t.Fatalf("approving the app says %q", got)
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		if got := b.confirmed("#app-stranger button.remove-app", "Remove the app stranger", "#flash"); !strings.Contains(got, "Removed the app stranger") {
			t.Fatalf("removing the app says %q", got)
		}
		var apps struct {
			Consumers []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"consumers"`
		}
		c.must(200, "GET", "/phc/v1/consumers", c.owner(), nil, &apps)
		got := map[string]string{}
		for _, a := range apps.Consumers {
			got[a.Name] = a.Status
		}
		if got["newcomer"] != "approved" || got["stranger"] != "" {
			t.Errorf("apps after approving newcomer and removing stranger: %v", got)
		}

		var reqs struct {
			Requests []struct {
				ID     string `json:"request_id"`
				Status string `json:"status"`
			} `json:"requests"`
		}
		c.must(200, "GET", "/context/requests", c.owner(), nil, &reqs)
		for _, r := range reqs.Requests {
			if (r.ID == sens.ID || r.ID == crit.ID) && r.Status != "approved" {
				t.Errorf("request %s is %s; want approved", r.ID, r.Status)
			}
		}
	})

	t.Run("grant and revoke", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		canRead := func() string { return b.text("#readable-reader") }
		b.do(chromedp.Navigate(ui + "/grants"))
		if got := canRead(); strings.Contains(got, "work.title") {
			t.Fatalf("reader can read work.title before any grant: %q", got)
		}
		b.do(chromedp.SendKeys(chromedp.ID("purpose"), "assist"),
			chromedp.SetValue(chromedp.ID("recipient"), "reader"),
			chromedp.Click(chromedp.CSS(`#new-grant input[name=personas][value=work]`)))
		if got := b.submit("#create-grant", "#flash"); !strings.Contains(got, "Created grant") {
			t.Fatalf("creating the grant says %q", got)
		}
		if got := canRead(); !strings.Contains(got, "work.title") || !strings.Contains(got, "assist") {
			t.Fatalf("reader can read now: %q; want work.title for assist", got)
		}
		// It is what the read serves.
		var ctxRead struct {
			Claims []struct {
				Key string `json:"key"`
			} `json:"claims"`
		}
		c.must(200, "GET", "/phc/v1/context?purpose=assist", reader, nil, &ctxRead)
		if len(ctxRead.Claims) != 1 || ctxRead.Claims[0].Key != "work.title" {
			t.Errorf("the read serves %+v; the console says work.title", ctxRead.Claims)
		}
		b.shot("grants")

		// Narrow it: a second work claim is readable, then not once the
		// grant keeps only work.title; a wider key is refused.
		id := c.propose(writer, map[string]any{"key": "work.team", "value": "Platform"})
		c.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", c.owner(), map[string]any{"personas": []string{"work"}}, nil)
		b.do(chromedp.Navigate(ui + "/grants"))
		if got := canRead(); !strings.Contains(got, "work.title") || !strings.Contains(got, "work.team") {
			t.Fatalf("reader can read now: %q; want work.title and work.team", got)
		}
		grant := eval[string](b, `document.querySelector("#grant-list tr.grant").id`)
		narrow := func(keys string) {
			b.do(chromedp.Click(chromedp.CSS("#"+grant+" details.narrow summary")),
				chromedp.SetValue(chromedp.ID("narrow-keys-"+grant), keys))
		}
		narrow("work.title")
		if got := b.submit("#"+grant+" button.narrow", "#flash"); !strings.Contains(got, "Narrowed grant "+grant) {
			t.Fatalf("narrowing says %q", got)
		}
		if got := canRead(); !strings.Contains(got, "work.title") || strings.Contains(got, "work.team") {
			t.Errorf("reader can read now: %q; want work.title only", got)
		}
		c.must(200, "GET", "/phc/v1/context?purpose=assist", reader, nil, &ctxRead)
		if len(ctxRead.Claims) != 1 || ctxRead.Claims[0].Key != "work.title" {
			t.Errorf("after narrowing the read serves %+v; the console says work.title", ctxRead.Claims)
		}
		narrow("work.*")
		if got := b.submit("#"+grant+" button.narrow", "#error"); !strings.Contains(got, "can only be narrowed") {
			t.Errorf("widening the grant says %q; want a refusal saying what may be narrowed", got)
		}
		b.do(chromedp.Navigate(ui + "/grants"))
		if got := canRead(); strings.Contains(got, "work.team") {
			t.Errorf("after a refused widening reader can read %q", got)
		}

		b.do(chromedp.Navigate(ui + "/grants"))
		if got := b.submit("#grant-list button.revoke", "#flash"); !strings.Contains(got, "Revoked grant") {
			t.Fatalf("revoking says %q", got)
		}
		if got := canRead(); strings.Contains(got, "assist") {
			t.Errorf("reader can still read for assist after the revocation: %q", got)
		}
		c.must(200, "GET", "/phc/v1/context?purpose=assist", reader, nil, &ctxRead)
		if len(ctxRead.Claims) != 0 {
			t.Errorf("the read serves %+v after the revocation", ctxRead.Claims)
		}
	})

	t.Run("lineage", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		var sum struct {
			Summary struct {
				ID string `json:"id"`
			} `json:"summary"`
		}
		c.must(201, "POST", "/phc/v1/summaries", c.owner(), map[string]any{"value": "works as a staff engineer", "derived_from": []string{claimID + "@1"}}, &sum)
		sid := sum.Summary.ID
		b.do(chromedp.Navigate(ui + "/summaries/" + sid))
		if got := b.text("#status"); got != "current" {
			t.Fatalf("the new summary is %q", got)
		}
		// Click the parent in the picture, correct it there.
		b.do(chromedp.Click(chromedp.CSS(`#lineage a.node[data-id="` + claimID + `@1"] rect`)))
		b.do(chromedp.WaitVisible(chromedp.ID("correct-value")))
		if got := b.text("h1 .key"); got != "work.title" {
			t.Fatalf("the parent's page is about %q", got)
		}
		if n := eval[int](b, `document.querySelectorAll('#lineage a.node').length`); n != 2 {
			t.Errorf("the claim's lineage picture has %d nodes; want its version and the summary", n)
		}
		b.do(chromedp.SetValue(chromedp.ID("correct-value"), `"Principal engineer"`))
		if got := b.submit("#correct-submit", "#flash"); !strings.Contains(got, "version 2") {
			t.Fatalf("correcting says %q", got)
		}
		// The picture now shows both versions and the stale summary.
		if n := eval[int](b, `document.querySelectorAll('#lineage a.node').length`); n != 3 {
			t.Errorf("after the correction the lineage picture has %d nodes; want two versions and the summary", n)
		}
		if got := eval[string](b, `document.querySelector('#lineage a.node[data-id="`+sid+`"]').textContent`); !strings.Contains(got, "stale") {
			t.Errorf("the summary's node says %q; want stale", got)
		}
		b.shot("claim")
		b.do(chromedp.Click(chromedp.CSS(`#lineage a.node[data-id="` + sid + `"] rect`)))
		if got := b.text("#status"); got != "stale" {
			t.Fatalf("after correcting its parent the summary is %q; want stale", got)
		}
		why := b.text("#stale-why")
		if !strings.Contains(why, claimID+"@1") || !strings.Contains(why, "corrected") {
			t.Errorf("why it is stale: %q; want the parent version and corrected", why)
		}
		b.shot("summary")
	})

	t.Run("hostile strings", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		const hostile = `<img src=x onerror=alert(1)>`
		const script = `<script>alert(2)</script>`
		id := c.propose(writer, map[string]any{"key": "hobby.markup", "value": hostile + script,
			"reported": map[string]string{"app": hostile}, "evidence": []map[string]string{{"ref": "https://x.example/" + script}}})
		var req struct {
			ID string `json:"request_id"`
		}
		c.must(202, "POST", "/context/requests", reader, map[string]any{"scope": "identity.dob", "purpose": hostile, "duration": "1h"}, &req)
		b.do(chromedp.Navigate(ui + "/review"))
		if got := b.text("#" + id + " pre.value"); !strings.Contains(got, hostile+script) {
			t.Errorf("the hostile value shows as %q", got)
		}
		if got := b.text("#" + id + " .reported"); got != "app: "+hostile {
			t.Errorf("the hostile app name shows as %q", got)
		}
		if n := eval[int](b, `document.querySelectorAll('main img, main script, script').length`); n != 0 {
			t.Errorf("the review page has %d injected elements", n)
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		if got := b.text("#" + req.ID + " .purpose"); got != hostile {
			t.Errorf("the hostile purpose shows as %q", got)
		}
		if n := eval[int](b, `document.querySelectorAll('img, script').length`); n != 0 {
			t.Errorf("the requests page has %d injected elements", n)
		}
		b.do(chromedp.Navigate(ui + "/receipts?purpose=" + strings.ReplaceAll(hostile, " ", "+")))
		b.do(chromedp.WaitVisible(chromedp.ID("receipts")))
		if n := eval[int](b, `document.querySelectorAll('img, script').length`); n != 0 {
			t.Errorf("the receipts page has %d injected elements", n)
		}
		if d := dialogs.Load(); d != 0 {
			t.Errorf("%d dialogs opened: an injected script ran", d)
		}
		c.must(200, "POST", "/phc/v1/proposals/"+id+"/reject", c.owner(), map[string]string{}, nil)
	})

	t.Run("cross-site post", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		// A page on another origin (another loopback port: same site,
		// so a SameSite cookie alone would not stop it) posts the lock
		// form, with a guessed CSRF token, when the owner clicks.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		attacker := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/lock"><input type="hidden" name="csrf" value="guess"><button id="go">Win a prize</button></form>`, ui)
		})}
		go attacker.Serve(ln)
		defer attacker.Close()
		b.do(chromedp.Navigate("http://" + ln.Addr().String() + "/"))
		b.do(chromedp.Click(chromedp.ID("go")))
		b.do(chromedp.WaitVisible(chromedp.CSS("body pre")))
		if got := eval[string](b, `document.body.innerText`); !strings.Contains(got, "cross-origin requests are refused") {
			t.Errorf("the cross-site post answered %q", got)
		}
		if c.core.Svc.Locked() {
			t.Fatal("a cross-site post locked the vault")
		}
		b.do(chromedp.Navigate(ui + "/review"))
		if got := b.text("h1"); !strings.Contains(got, "Review queue") {
			t.Errorf("after the cross-site post the console shows %q; want the review queue", got)
		}
	})

	t.Run("quarantine", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		// Another custodian exports two claims to this one, which holds
		// them in the quarantine.
		other := startConsole(t)
		var cardHere, cardThere, bundle []byte
		c.must(200, "GET", "/phc/v1/card", c.owner(), nil, &cardHere)
		other.must(200, "GET", "/phc/v1/card", other.owner(), nil, &cardThere)
		c.must(201, "POST", "/phc/v1/custodians", c.owner(), cardThere, nil)
		for key, value := range map[string]string{"work.lang": "Go", "work.editor": "vim"} {
			id := other.propose(other.owner(), map[string]any{"key": key, "value": value})
			other.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", other.owner(), map[string]any{"personas": []string{}}, nil)
		}
		other.must(200, "POST", "/phc/v1/export", other.owner(), map[string]any{"to": json.RawMessage(cardHere)}, &bundle)
		// This owner's editor is emacs: the held vim is shown beside it.
		mine := c.propose(c.owner(), map[string]any{"key": "work.editor", "value": "emacs"})
		c.must(200, "POST", "/phc/v1/proposals/"+mine+"/confirm", c.owner(), map[string]any{"personas": []string{}}, nil)
		c.must(201, "POST", "/phc/v1/import", c.owner(), bundle, nil)

		b.do(chromedp.Navigate(ui + "/quarantine"))
		rows := eval[[]string](b, `[...document.querySelectorAll('#held tr.held')].map(r => r.id + ' ' + r.querySelector('td.what .key').textContent.trim())`)
		if len(rows) != 2 {
			t.Fatalf("the quarantine shows %q; want the two claims\n%s", rows, eval[string](b, `document.body.innerText`))
		}
		values := eval[[]string](b, `[...document.querySelectorAll('#held td.what')].map(c => c.innerText.replace(/\s+/g, ' ').trim())`)
		if !slices.ContainsFunc(values, func(v string) bool {
			return strings.Contains(v, `work.editor "vim" Here now: clm_`) && strings.Contains(v, `"emacs" (whole value) − "emacs" + "vim"`)
		}) || !slices.ContainsFunc(values, func(v string) bool { return strings.HasPrefix(v, `work.lang "Go"`) && !strings.Contains(v, "Here now") }) {
			t.Fatalf("the quarantine shows %q; want each value, and emacs here beside the held vim", values)
		}
		// Each shows the tier and restrictions it would be adopted with.
		if prot := eval[[]string](b, `[...document.querySelectorAll('#held td.protection')].map(c => c.textContent.trim())`); !slices.Equal(prot, []string{"standard", "standard"}) {
			t.Fatalf("the quarantine shows protections %q; want standard for both", prot)
		}
		b.shot("quarantine")
		held := map[string]string{}
		for _, r := range rows {
			id, key, _ := strings.Cut(r, " ")
			held[key] = strings.TrimPrefix(id, "held-")
		}
		// The bulk form: work.lang selected, into persona work, its writer
		// (the other custodian's owner) chosen from the list as this owner.
		b.do(chromedp.Click(chromedp.CSS(`#held-` + held["work.lang"] + ` input[name=ids]`)))
		b.do(chromedp.Click(chromedp.CSS(`#bulk input[name=personas][value=work]`)))
		owner := eval[string](b, `[...document.querySelectorAll('#identities select option')].find(o => o.value.endsWith('=owner')).value`)
		b.do(chromedp.SetValue(chromedp.CSS(`#identities select`), owner))
		if got := b.submit(`#adopt-selected`, "#flash"); !strings.Contains(got, "Adopted 1") {
			t.Fatalf("adopting the selected record says %q", got)
		}
		var lang struct {
			Claims []struct {
				Producer struct {
					Authenticated struct{ Kind string } `json:"authenticated"`
				} `json:"producer"`
			} `json:"claims"`
		}
		c.must(200, "GET", "/phc/v1/claims?key=work.lang", c.owner(), nil, &lang)
		if len(lang.Claims) != 1 || lang.Claims[0].Producer.Authenticated.Kind != "owner" {
			t.Errorf("work.lang after adopting it mapped to the owner: %+v", lang.Claims)
		}
		b.do(chromedp.Navigate(ui + "/quarantine"))
		b.do(chromedp.Click(chromedp.CSS(`#held-` + held["work.editor"] + ` input[name=ids]`)))
		if got := b.submit(`#reject-selected`, "#flash"); !strings.Contains(got, "Rejected 1") {
			t.Fatalf("rejecting the selected record says %q", got)
		}
		var list struct {
			Claims []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"claims"`
		}
		c.must(200, "GET", "/phc/v1/claims?key=work.*&persona=work", c.owner(), nil, &list)
		var keys []string
		for _, cl := range list.Claims {
			keys = append(keys, cl.Key)
		}
		if !slices.Contains(keys, "work.lang") || slices.Contains(keys, "work.editor") {
			t.Errorf("claims in persona work after adopting work.lang and rejecting work.editor: %v", keys)
		}
	})

	t.Run("personas", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		b.do(chromedp.Navigate(ui + "/personas"))
		b.do(chromedp.SetValue(chromedp.CSS(`#persona-home input[name=name]`), "Home life"),
			chromedp.SetValue(chromedp.CSS(`#persona-home textarea`), "answer briefly\nno jargon"))
		if got := b.submit("#persona-home button.save", "#flash"); !strings.Contains(got, "Saved persona home") {
			t.Fatalf("saving the persona says %q", got)
		}
		var ps struct {
			Personas []struct {
				ID          string   `json:"id"`
				Name        string   `json:"name"`
				Preferences []string `json:"preferences"`
			} `json:"personas"`
		}
		c.must(200, "GET", "/phc/v1/personas", c.owner(), nil, &ps)
		for _, p := range ps.Personas {
			if p.ID == "home" && (p.Name != "Home life" || !slices.Equal(p.Preferences, []string{"answer briefly", "no jargon"})) {
				t.Errorf("persona home = %+v; want renamed with two preferences", p)
			}
		}
	})

	t.Run("other pages", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		// Some of the graph: two entities and the relationships between them.
		entity := func(typ, name, key string) string {
			var e struct {
				Entity struct {
					ID string `json:"id"`
				} `json:"entity"`
			}
			c.must(201, "POST", "/phc/v1/entities", c.owner(), map[string]string{"type": typ, "name": name, "key": key}, &e)
			return e.Entity.ID
		}
		ana, acme := entity("person", "Ana", "people.ana.name"), entity("organisation", "Acme", "orgs.acme.name")
		relate := func(key, from, to, rel string) {
			id := c.propose(c.owner(), map[string]any{"key": key, "kind": "relationship", "value": map[string]string{"from": from, "to": to, "relation": rel}})
			c.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", c.owner(), map[string]any{"personas": []string{}}, nil)
		}
		relate("people.ana.relation", "self", ana, "friend")
		relate("orgs.acme.relation", "self", acme, "works_at")
		relate("people.ana.employer", ana, acme, "works_at")
		for _, p := range []struct{ path, sel, name string }{
			{"/claims", "#claims", "claims"},
			{"/personas", "#personas", "personas"},
			{"/receipts?app=reader", "#chain", "receipts"},
			{"/graph", "#graph", "graph"},
		} {
			b.do(chromedp.Navigate(ui + p.path))
			b.do(chromedp.WaitVisible(chromedp.CSS(p.sel)))
			b.shot(p.name)
		}
		b.do(chromedp.Navigate(ui + "/graph"))
		if n := eval[int](b, `document.querySelectorAll('#graph a.node').length`); n != 3 {
			t.Errorf("the graph around self has %d nodes; want self, Ana and Acme", n)
		}
		b.do(chromedp.Click(chromedp.CSS(`#graph a.node[data-id="` + ana + `"] rect`)))
		b.do(chromedp.WaitVisible(chromedp.CSS(`h1 .literal`)))
		if got := b.text("h1 .literal"); got != "Ana" {
			t.Errorf("clicking Ana's node opened the graph around %q", got)
		}
		if got := b.text("h1 .node-id"); !strings.Contains(got, ana) {
			t.Errorf("the graph around Ana names %q; want her id %s beside her name", got, ana)
		}
		b.do(chromedp.Navigate(ui + "/receipts"))
		if got := b.text("#chain"); !strings.Contains(got, "chain verified") {
			t.Errorf("the receipt chain shows %q", got)
		}
		// Filtered: the reader's refused reads (after the revocation).
		b.do(chromedp.Navigate(ui + "/receipts?app=reader&decision=deny"))
		b.do(chromedp.WaitVisible(chromedp.ID("receipts")))
		rows := eval[[]string](b, `[...document.querySelectorAll('#receipts tr.receipt')].map(r => r.cells[2].textContent + ' ' + r.cells[6].textContent)`)
		if len(rows) == 0 {
			t.Error("no deny receipt for reader; its read after the revocation was refused")
		}
		for _, r := range rows {
			if !strings.Contains(r, "consumer:reader") || !strings.Contains(r, "deny") {
				t.Errorf("a receipt shown for app=reader&decision=deny: %q", r)
			}
		}
	})

	t.Run("dispute, retract, delete", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		id := c.propose(c.owner(), map[string]any{"key": "food.dislikes", "value": "olives"})
		var w struct {
			Claim struct {
				ID string `json:"id"`
			} `json:"claim"`
		}
		c.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", c.owner(), map[string]any{"personas": []string{}}, &w)
		page := ui + "/claims/" + w.Claim.ID
		status := func() string {
			var got struct {
				Claim struct {
					Status       string `json:"status"`
					Confirmation struct {
						Status string `json:"status"`
					} `json:"confirmation"`
				} `json:"claim"`
			}
			c.must(200, "GET", "/phc/v1/claims/"+w.Claim.ID, c.owner(), nil, &got)
			return got.Claim.Status + "/" + got.Claim.Confirmation.Status
		}
		for _, step := range []struct{ button, flash, want string }{
			{"#dispute", "Disputed", "active/disputed"},
			{"#undispute", "Dispute withdrawn", "active/confirmed"},
			{"#retract", "Retracted", "retracted/confirmed"},
		} {
			b.do(chromedp.Navigate(page))
			submit := b.submit
			if step.button == "#retract" {
				submit = func(sel, want string) string { return b.confirmed(sel, "Retract the claim", want) }
			}
			if got := submit(step.button, "#flash"); !strings.Contains(got, step.flash) {
				t.Fatalf("%s says %q", step.button, got)
			}
			if got := status(); got != step.want {
				t.Errorf("after %s the claim is %s; want %s", step.button, got, step.want)
			}
		}
		b.do(chromedp.Navigate(page))
		if got := b.confirmed("#delete", "and all", "#flash"); !strings.Contains(got, "Deleted") {
			t.Fatalf("deleting says %q", got)
		}
		if got := status(); !strings.HasPrefix(got, "deleted/") {
			t.Errorf("after deleting, the claim is %s; want its tombstone, deleted", got)
		}
		b.do(chromedp.Navigate(page))
		if got := b.text("h1"); !strings.Contains(got, "deleted") {
			t.Errorf("the deleted claim's page says %q", got)
		}
	})

	t.Run("validate", func(t *testing.T) {
		b := b.with(t)
		b.do(chromedp.Navigate(ui + "/validate"))
		b.do(chromedp.WaitVisible(chromedp.ID("document")))
		b.do(chromedp.SendKeys(chromedp.ID("document"), `{"key": "a.b", "value": 1, "kind": "fact", "assertion": "made-up"}`))
		if got := b.submit("#validate", "#verdict"); !strings.Contains(got, "Not a valid proposal") {
			t.Fatalf("the pasted document's verdict is %q", got)
		}
		if got := b.text("#violations"); !strings.Contains(got, "/assertion") || !strings.Contains(got, "enum") {
			t.Errorf("the violations show %q", got)
		}
		b.shot("validate")
		file := filepath.Join(t.TempDir(), "persona.json")
		if err := os.WriteFile(file, []byte(`{"id": "work", "name": "Work"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		b.do(chromedp.Navigate(ui+"/validate"), chromedp.WaitVisible(chromedp.ID("file")))
		b.do(chromedp.SetUploadFiles("#file", []string{file}))
		if got := b.submit("#validate", "#verdict"); !strings.Contains(got, "A valid persona") {
			t.Fatalf("the uploaded document's verdict is %q", got)
		}
	})

	t.Run("lock", func(t *testing.T) {
		b := b.with(t)
		b.do(chromedp.Navigate(ui + "/review"))
		b.do(chromedp.Click(chromedp.ID("lock")))
		b.do(chromedp.WaitVisible(chromedp.ID("unlock")))
		if !c.core.Svc.Locked() {
			t.Fatal("the console's Lock did not lock the vault")
		}
	})
}
