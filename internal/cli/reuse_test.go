package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The rules of reuse (issue 12), over a real daemon: what a later version,
// an app's write, a context request and a read may and may not do.

type wireRestriction struct {
	Type      string `json:"type"`
	Mandatory bool   `json:"mandatory"`
	Holder    string `json:"holder,omitempty"`
}

func restrictionTypes(rs []wireRestriction) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Type)
	}
	slices.Sort(out)
	return out
}

// TestRestrictionsTravelWithVersions: a new version inherits the
// restrictions of the one it replaces — through a confirmed proposal that
// carries none and through an owner's correction that sends an empty list —
// and only the owner's explicit, receipted removal takes one away;
// source_controlled cannot be removed at all.
func TestRestrictionsTravelWithVersions(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "work", "name": "Work"}, nil)
	tutor := h.consumer("tutor", "work.*", "write")
	h.grant("tutor", "assist", "contribute", map[string]any{"keys": []string{"work.*"}})
	propose := func(value string, restrictions []wireRestriction) string {
		t.Helper()
		var out struct {
			ID string `json:"proposal_id"`
		}
		h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{"key": "work.secret.project", "value": value,
			"kind": "fact", "assertion": "reported", "restrictions": restrictions}, &out)
		return out.ID
	}
	confirm := func(id string) {
		t.Helper()
		h.must(200, "POST", "/phc/v1/proposals/"+id+"/confirm", h.owner, map[string]any{"personas": []string{"work"}}, nil)
	}
	confirm(propose("Atlas", []wireRestriction{{Type: "source_controlled", Mandatory: true, Holder: "employer"}, {Type: "no_export", Mandatory: true}}))
	var list struct {
		Claims []struct {
			ID string `json:"id"`
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims?key=work.secret.project", h.owner, nil, &list)
	if len(list.Claims) != 1 {
		t.Fatalf("claims = %+v", list.Claims)
	}
	id := list.Claims[0].ID
	current := func() (int, []string) {
		t.Helper()
		var out struct {
			Claim struct {
				Version      int               `json:"version"`
				Restrictions []wireRestriction `json:"restrictions"`
			} `json:"claim"`
		}
		h.must(200, "GET", "/phc/v1/claims/"+id, h.owner, nil, &out)
		return out.Claim.Version, restrictionTypes(out.Claim.Restrictions)
	}
	both := []string{"no_export", "source_controlled"}

	confirm(propose("Atlas II", []wireRestriction{}))
	if v, rs := current(); v != 2 || !slices.Equal(rs, both) {
		t.Fatalf("after a proposal without restrictions: version %d, restrictions %v; want 2, %v", v, rs, both)
	}
	h.must(200, "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"value": "Atlas III", "restrictions": []any{}}, nil)
	if v, rs := current(); v != 3 || !slices.Equal(rs, both) {
		t.Fatalf("after a correction with an empty list: version %d, restrictions %v; want 3, %v", v, rs, both)
	}
	h.constraint(403, "restriction_blocked", "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"remove_restrictions": []string{"source_controlled"}})
	h.constraint(403, "restriction_blocked", "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"remove_restrictions": []string{"third_party"}})
	h.constraint(400, "invalid_request", "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"remove_restrictions": []string{"no_training"}})
	if v, rs := current(); v != 3 || !slices.Equal(rs, both) {
		t.Fatalf("after refused removals: version %d, restrictions %v", v, rs)
	}
	h.must(200, "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"remove_restrictions": []string{"no_export"}}, nil)
	if v, rs := current(); v != 4 || !slices.Equal(rs, []string{"source_controlled"}) {
		t.Fatalf("after removing no_export: version %d, restrictions %v", v, rs)
	}
	var receipts struct {
		Receipts []struct {
			Operation string   `json:"operation"`
			Records   []string `json:"records"`
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &receipts)
	if !slices.ContainsFunc(receipts.Receipts, func(r struct {
		Operation string   `json:"operation"`
		Records   []string `json:"records"`
	}) bool {
		return r.Operation == "claim.restrictions.remove" && slices.Equal(r.Records, []string{id + "@4", "no_export"})
	}) {
		t.Fatalf("no receipt of the removal among %+v", receipts.Receipts)
	}
}

// TestReaderCannotRewrite: with auto_grant standard (PCP's policy), an
// app's write of a field the owner wrote, or another app wrote, becomes a
// proposal and changes nothing; a field the app wrote itself under that
// policy it may write again; a new field is committed at once.
func TestReaderCannotRewrite(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	var set struct {
		Warnings []string `json:"warnings"`
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, &set)
	if len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0], "without asking you") {
		t.Fatalf("auto_grant standard set with warnings %q; want a plain warning of what it allows", set.Warnings)
	}
	h.must(200, "PUT", "/context/fields/work.secret.project", h.owner, map[string]any{"value": "Atlas"}, nil)
	app := h.consumer("reader", "work.*", "read-write")
	other := h.consumer("other", "work.*", "read-write")

	var pending struct {
		ProposalID string `json:"proposal_id"`
		Status     string `json:"status"`
	}
	h.must(202, "PUT", "/context/fields/work.secret.project", app, map[string]any{"value": "Overwritten"}, &pending)
	if pending.Status != "pending" || !strings.HasPrefix(pending.ProposalID, "prp_") {
		t.Fatalf("an app's write over the owner's value = %+v; want a pending proposal", pending)
	}
	value := func(key string) any {
		t.Helper()
		var f wireField
		h.must(200, "GET", "/context/fields/"+key, h.owner, nil, &f)
		return f.Value
	}
	if v := value("work.secret.project"); v != "Atlas" {
		t.Fatalf("the owner's value became %v", v)
	}

	// Its own field: committed, and again.
	h.must(200, "PUT", "/context/fields/work.notes", app, map[string]any{"value": "first"}, nil)
	if v := value("work.notes"); v != "first" {
		t.Fatalf("the app's new field = %v", v)
	}
	h.must(200, "PUT", "/context/fields/work.notes", app, map[string]any{"value": "second"}, nil)
	if v := value("work.notes"); v != "second" {
		t.Fatalf("the app's own field = %v", v)
	}
	// Another app may not replace it.
	h.must(202, "PUT", "/context/fields/work.notes", other, map[string]any{"value": "third"}, nil)
	if v := value("work.notes"); v != "second" {
		t.Fatalf("another app replaced the field: %v", v)
	}
	// Once the owner confirms a value, the app's later write waits too.
	h.must(200, "PUT", "/context/fields/work.notes", h.owner, map[string]any{"value": "the owner's"}, nil)
	h.must(202, "PUT", "/context/fields/work.notes", app, map[string]any{"value": "fourth"}, nil)
	if v := value("work.notes"); v != "the owner's" {
		t.Fatalf("the app replaced the owner's confirmed value: %v", v)
	}
}

// TestRequestsFollowAutoGrant: a context request is granted at once only
// for the tiers auto_grant covers (under the default, public, a standard
// scope waits for the owner), and an automatic grant never reaches beyond
// the personas the app's grants are limited to.
func TestRequestsFollowAutoGrant(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "public"}, nil)
	r := h.consumer("learner", "learning.*", "read")
	var req struct {
		ID     string `json:"request_id"`
		Status string `json:"status"`
		Token  string `json:"token"`
	}
	h.must(202, "POST", "/context/requests", r, map[string]any{"scope": "learning.*", "purpose": "tutoring", "duration": "1h"}, &req)
	if req.Status != "pending" || req.Token != "" {
		t.Fatalf("a standard request under auto_grant public = %+v; want pending", req)
	}

	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "home", "name": "Home"}, nil)
	s := h.consumer("scout", "*", "read")
	h.grant("scout", "chores", "read", map[string]any{"personas": []string{"home"}})
	h.must(201, "POST", "/context/requests", s, map[string]any{"scope": "work.*", "purpose": "planning", "duration": "1h"}, &req)
	if req.Status != "approved" {
		t.Fatalf("a standard request under auto_grant standard = %+v; want approved", req)
	}
	var grants struct {
		Grants []struct {
			Request   string `json:"request"`
			MaxTier   string `json:"max_tier"`
			Selectors struct {
				Keys     []string `json:"keys"`
				Personas []string `json:"personas"`
			} `json:"selectors"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	i := slices.IndexFunc(grants.Grants, func(g struct {
		Request   string `json:"request"`
		MaxTier   string `json:"max_tier"`
		Selectors struct {
			Keys     []string `json:"keys"`
			Personas []string `json:"personas"`
		} `json:"selectors"`
	}) bool {
		return g.Request == req.ID
	})
	if i < 0 {
		t.Fatalf("no grant for request %s", req.ID)
	}
	g := grants.Grants[i]
	if !slices.Equal(g.Selectors.Personas, []string{"home"}) || !slices.Equal(g.Selectors.Keys, []string{"work.*"}) || g.MaxTier != "standard" {
		t.Fatalf("the automatic grant = %+v; want work.* in persona home only, standard data", g)
	}
}

// TestReadFilesOneRequest: reading a sensitive key the app may not read
// answers approval_required with the request the vault filed for it (PCP
// §10), however often it is tried: one request, never a value.
func TestReadFilesOneRequest(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/health.allergy", h.owner, map[string]any{"value": "peanuts"}, nil)
	app := h.consumer("nosy", "health.*", "read")
	var id string
	for range 20 {
		raw := h.constraint(403, "approval_required", "GET", "/context/fields/health.allergy", app, nil)
		var e struct {
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.RequestID == "" || (id != "" && e.RequestID != id) || strings.Contains(string(raw), "peanuts") {
			t.Fatalf("answer = %s", raw)
		}
		id = e.RequestID
	}
	var reqs struct {
		Requests []any `json:"requests"`
	}
	h.must(200, "GET", "/context/requests", h.owner, nil, &reqs)
	if len(reqs.Requests) != 1 {
		t.Fatalf("reads filed %d requests; want 1", len(reqs.Requests))
	}
}

// TestPurposeBinding: every disclosure happens under exactly one purpose.
// A read that names no purpose, with a token bound to none (PCP reads name
// none), reads under the purpose of the one grant that serves it; where
// grants of two purposes could, it is purpose_required. A token minted for
// marketing (phc token --purpose) reads under it, its receipts name it,
// and it reads under no other purpose.
func TestPurposeBinding(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "none"}, nil)
	h.must(200, "PUT", "/context/fields/work.slogan", h.owner, map[string]any{"value": "engines first"}, nil)
	unbound := h.consumer("ads", "*", "read")
	h.grant("ads", "marketing", "read", map[string]any{"keys": []string{"work.*"}})

	var bundle struct {
		Categories map[string][]wireField `json:"categories"`
	}
	h.must(200, "GET", "/context/context", unbound, nil, &bundle)
	if len(bundle.Categories["work"]) != 1 {
		t.Fatalf("a read naming no purpose, token bound to none, one grant = %+v; want it read under marketing", bundle.Categories)
	}
	h.must(200, "GET", "/context/fields/work.slogan", unbound, nil, nil)
	h.grant("ads", "research", "read", map[string]any{"keys": []string{"work.slogan"}})
	h.constraint(403, "purpose_required", "GET", "/context/context", unbound, nil)
	h.constraint(403, "purpose_required", "GET", "/context/fields/work.slogan", unbound, nil)

	bound := strings.TrimSpace(h.phcOK("token", "--consumer", "ads", "--secret", "secret-of-ads-0123456789", "--scope", "*", "--purpose", "marketing"))
	h.must(200, "GET", "/context/context", bound, nil, &bundle)
	if len(bundle.Categories["work"]) != 1 || bundle.Categories["work"][0].Value != "engines first" {
		t.Fatalf("a read under the token's purpose = %+v", bundle.Categories)
	}
	h.must(200, "GET", "/context/fields/work.slogan?purpose=marketing", bound, nil, nil)
	raw := h.constraint(403, "scope_exceeded", "GET", "/context/fields/work.slogan?purpose=research", bound, nil)
	if strings.Contains(string(raw), "engines") {
		t.Fatalf("the refusal shows the value: %s", raw)
	}
	var receipts struct {
		Receipts []struct {
			Operation string `json:"operation"`
			Recipient string `json:"recipient"`
			Purpose   string `json:"purpose"`
			Decision  string `json:"decision"`
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &receipts)
	var allows int
	for _, r := range receipts.Receipts {
		if r.Recipient == "ads" && r.Decision == "allow" && strings.HasPrefix(r.Operation, "field.") {
			allows++
			if r.Purpose != "marketing" {
				t.Errorf("an allow receipt names purpose %q: %+v", r.Purpose, r)
			}
		}
	}
	if allows != 4 {
		t.Fatalf("%d allow receipts for ads; want 4", allows)
	}
}

// TestNoTrainingByCategory: no_training tests the grant's purpose
// category, never its purpose text — a grant for fine_tuning or
// model-training in the model_training category reads nothing of it, nor
// does a grant that names no category; phc grant --category sets it and
// phc grant list shows it.
func TestNoTrainingByCategory(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	var p struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "notes.diary", "value": "private thoughts",
		"kind": "note", "assertion": "reported", "restrictions": []map[string]any{{"type": "no_training", "mandatory": true}}}, &p)
	h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	app := h.consumer("lab", "*", "read")
	for _, g := range []struct{ purpose, category string }{
		{"fine_tuning", "model_training"}, {"model-training", "model_training"}, {"journaling", "personalisation"}, {"misc", ""},
	} {
		args := []string{"grant", "--to", "lab", "--purpose", g.purpose, "--keys", "notes.*"}
		if g.category != "" {
			args = append(args, "--category", g.category)
		}
		h.phcOK(args...)
	}
	for _, c := range []struct {
		purpose string
		want    int
	}{{"fine_tuning", 0}, {"model-training", 0}, {"misc", 0}, {"journaling", 1}} {
		var ctx contextAnswer
		h.must(200, "GET", "/phc/v1/context?purpose="+c.purpose, app, nil, &ctx)
		if len(ctx.Claims) != c.want {
			t.Errorf("a no_training claim under a grant for %s: %d claims; want %d", c.purpose, len(ctx.Claims), c.want)
		}
	}
	if out := h.phcOK("grant", "list"); !strings.Contains(out, "purpose fine_tuning (model_training)") || !strings.Contains(out, "purpose misc (unspecified)") {
		t.Fatalf("phc grant list = %s", out)
	}
	h.constraint(400, "schema_violation", "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "lab"}, "purpose": "ads", "purpose_category": "advertising",
		"operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"*"}}, "expires_at": "2099-01-01T00:00:00Z"})
}

// TestReviewShowsConflicts: the review queue shows, for a proposal whose
// key already has an active claim, that claim's value and how the proposal
// differs from it, flagged as a conflict; the CLI prints it with the
// evidence; several proposals are confirmed or rejected in one write.
func TestReviewShowsConflicts(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/context/fields/prefs.coffee", h.owner, map[string]any{"value": map[string]any{"beans": "arabica", "milk": "oat"}}, nil)
	tutor := h.consumer("barista", "prefs.*", "write")
	h.grant("barista", "assist", "contribute", map[string]any{"keys": []string{"prefs.*"}})
	propose := func(key string, value any) string {
		t.Helper()
		var p struct {
			ID string `json:"proposal_id"`
		}
		h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{"key": key, "value": value, "kind": "preference",
			"assertion": "reported", "evidence": []map[string]string{{"ref": "chat://barista/42"}}}, &p)
		return p.ID
	}
	conflicting := propose("prefs.coffee", map[string]any{"beans": "robusta", "sugar": true})
	fresh := propose("prefs.tea", "green")
	var queue struct {
		Proposals []struct {
			ID      string `json:"proposal_id"`
			Current *struct {
				Version int            `json:"version"`
				Value   map[string]any `json:"value"`
			} `json:"current"`
			Diff []struct {
				Path string          `json:"path"`
				From json.RawMessage `json:"from"`
				To   json.RawMessage `json:"to"`
			} `json:"diff"`
			Conflict bool `json:"conflict"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &queue)
	if len(queue.Proposals) != 2 {
		t.Fatalf("queue = %+v", queue)
	}
	for _, p := range queue.Proposals {
		switch p.ID {
		case conflicting:
			if !p.Conflict || p.Current == nil || p.Current.Value["beans"] != "arabica" || len(p.Diff) != 3 ||
				p.Diff[0].Path != "/beans" || string(p.Diff[0].From) != `"arabica"` || string(p.Diff[0].To) != `"robusta"` ||
				p.Diff[1].Path != "/milk" || p.Diff[1].To != nil || p.Diff[2].Path != "/sugar" || p.Diff[2].From != nil {
				t.Fatalf("the conflicting proposal = %+v", p)
			}
		case fresh:
			if p.Conflict || p.Current != nil || p.Diff != nil {
				t.Fatalf("a proposal for a new key = %+v", p)
			}
		}
	}
	out := h.phcOK("review")
	for _, want := range []string{"CONFLICT: prefs.coffee already has", `diff: ~ /beans "arabica" -> "robusta"`, `diff: - /milk "oat"`,
		"diff: + /sugar true", "evidence: chat://barista/42"} {
		if !strings.Contains(out, want) {
			t.Fatalf("phc review lacks %q:\n%s", want, out)
		}
	}
	out = h.phcOK("review", "reject", conflicting, fresh, "--reason", "not now")
	if !strings.Contains(out, "2 of 2 rejected in one write") {
		t.Fatalf("bulk reject = %s", out)
	}
	a, b := propose("prefs.juice", "orange"), propose("prefs.water", "still")
	out = h.phcOK("review", "confirm", a, b)
	if !strings.Contains(out, "2 of 2 confirmed in one write") {
		t.Fatalf("bulk confirm = %s", out)
	}
	if code, _, _ := h.phc("review", "confirm", a, "prp_AAAAAAAAAAAAAAAAAAAAAAAAAA"); code == 0 {
		t.Fatal("a bulk confirm of decided and unknown proposals succeeded")
	}
}

// TestAutoApprovedGrantIsNotTheOwnersWord: a grant the auto_grant policy
// made from an app's request carries the app's own purpose and category,
// which meet no purpose_only restriction and prove nothing to no_training.
func TestAutoApprovedGrantIsNotTheOwnersWord(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	for key, r := range map[string]map[string]any{
		"work.plans": {"type": "purpose_only", "mandatory": true, "params": map[string]any{"purposes": []string{"tax"}}},
		"work.diary": {"type": "no_training", "mandatory": true},
	} {
		var p struct {
			ID string `json:"proposal_id"`
		}
		h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": key, "value": "secret " + key, "kind": "note",
			"assertion": "reported", "restrictions": []any{r}}, &p)
		h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	}
	app := h.consumer("guesser", "work.*", "read")
	for _, c := range []struct{ key, purpose, category string }{{"work.plans", "tax", ""}, {"work.diary", "journaling", "personalisation"}} {
		body := map[string]any{"scope": c.key, "purpose": c.purpose, "duration": "1h"}
		if c.category != "" {
			body["purpose_category"] = c.category
		}
		var req struct {
			Status string `json:"status"`
			Token  string `json:"token"`
		}
		h.must(201, "POST", "/context/requests", app, body, &req)
		if req.Status != "approved" || req.Token == "" {
			t.Fatalf("request %+v = %+v; want approved at once (standard data)", body, req)
		}
		h.constraint(404, "not_found", "GET", "/context/fields/"+c.key+"?purpose="+c.purpose, req.Token, nil)
	}
}

// TestRemovedAppsNamesakeInheritsNothing: an app registered under the name
// of a removed one sees none of its proposals, cannot withdraw them, and
// cannot overwrite what it wrote.
func TestRemovedAppsNamesakeInheritsNothing(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"auto_grant": "standard"}, nil)
	first := h.consumer("app", "prefs.*", "read-write")
	h.grant("app", "assist", "contribute", map[string]any{"keys": []string{"prefs.*"}})
	var p struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", first, map[string]any{"key": "prefs.secret", "value": "x", "kind": "note", "assertion": "reported"}, &p)
	if status, raw := h.do("PUT", "/context/fields/prefs.color", first, map[string]any{"value": "red"}); status != 200 {
		t.Fatalf("the first app's own new field = %d %s", status, raw)
	}
	h.must(200, "GET", "/phc/v1/proposals/"+p.ID, first, nil, nil)
	if status, raw := h.do("DELETE", "/context/consumers/app", h.owner, nil); status != 200 && status != 204 {
		t.Fatalf("removing the app = %d %s", status, raw)
	}
	h.constraint(401, "unauthenticated", "GET", "/phc/v1/proposals/"+p.ID, first, nil)
	second := h.consumer("app", "prefs.*", "read-write") // another app, the same name
	h.constraint(404, "not_found", "GET", "/phc/v1/proposals/"+p.ID, second, nil)
	h.constraint(404, "not_found", "POST", "/phc/v1/proposals/"+p.ID+"/withdraw", second, nil)
	var w struct {
		Status string `json:"status"`
	}
	h.must(202, "PUT", "/context/fields/prefs.color", second, map[string]any{"value": "blue"}, &w)
	if w.Status != "pending" {
		t.Fatalf("the namesake's write over the removed app's field = %+v; want pending", w)
	}
	var f wireField
	h.must(200, "GET", "/context/fields/prefs.color", h.owner, nil, &f)
	if f.Value != "red" {
		t.Fatalf("the removed app's value became %v", f.Value)
	}
}
