//go:build slow

package webui_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// bidiTrap is text an app may supply to look like something else: shown
// as it is stored, it reads "KO EFAS".
const bidiTrap = "\u202eSAFE OK"

// visualOrder tells, in the page, whether "SAFE OK" inside the first
// element sel matches shows left to right ("ltr"), reversed, or not at
// all ("missing"): it compares where the S and the K are drawn.
func visualOrder(b *browser, sel string) string {
	b.t.Helper()
	raw, _ := json.Marshal(sel)
	return eval[string](b, `(() => {
		const el = document.querySelector(`+string(raw)+`);
		if (!el) return "missing";
		const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
		for (let n; (n = walk.nextNode()); ) {
			const i = n.data.indexOf("SAFE OK");
			if (i < 0) continue;
			const at = j => { const r = document.createRange(); r.setStart(n, j); r.setEnd(n, j + 1); return r.getBoundingClientRect().left; };
			return at(i) < at(i + 6) ? "ltr" : "reversed";
		}
		return "missing";
	})()`)
}

// TestConsoleDetails drives in Chromium what the "The console"
// asks for: app-supplied text shown with its bidi controls made harmless,
// irreversible actions confirmed on a page of their own, names instead of
// entity ids and a readable graph, a grant form with what the CLI has, a
// favicon, placeholders that fit, times and durations written one way, and
// the settings page.
func TestConsoleDetails(t *testing.T) {
	var dialogs atomic.Int32
	b := newBrowser(t, &dialogs)
	c := startConsole(t)
	ui := signInBrowser(t, c, b)

	writer := c.app("bidi-app", "*", "write")
	c.grant("bidi-app", "notes", "contribute", map[string]any{"keys": []string{"hobby.*", "people.*"}})
	reader := c.app("bidi-reader", "*", "read")
	c.must(201, "POST", "/phc/v1/personas", c.owner(), map[string]string{"id": "bidi", "name": bidiTrap}, nil)

	t.Run("bidi isolation", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		id := c.propose(writer, map[string]any{"key": "hobby.bidi", "value": bidiTrap, "note": bidiTrap,
			"reported": map[string]string{"app": bidiTrap}, "evidence": []map[string]string{{"ref": "chat://" + bidiTrap}}})
		b.do(chromedp.Navigate(ui + "/review"))
		for _, sel := range []string{"#" + id + " pre.value", "#" + id + " .reported", "#" + id + " .evidence", "#" + id + " dd.literal", "label.persona-bidi"} {
			if got := visualOrder(b, sel); got != "ltr" {
				t.Errorf("on the review page, %s shows SAFE OK %s; want it left to right", sel, got)
			}
		}
		b.shot("bidi")
		if got := b.text("#" + id + " pre.value"); !strings.Contains(got, "[U+202E]SAFE OK") {
			t.Errorf("the value shows as %q; want its override shown as [U+202E]", got)
		}
		b.do(chromedp.Navigate(ui + "/grants"))
		if got := visualOrder(b, "#new-grant label.persona-bidi"); got != "ltr" {
			t.Errorf("on the grants page, the persona's name shows SAFE OK %s", got)
		}
		// On the personas page the name is text, never an input's value
		// (where the override would reorder it); saving the persona with
		// the name field left blank keeps the name.
		b.do(chromedp.Navigate(ui + "/personas"))
		if got := visualOrder(b, "#persona-bidi .persona-name"); got != "ltr" {
			t.Errorf("on the personas page, the persona's name shows SAFE OK %s", got)
		}
		if got := eval[string](b, `document.querySelector('#persona-bidi input[name=name]').value`); got != "" {
			t.Errorf("the persona's name field holds %q; want it blank (the name is shown as text)", got)
		}
		if got := b.submit("#persona-bidi button.save", "#flash"); !strings.Contains(got, "Saved persona bidi") {
			t.Fatalf("saving the persona says %q", got)
		}
		var ps struct {
			Personas []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"personas"`
		}
		c.must(200, "GET", "/phc/v1/personas", c.owner(), nil, &ps)
		for _, p := range ps.Personas {
			if p.ID == "bidi" && p.Name != bidiTrap {
				t.Errorf("saving with a blank name field renamed the persona to %q", p.Name)
			}
		}
		c.must(200, "POST", "/phc/v1/proposals/"+id+"/reject", c.owner(), map[string]string{}, nil)
	})

	t.Run("irreversible actions ask first", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		claimStatus := func(id string) string {
			var got struct {
				Claim struct {
					Status string `json:"status"`
				} `json:"claim"`
			}
			c.must(200, "GET", "/phc/v1/claims/"+id, c.owner(), nil, &got)
			return got.Claim.Status
		}
		pid := c.propose(c.owner(), map[string]any{"key": "hobby.chess", "value": "club"})
		var w struct {
			Claim struct {
				ID string `json:"id"`
			} `json:"claim"`
		}
		c.must(200, "POST", "/phc/v1/proposals/"+pid+"/confirm", c.owner(), map[string]any{"personas": []string{}}, &w)
		page := ui + "/claims/" + w.Claim.ID
		for _, step := range []struct{ button, what, after string }{
			{"#retract", "Retract the claim hobby.chess", "retracted"},
			{"#delete", "Delete the claim hobby.chess", "deleted"},
		} {
			before := claimStatus(w.Claim.ID)
			// Clicked, the button only asks; cancelling leaves the claim.
			b.do(chromedp.Navigate(page))
			b.do(chromedp.Click(chromedp.CSS(step.button)))
			if got := b.text("#confirm-what"); !strings.Contains(got, step.what) {
				t.Errorf("%s asks %q; want %q in it", step.button, got, step.what)
			}
			b.shot("confirm")
			if got := claimStatus(w.Claim.ID); got != before {
				t.Fatalf("%s acted before the owner confirmed: the claim is %s", step.button, got)
			}
			b.do(chromedp.Click(chromedp.ID("confirm-cancel")))
			b.text("#value")
			if got := eval[string](b, `location.href`); got != page {
				t.Errorf("cancelling %s went to %s; want the claim's page", step.button, got)
			}
			if got := claimStatus(w.Claim.ID); got != before {
				t.Fatalf("cancelling %s left the claim %s", step.button, got)
			}
			// Confirmed, it acts.
			b.do(chromedp.Navigate(page))
			b.do(chromedp.Click(chromedp.CSS(step.button)))
			b.submit("#confirm-yes", "#flash")
			if got := claimStatus(w.Claim.ID); got != step.after {
				t.Errorf("after confirming %s the claim is %s; want %s", step.button, got, step.after)
			}
		}

		// Deleting a persona.
		c.must(201, "POST", "/phc/v1/personas", c.owner(), map[string]string{"id": "doomed", "name": "Doomed"}, nil)
		personas := func() string {
			var raw []byte
			c.must(200, "GET", "/phc/v1/personas", c.owner(), nil, &raw)
			return string(raw)
		}
		b.do(chromedp.Navigate(ui + "/personas"))
		b.do(chromedp.Click(chromedp.CSS("#persona-doomed button.danger")))
		if got := b.text("#confirm-what"); !strings.Contains(got, "Doomed") {
			t.Errorf("deleting a persona asks %q", got)
		}
		if !strings.Contains(personas(), `"doomed"`) {
			t.Fatal("the persona went before the owner confirmed")
		}
		b.submit("#confirm-yes", "#flash")
		if strings.Contains(personas(), `"doomed"`) {
			t.Error("the persona stayed after the owner confirmed")
		}

		// Removing an app.
		c.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "goner", "secret": "secret-of-goner-0123456789"}, nil)
		apps := func() string {
			var raw []byte
			c.must(200, "GET", "/phc/v1/consumers", c.owner(), nil, &raw)
			return string(raw)
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		b.do(chromedp.Click(chromedp.CSS("#app-goner button.remove-app")))
		if got := b.text("#confirm-what"); !strings.Contains(got, "goner") {
			t.Errorf("removing an app asks %q", got)
		}
		if !strings.Contains(apps(), `"goner"`) {
			t.Fatal("the app went before the owner confirmed")
		}
		b.submit("#confirm-yes", "#flash")
		if strings.Contains(apps(), `"goner"`) {
			t.Error("the app stayed after the owner confirmed")
		}
	})

	t.Run("names, not ids, and a readable graph", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		nameClaims := map[string]string{}
		entity := func(typ, name, key string) string {
			var e struct {
				Entity struct {
					ID string `json:"id"`
				} `json:"entity"`
				Claim struct {
					ID string `json:"id"`
				} `json:"claim"`
			}
			c.must(201, "POST", "/phc/v1/entities", c.owner(), map[string]string{"type": typ, "name": name, "key": key}, &e)
			nameClaims[name] = e.Claim.ID
			return e.Entity.ID
		}
		ids := map[string]string{}
		for _, p := range []struct{ typ, name, key string }{
			{"person", "Bea", "people.bea.name"}, {"person", "Cem", "people.cem.name"}, {"person", "Dara", "people.dara.name"},
			{"organisation", "Globex", "orgs.globex.name"}, {"organisation", "Initech", "orgs.initech.name"}, {"project", "Lighthouse", "projects.lighthouse.name"},
		} {
			ids[p.name] = entity(p.typ, p.name, p.key)
		}
		var relClaim string
		relate := func(key, from, to, rel string) {
			id := c.propose(c.owner(), map[string]any{"key": key, "kind": "relationship", "value": map[string]string{"from": from, "to": to, "relation": rel}})
			var w struct {
				Claim struct {
					ID string `json:"id"`
				} `json:"claim"`
			}
			c.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", c.owner(), map[string]any{"personas": []string{}}, &w)
			relClaim = w.Claim.ID
		}
		relate("people.bea.relation", "self", ids["Bea"], "sister")
		relate("people.cem.relation", "self", ids["Cem"], "friend")
		relate("people.dara.relation", "self", ids["Dara"], "mentor")
		relate("people.bea.employer", ids["Bea"], ids["Globex"], "works_at")
		relate("people.cem.employer", ids["Cem"], ids["Initech"], "works_at")
		relate("people.dara.project", ids["Dara"], ids["Lighthouse"], "leads")

		b.do(chromedp.Navigate(ui + "/graph"))
		b.shot("graph-wide")
		labels := eval[[]string](b, `[...document.querySelectorAll('#graph a.node text.label')].map(t => t.textContent)`)
		for _, name := range []string{"you", "Bea", "Cem", "Dara", "Globex", "Initech", "Lighthouse"} {
			if !strings.Contains(strings.Join(labels, "|")+"|", name+"|") {
				t.Errorf("the graph's nodes are %q; want %s among them", labels, name)
			}
		}
		edges := eval[[]string](b, `[...document.querySelectorAll('#graph text.edge')].map(t => t.textContent)`)
		for _, rel := range []string{"sister", "friend", "mentor", "works_at", "leads"} {
			if !strings.Contains(strings.Join(edges, " "), rel) {
				t.Errorf("the graph's edge labels are %q; want %s", edges, rel)
			}
		}
		// Every box inside the picture, none over another.
		overlaps := eval[[]string](b, `(() => {
			const svg = document.querySelector('#graph svg').getBoundingClientRect();
			const rs = [...document.querySelectorAll('#graph a.node rect')].map(r => [r.getBoundingClientRect(), r.parentNode.dataset.id]);
			const out = [];
			rs.forEach(([a, ida], i) => {
				if (a.left < svg.left || a.top < svg.top || a.right > svg.right || a.bottom > svg.bottom) out.push(ida + " outside");
				rs.slice(i + 1).forEach(([b, idb]) => {
					if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push(ida + " over " + idb);
				});
			});
			return out;
		})()`)
		if len(overlaps) > 0 {
			t.Errorf("the graph's boxes: %v", overlaps)
		}
		if got := b.text("#edges"); strings.Contains(got, "ent_") && !strings.Contains(got, "Bea") {
			t.Errorf("the relationship table shows ids, not names:\n%s", got)
		}
		if got := eval[string](b, `[...document.querySelectorAll('#edges tr.edge td:nth-child(1), #edges tr.edge td:nth-child(3)')].map(td => td.textContent).join("|")`); strings.Contains(got, "ent_") {
			t.Errorf("the relationship table's ends show ids: %s", got)
		}
		b.do(chromedp.Navigate(ui + "/claims/" + relClaim))
		if got := b.text("#relation"); got != "Dara leads Lighthouse" {
			t.Errorf("the relationship claim reads %q; want Dara leads Lighthouse", got)
		}
		b.do(chromedp.Navigate(ui + "/claims/" + nameClaims["Dara"]))
		if got := b.text("dd .subject"); got != "Dara" {
			t.Errorf("the claim's subject shows as %q; want Dara", got)
		}
		b.do(chromedp.Navigate(ui + "/claims?key=people.*"))
		for _, about := range eval[[]string](b, `[...document.querySelectorAll('#claims .about')].map(e => e.textContent)`) {
			if strings.Contains(about, "ent_") {
				t.Errorf("the claims list says %q; want a name", about)
			}
		}
	})

	t.Run("grant form has what the CLI has", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		raw, err := os.ReadFile("../../dec/testdata/vectors/valid-1.json")
		if err != nil {
			t.Fatal(err)
		}
		var vec struct {
			Trust map[string]struct {
				Keys []any `json:"keys"`
			} `json:"trust"`
		}
		if err := json.Unmarshal(raw, &vec); err != nil || len(vec.Trust) != 1 {
			t.Fatalf("valid-1.json: %v", err)
		}
		for issuer, jwks := range vec.Trust {
			c.must(201, "POST", "/phc/v1/dec/trust", c.owner(), map[string]any{"issuer": issuer, "jwks": map[string]any{"keys": jwks.Keys}}, nil)
			c.must(201, "POST", "/phc/v1/dec/policies", c.owner(), map[string]any{"id": "tutor", "issuer": issuer, "client_id": "tutor", "max_age": "720h"}, nil)
		}
		c.must(201, "POST", "/phc/v1/trust", c.owner(), map[string]any{"issuer": "https://idp.example", "audience": "phc"}, nil)

		b.do(chromedp.Navigate(ui + "/grants"))
		if ops := eval[[]string](b, `[...document.querySelectorAll('#new-grant input[name=operations]')].map(e => e.value)`); strings.Join(ops, ",") != "read,contribute,confirm,share" {
			t.Errorf("the grant form offers the operations %v; want read, contribute, confirm, share, as phc grant --ops", ops)
		}
		b.do(chromedp.SendKeys(chromedp.ID("purpose"), "tutoring"),
			chromedp.SetValue(chromedp.ID("purpose_category"), "personalisation"),
			chromedp.SetValue(chromedp.ID("disclosure"), "reference"),
			chromedp.SetValue(chromedp.ID("requires"), "tutor"),
			chromedp.SetValue(chromedp.ID("oidc_issuer"), "https://idp.example"),
			chromedp.SendKeys(chromedp.ID("oidc_subject"), "student-42"),
			chromedp.SendKeys(chromedp.ID("keys"), "hobby.*"))
		if got := b.submit("#create-grant", "#flash"); !strings.Contains(got, "Created grant") {
			t.Fatalf("granting says %q", got)
		}
		var gs struct {
			Grants []struct {
				Recipient struct {
					Kind, ID, Issuer string
				} `json:"recipient"`
				Purpose    string `json:"purpose"`
				Category   string `json:"purpose_category"`
				Disclosure string `json:"disclosure"`
				Requires   *struct {
					Qualification string `json:"qualification"`
				} `json:"requires"`
			} `json:"grants"`
		}
		c.must(200, "GET", "/phc/v1/grants", c.owner(), nil, &gs)
		var found bool
		for _, g := range gs.Grants {
			if g.Purpose != "tutoring" {
				continue
			}
			found = true
			if g.Recipient.Kind != "oidc" || g.Recipient.ID != "student-42" || g.Recipient.Issuer != "https://idp.example" ||
				g.Category != "personalisation" || g.Disclosure != "reference" || g.Requires == nil || g.Requires.Qualification != "tutor" {
				t.Errorf("the grant made in the console = %+v", g)
			}
		}
		if !found {
			t.Fatal("no grant for tutoring")
		}
		row := b.text("#grant-list")
		for _, want := range []string{"student-42", "https://idp.example", "personalisation", "reference", "requires tutor"} {
			if !strings.Contains(row, want) {
				t.Errorf("the grant list does not show %q:\n%s", want, row)
			}
		}
	})

	t.Run("favicon, placeholders, times", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		var req struct {
			ID string `json:"request_id"`
		}
		c.must(202, "POST", "/context/requests", reader, map[string]any{"scope": "identity.ssn", "purpose": "taxes", "duration": "1h"}, &req)
		c.propose(writer, map[string]any{"key": "hobby.kites", "value": "yes"})
		timeFormat := regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$`)
		otherTime := regexp.MustCompile(`\d{2}:\d{2}(:\d{2})?Z|T\d{2}:\d{2}`)
		for _, p := range []string{"/review", "/requests", "/grants", "/claims", "/personas", "/receipts", "/quarantine", "/settings"} {
			b.do(chromedp.Navigate(ui + p))
			icon := eval[string](b, `(document.querySelector('link[rel="icon"]') || {}).href || ""`)
			if !strings.HasSuffix(icon, "/ui/assets/favicon.svg") {
				t.Errorf("%s: the icon is %q", p, icon)
			}
			eval[bool](b, `(document.querySelectorAll('details').forEach(d => d.open = true), true)`)
			misfits := eval[[]string](b, `[...document.querySelectorAll('input[placeholder]')].filter(e => e.offsetParent !== null).map(e => {
				const cs = getComputedStyle(e), ctx = document.createElement('canvas').getContext('2d');
				ctx.font = cs.font;
				const need = ctx.measureText(e.placeholder).width, have = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
				return need <= have ? "" : e.name + " (" + e.placeholder + "): " + Math.ceil(need) + "px in " + Math.floor(have) + "px";
			}).filter(Boolean)`)
			for _, m := range misfits {
				t.Errorf("%s: a placeholder is cut: %s", p, m)
			}
			for _, tm := range eval[[]string](b, `[...document.querySelectorAll('main time')].map(t => t.textContent)`) {
				if !timeFormat.MatchString(tm) {
					t.Errorf("%s: a time shows as %q; want 2006-01-02 15:04:05 UTC", p, tm)
				}
			}
			if m := otherTime.FindString(eval[string](b, `document.querySelector('main').innerText`)); m != "" {
				t.Errorf("%s: a time is written another way: %q", p, m)
			}
		}
		b.do(chromedp.Navigate(ui + "/receipts"))
		if n := eval[int](b, `document.querySelectorAll('#receipts time').length`); n == 0 {
			t.Error("the receipts show no time")
		}
		b.do(chromedp.Navigate(ui + "/requests"))
		if got := b.text("#" + req.ID); !strings.Contains(got, "1h, ") || strings.Contains(got, "1h0m0s") {
			t.Errorf("the request's duration shows as:\n%s\nwant 1h", got)
		}
		resp, err := http.Get(c.base + "/ui/assets/favicon.svg")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/svg+xml") {
			t.Errorf("the favicon = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		c.must(200, "POST", "/context/requests/"+req.ID+"/deny", c.owner(), nil, nil)
	})

	t.Run("settings page", func(t *testing.T) {
		c, b := c.with(t), b.with(t)
		b.do(chromedp.Navigate(ui + "/settings"))
		b.shot("settings")
		if got := eval[string](b, `document.getElementById('reads_per_minute').value`); got != "1000000" {
			t.Errorf("reads_per_minute shows %q; want the 1000000 set", got)
		}
		b.do(chromedp.SetValue(chromedp.ID("auto_grant"), "none"),
			chromedp.SetValue(chromedp.ID("disclosure_sensitive"), "reference"),
			chromedp.SendKeys(chromedp.ID("user_only_write"), "diary.*"),
			chromedp.Click(chromedp.ID("long_lived_tokens")))
		if got := b.submit("#save-settings", "#flash"); !strings.Contains(got, "Settings saved") {
			t.Fatalf("saving the settings says %q", got)
		}
		var set struct {
			AutoGrant       string            `json:"auto_grant"`
			UserOnlyWrite   []string          `json:"user_only_write"`
			ReadsPerMinute  int               `json:"reads_per_minute"`
			LongLivedTokens bool              `json:"long_lived_tokens"`
			Disclosure      map[string]string `json:"disclosure"`
		}
		c.must(200, "GET", "/phc/v1/settings", c.owner(), nil, &set)
		if set.AutoGrant != "none" || len(set.UserOnlyWrite) != 1 || set.UserOnlyWrite[0] != "diary.*" || set.ReadsPerMinute != 1_000_000 ||
			!set.LongLivedTokens || set.Disclosure["sensitive"] != "reference" {
			t.Errorf("the settings after the form = %+v", set)
		}
		if got := eval[bool](b, `document.getElementById('long_lived_tokens').checked`); !got {
			t.Error("the page after saving shows long_lived_tokens off")
		}
		// A value the custodian refuses shows its error, and changes nothing.
		b.do(chromedp.SetValue(chromedp.ID("receipt_retention_days"), "40000"))
		if got := b.submit("#save-settings", "#error"); !strings.Contains(got, "receipt_retention_days is from 1 to 36,500") || !strings.Contains(got, "invalid_request") {
			t.Errorf("an out-of-range retention says %q", got)
		}
		c.must(200, "GET", "/phc/v1/settings", c.owner(), nil, &set)
		if set.AutoGrant != "none" {
			t.Errorf("a refused form changed the settings: %+v", set)
		}
		c.must(200, "PUT", "/phc/v1/settings", c.owner(), map[string]any{"auto_grant": "public", "long_lived_tokens": false}, nil)
	})
}

// signInBrowser signs b in to the console as phc ui does, with a one-time
// link, and returns the address of the session's pages.
func signInBrowser(t *testing.T, c *console, b *browser) string {
	t.Helper()
	var link struct {
		Path string `json:"path"`
	}
	c.must(201, "POST", "/ui/link", c.owner(), nil, &link)
	b.do(chromedp.Navigate(c.base + link.Path))
	b.text("#lock")
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return consoleBase(t, loc)
}
