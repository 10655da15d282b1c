package cli

import (
	"slices"
	"strings"
	"testing"
)

type wireField struct {
	ID          string `json:"id"`
	Category    string `json:"category"`
	FieldName   string `json:"field_name"`
	Value       any    `json:"value"`
	Sensitivity string `json:"sensitivity"`
	Version     int    `json:"version"`
	WrittenBy   string `json:"written_by"`
	ClaimID     string `json:"claim_id"`
	UpdatedAt   string `json:"updated_at"`
	Revision    uint64 `json:"revision"`
}

// TestOwnerFields: the owner's side of the PCP fields facade over a real
// daemon — ids of any depth, versions kept, discovery without values,
// categories, tiers, deletion, and a restart.
func TestOwnerFields(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	const id = "addresses.current.city"
	var f wireField
	h.must(200, "PUT", "/context/fields/"+id, h.owner, map[string]any{"value": "Lisbon"}, &f)
	if f.ID != id || f.Category != "addresses" || f.FieldName != "current.city" || f.Value != "Lisbon" ||
		f.Version != 1 || f.WrittenBy != "user" || f.Sensitivity != "sensitive" || f.UpdatedAt == "" {
		t.Fatalf("PUT field = %+v", f)
	}
	h.must(200, "PUT", "/context/fields/"+id, h.owner, map[string]any{"value": "Porto"}, &f)
	if f.Version != 2 || f.Value != "Porto" {
		t.Fatalf("second PUT = %+v; want version 2", f)
	}
	var versions struct {
		Claims []struct {
			Value  any    `json:"value"`
			Status string `json:"status"`
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims/"+f.ClaimID+"/versions", h.owner, nil, &versions)
	if len(versions.Claims) != 2 || versions.Claims[0].Value != "Lisbon" || versions.Claims[0].Status != "superseded" {
		t.Fatalf("the previous value is not kept: %+v", versions.Claims)
	}
	h.must(200, "PUT", "/context/fields/preferences.tea", h.owner, map[string]any{"value": "earl grey", "sensitivity": "public"}, nil)
	h.must(200, "PUT", "/context/fields/preferences.coffee", h.owner, map[string]any{"value": map[string]any{"beans": "arabica"}}, nil)

	var list struct {
		ContextVersion string      `json:"context_version"`
		Fields         []wireField `json:"fields"`
	}
	raw := h.must(200, "GET", "/context/fields", h.owner, nil, &list)
	if list.ContextVersion != "0.1.0" || len(list.Fields) != 3 || strings.Contains(string(raw), "Porto") || strings.Contains(string(raw), "arabica") {
		t.Fatalf("discovery = %s; want three fields and no values", raw)
	}
	var cat struct {
		Category string      `json:"category"`
		Fields   []wireField `json:"fields"`
	}
	h.must(200, "GET", "/context/fields/category/preferences", h.owner, nil, &cat)
	if len(cat.Fields) != 2 || cat.Fields[0].ID != "preferences.coffee" || cat.Fields[1].Value != "earl grey" {
		t.Fatalf("category = %+v", cat)
	}
	var bundle struct {
		Categories map[string][]wireField `json:"categories"`
	}
	h.must(200, "GET", "/context/context", h.owner, nil, &bundle)
	if len(bundle.Categories) != 2 || len(bundle.Categories["preferences"]) != 2 || bundle.Categories["addresses"][0].Value != "Porto" {
		t.Fatalf("context = %+v", bundle)
	}

	h.must(200, "PUT", "/context/sensitivity/preferences.tea", h.owner, map[string]string{"tier": "sensitive"}, &f)
	if f.Sensitivity != "sensitive" || f.Value != "earl grey" || f.Version != 2 {
		t.Fatalf("sensitivity change = %+v", f)
	}
	h.constraint(400, "invalid_request", "PUT", "/context/sensitivity/preferences.tea", h.owner, map[string]string{"tier": "secret"})
	h.constraint(404, "not_found", "PUT", "/context/sensitivity/preferences.none", h.owner, map[string]string{"tier": "public"})

	// A confirmed proposal about the owner is a field too, written by its app.
	tutor := h.consumer("tutor", "learning.*", "write")
	h.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
	var p struct {
		ProposalID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{"key": scheduleKey, "value": scheduleValue, "kind": "goal", "assertion": "reported"}, &p)
	h.must(200, "POST", "/phc/v1/proposals/"+p.ProposalID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	h.must(200, "GET", "/context/fields/"+scheduleKey, h.owner, nil, &f)
	if f.WrittenBy != "tutor" || f.Value != scheduleValue {
		t.Fatalf("field from a proposal = %+v", f)
	}

	for _, bad := range []string{"Addresses.City", "a..b", "a.", strings.Repeat("a.", 20) + "a"} {
		h.constraint(400, "invalid_request", "GET", "/context/fields/"+bad, h.owner, nil)
	}
	h.constraint(400, "invalid_request", "PUT", "/context/fields/a.b", h.owner, map[string]any{"sensitivity": "public"})
	h.constraint(400, "invalid_request", "PUT", "/context/fields/a.b", h.owner, map[string]any{"value": 1, "extra": 2})
	h.constraint(404, "not_found", "GET", "/context/fields/nothing.here", h.owner, nil)
	h.constraint(403, "mode_denied", "GET", "/context/fields", tutor, nil)

	var del struct{ Revision uint64 }
	h.must(200, "DELETE", "/context/fields/preferences.coffee", h.owner, nil, &del)
	h.constraint(404, "not_found", "GET", "/context/fields/preferences.coffee", h.owner, nil)
	h.constraint(404, "not_found", "DELETE", "/context/fields/preferences.coffee", h.owner, nil)

	dir := h.dir
	h.stop()
	h = startHarness(t, dir)
	h.must(200, "GET", "/context/fields/"+id, h.owner, nil, &f)
	if f.Value != "Porto" || f.Version != 2 {
		t.Fatalf("after restart = %+v", f)
	}
	var st struct {
		FieldCount int            `json:"field_count"`
		Categories map[string]int `json:"categories"`
	}
	h.must(200, "GET", "/context/status", h.owner, nil, &st)
	if st.FieldCount != 3 || st.Categories["preferences"] != 1 || st.Categories["learning"] != 1 {
		t.Fatalf("status = %+v", st)
	}
}

// TestConsumerFields: what a consumer reads through the PCP facade — the
// owner's auto_grant tiers, its grants, its token's scope — with hidden
// fields answering exactly like missing ones.
func TestConsumerFields(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	for id, body := range map[string]map[string]any{
		"preferences.tea":    {"value": "earl grey", "sensitivity": "public"},
		"identity.full_name": {"value": "Ada Lovelace"},
		"identity.dob":       {"value": "1815-12-10"},
		"work.notes":         {"value": "engines"},
	} {
		h.must(200, "PUT", "/context/fields/"+id, h.owner, body, nil)
	}
	app := h.consumer("app", "*", "read")
	keys := func(token, path string) []string {
		t.Helper()
		var list struct {
			Fields []wireField `json:"fields"`
		}
		raw := h.must(200, "GET", path, token, nil, &list)
		if strings.Contains(string(raw), "Ada") || strings.Contains(string(raw), "1815") {
			t.Fatalf("discovery %s shows a value: %s", path, raw)
		}
		var ks []string
		for _, f := range list.Fields {
			ks = append(ks, f.ID)
		}
		return ks
	}
	if got := strings.Join(keys(app, "/context/fields"), ","); got != "preferences.tea" {
		t.Fatalf("default auto_grant (public): app discovers %q", got)
	}
	var f wireField
	h.must(200, "GET", "/context/fields/preferences.tea", app, nil, &f)
	if f.Value != "earl grey" {
		t.Fatalf("public field = %+v", f)
	}
	hidden := h.constraint(404, "not_found", "GET", "/context/fields/identity.full_name", app, nil)
	absent := h.constraint(404, "not_found", "GET", "/context/fields/identity.nickname", app, nil)
	if string(hidden) != string(absent) {
		t.Fatalf("hidden %q differs from absent %q", hidden, absent)
	}

	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "standard"}, nil)
	if got := strings.Join(keys(app, "/context/fields"), ","); got != "identity.full_name,preferences.tea,work.notes" {
		t.Fatalf("auto_grant standard: app discovers %q (never the sensitive dob)", got)
	}
	narrow := h.token("app", "secret-of-app-0123456789", "identity.*", "read")
	if got := strings.Join(keys(narrow, "/context/fields"), ","); got != "identity.full_name" {
		t.Fatalf("token scoped identity.*: discovers %q", got)
	}
	var bundle struct {
		Categories map[string][]wireField `json:"categories"`
	}
	h.must(200, "GET", "/context/context", narrow, nil, &bundle)
	if len(bundle.Categories) != 1 || len(bundle.Categories["identity"]) != 1 || bundle.Categories["identity"][0].Value != "Ada Lovelace" {
		t.Fatalf("context for identity.* = %+v", bundle)
	}
	h.constraint(403, "approval_required", "GET", "/context/fields/identity.dob", app, nil) // sensitive: per-request approval

	// With no auto_grant, a grant decides, for its purpose.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "none"}, nil)
	if got := keys(app, "/context/fields"); len(got) != 0 {
		t.Fatalf("auto_grant none: app discovers %q", got)
	}
	h.grant("app", "assist", "read", map[string]any{"keys": []string{"work.*"}})
	// A read that names no purpose is decided under its token's; one bound
	// to none reads under the purpose of the one grant that serves it, and
	// where grants of two purposes could, names one (never the union of
	// the app's grants).
	if got := strings.Join(keys(app, "/context/fields"), ","); got != "work.notes" {
		t.Fatalf("with a work.* grant for assist, a token bound to no purpose discovers %q", got)
	}
	h.grant("app", "letters", "read", map[string]any{"keys": []string{"work.notes"}})
	h.constraint(403, "purpose_required", "GET", "/context/fields", app, nil)
	assist := h.tokenFor("app", "secret-of-app-0123456789", "*", "read", "assist")
	if got := strings.Join(keys(assist, "/context/fields"), ","); got != "work.notes" {
		t.Fatalf("with a work.* grant: discovers %q", got)
	}
	h.must(200, "GET", "/context/fields/work.notes?purpose=assist", app, nil, nil)
	h.constraint(404, "not_found", "GET", "/context/fields/work.notes?purpose=marketing", app, nil)
	h.constraint(403, "scope_exceeded", "GET", "/context/fields/work.notes?purpose=marketing", assist, nil)
	var cat struct {
		Fields []wireField `json:"fields"`
	}
	h.must(200, "GET", "/context/fields/category/work", assist, nil, &cat)
	if len(cat.Fields) != 1 || cat.Fields[0].Value != "engines" {
		t.Fatalf("category work = %+v", cat)
	}

	// A value another app wrote comes with a warning naming it.
	tutor := h.consumer("tutor", "work.*", "write")
	h.grant("tutor", "assist", "contribute", map[string]any{"keys": []string{"work.*"}})
	var p struct {
		ProposalID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{"key": "work.notes", "value": "looms", "kind": "note", "assertion": "reported"}, &p)
	h.must(200, "POST", "/phc/v1/proposals/"+p.ProposalID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	var warned struct {
		wireField
		Warnings []string `json:"warnings"`
	}
	h.must(200, "GET", "/context/fields/work.notes", assist, nil, &warned)
	if warned.Value != "looms" || len(warned.Warnings) != 1 || !strings.Contains(warned.Warnings[0], "tutor") {
		t.Fatalf("a value written by another app = %+v", warned)
	}

	var recs struct {
		Receipts []struct {
			Operation, Decision string
			Records             []string
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1", h.owner, nil, &recs)
	if r := recs.Receipts[0]; r.Operation != "field.get" || r.Decision != "allow" || len(r.Records) < 1 {
		t.Fatalf("last receipt = %+v; want the field read", r)
	}
	h.constraint(400, "invalid_request", "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "critical"})
	h.constraint(403, "session_required", "PUT", "/phc/v1/settings", app, map[string]string{"auto_grant": "standard"})
}

// TestAgentFieldWrites: an app's PUT of a field — mode, scope, user-only
// fields, authority, auto-confirmation where PCP auto-approves, consent for
// sensitive fields, and the previous value kept.
func TestAgentFieldWrites(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	app := h.consumer("app", "*", "read-write")
	reader := h.token("app", "secret-of-app-0123456789", "*", "read")
	narrow := h.token("app", "secret-of-app-0123456789", "work.*", "write")

	// Under the default auto_grant (public) a standard write is not
	// auto-approved: it is a proposal, and the answer says so.
	var answer writeAnswer
	h.must(202, "PUT", "/context/fields/preferences.shade", app, map[string]any{"value": "teal"}, &answer)
	if answer.Status != "pending" || !strings.HasPrefix(answer.ProposalID, "prp_") {
		t.Fatalf("a standard write under auto_grant public = %+v; want pending with a proposal_id", answer)
	}
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "standard"}, nil)
	// Where PCP auto-approves, and the app reads what it writes: committed.
	answer = writeAnswer{}
	h.must(200, "PUT", "/context/fields/preferences.color", app, map[string]any{"value": "blue"}, &answer)
	if answer.Status != "committed" || answer.ProposalID != "" || answer.Revision == 0 {
		t.Fatalf("write of a new field = %+v; want committed with a revision", answer)
	}
	var f wireField
	h.must(200, "GET", "/context/fields/preferences.color", app, nil, &f)
	if f.WrittenBy != "app" || f.Version != 1 || f.Value != "blue" {
		t.Fatalf("auto-approved write = %+v", f)
	}
	// Now the app can read it, and its next write answers with the field.
	h.must(200, "PUT", "/context/fields/preferences.color", app, map[string]any{"value": "green"}, &f)
	var versions struct {
		Claims []struct {
			Value        any `json:"value"`
			Status       string
			Confirmation struct{ Status, By string }
			Producer     struct {
				Authenticated struct{ Kind, ID string }
			}
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims/"+f.ClaimID+"/versions", h.owner, nil, &versions)
	if len(versions.Claims) != 2 || versions.Claims[0].Value != "blue" || versions.Claims[0].Status != "superseded" ||
		versions.Claims[1].Confirmation.By != "auto_grant" || versions.Claims[1].Producer.Authenticated.ID != "app" {
		t.Fatalf("versions after two app writes = %+v", versions.Claims)
	}

	h.constraint(403, "user_only_write", "PUT", "/context/fields/identity.ssn", app, map[string]any{"value": "078-05-1120"})
	h.constraint(403, "mode_denied", "PUT", "/context/fields/preferences.color", reader, map[string]any{"value": "red"})
	h.constraint(403, "scope_exceeded", "PUT", "/context/fields/preferences.color", narrow, map[string]any{"value": "red"})

	// A sensitive write waits for the owner's consent, with or without a
	// contribute grant.
	h.must(202, "PUT", "/context/fields/health.allergy", app, map[string]any{"value": "peanuts"}, &answer)
	if answer.Status != "pending" || !strings.HasPrefix(answer.ProposalID, "prp_") {
		t.Fatalf("a sensitive write = %+v; want pending with a proposal_id", answer)
	}
	h.grant("app", "assist", "contribute", map[string]any{"keys": []string{"identity.*"}})
	h.must(202, "PUT", "/context/fields/identity.dob", app, map[string]any{"value": "1815-12-10"}, &answer)
	h.constraint(404, "not_found", "GET", "/context/fields/identity.dob", h.owner, nil)
	var review struct {
		Proposals []struct {
			ID  string `json:"proposal_id"`
			Key string `json:"key"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &review)
	if i := slices.IndexFunc(review.Proposals, func(p struct {
		ID  string `json:"proposal_id"`
		Key string `json:"key"`
	}) bool {
		return p.ID == answer.ProposalID
	}); len(review.Proposals) != 3 || i < 0 || review.Proposals[i].Key != "identity.dob" {
		t.Fatalf("review = %+v; want the three writes waiting, the sensitive one among them", review)
	}
	h.must(200, "POST", "/phc/v1/proposals/"+answer.ProposalID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	h.must(200, "GET", "/context/fields/identity.dob", h.owner, nil, &f)
	if f.Value != "1815-12-10" || f.WrittenBy != "app" || f.Sensitivity != "sensitive" {
		t.Fatalf("confirmed sensitive write = %+v", f)
	}
	// Raising the tier in the write itself also asks for consent.
	h.must(202, "PUT", "/context/fields/identity.nickname", app, map[string]any{"value": "Countess", "sensitivity": "sensitive"}, nil)
}
