package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Personas edited and removed, their preferences and guardrails, and
// claims disputed or retracted (issue 12), over a real daemon.

// ownerClaim makes an active claim of the owner's, in personas, and returns
// its id.
func (h *harness) ownerClaim(key, value, sensitivity string, personas ...string) string {
	h.t.Helper()
	var prp struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": key, "value": value, "kind": "fact", "assertion": "reported"}, &prp)
	var out struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	confirm := map[string]any{"personas": personas}
	if sensitivity != "" {
		confirm["edits"] = map[string]any{"sensitivity": sensitivity}
	}
	h.must(200, "POST", "/phc/v1/proposals/"+prp.ID+"/confirm", h.owner, confirm, &out)
	return out.Claim.ID
}

// wireContext is what a recipient's context read answers.
type wireContext struct {
	Claims []struct {
		ID           string `json:"id"`
		Key          string `json:"key"`
		Status       string `json:"status"`
		Confirmation struct {
			Status string `json:"status"`
		} `json:"confirmation"`
	} `json:"claims"`
	Persona *struct {
		ID          string `json:"id"`
		Preferences struct {
			Advisory bool     `json:"advisory"`
			Items    []string `json:"items"`
		} `json:"preferences"`
	} `json:"persona"`
}

func (c wireContext) keys() []string {
	out := []string{}
	for _, cl := range c.Claims {
		out = append(out, cl.Key)
	}
	slices.Sort(out)
	return out
}

// grantRouted is harness.grant with a route.
func (h *harness) grantRouted(consumer, purpose, route string, selectors map[string]any) string {
	h.t.Helper()
	body := map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": consumer}, "purpose": purpose,
		"operations": []string{"read"}, "selectors": selectors, "expires_at": "2099-01-01T00:00:00Z"}
	if route != "" {
		body["route"] = route
	}
	// no_training tests the category: the purpose "training" is model
	// training, every other one here personalisation.
	body["purpose_category"] = "personalisation"
	if purpose == "training" {
		body["purpose_category"] = "model_training"
	}
	var g struct {
		ID string `json:"id"`
	}
	h.must(201, "POST", "/phc/v1/grants", h.owner, body, &g)
	return g.ID
}

// receiptOps returns the operations of the newest receipts.
func (h *harness) receiptOps() []string {
	h.t.Helper()
	var out struct {
		Receipts []struct {
			Operation string   `json:"operation"`
			Records   []string `json:"records"`
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=50", h.owner, nil, &out)
	var ops []string
	for _, r := range out.Receipts {
		ops = append(ops, r.Operation)
	}
	return ops
}

// checkOK asserts that GET /phc/v1/check reports the vault consistent.
func (h *harness) checkOK() {
	h.t.Helper()
	var rep struct {
		OK bool `json:"ok"`
	}
	raw := h.must(200, "GET", "/phc/v1/check", h.owner, nil, &rep)
	if !rep.OK {
		h.t.Fatalf("check: %s", raw)
	}
}

// TestPersonaRenameAndSet: the owner renames a persona and replaces its
// preferences and guardrails; the id stays, so do its claims; unknown
// guardrail types and unknown personas are refused; the edit is receipted.
func TestPersonaRenameAndSet(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "learning", "name": "Learning"}, nil)
	id := h.ownerClaim("learning.spanish.schedule", "twice a week", "", "learning")

	var upd struct {
		Persona struct {
			ID          string            `json:"id"`
			Name        string            `json:"name"`
			Preferences []string          `json:"preferences"`
			Guardrails  []json.RawMessage `json:"guardrails"`
		} `json:"persona"`
		Revision uint64 `json:"revision"`
	}
	h.must(200, "PUT", "/phc/v1/personas/learning", h.owner, map[string]any{"name": "Languages"}, &upd)
	if upd.Persona.ID != "learning" || upd.Persona.Name != "Languages" || upd.Revision == 0 {
		t.Fatalf("rename = %+v", upd)
	}
	h.must(200, "PUT", "/phc/v1/personas/learning", h.owner, map[string]any{
		"preferences": []string{"short answers"},
		"guardrails":  []any{map[string]any{"type": "no_training"}, map[string]any{"type": "max_sensitivity", "params": map[string]any{"tier": "standard"}}},
	}, &upd)
	if upd.Persona.Name != "Languages" || !slices.Equal(upd.Persona.Preferences, []string{"short answers"}) || len(upd.Persona.Guardrails) != 2 {
		t.Fatalf("set = %+v", upd)
	}
	var list struct {
		Personas []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"personas"`
	}
	h.must(200, "GET", "/phc/v1/personas", h.owner, nil, &list)
	if len(list.Personas) != 1 || list.Personas[0].Name != "Languages" {
		t.Fatalf("personas = %+v", list.Personas)
	}
	var claims struct {
		Claims []struct {
			ID string `json:"id"`
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims?persona=learning", h.owner, nil, &claims)
	if len(claims.Claims) != 1 || claims.Claims[0].ID != id {
		t.Fatalf("claims in learning after the edit = %+v", claims.Claims)
	}

	for _, tc := range []struct {
		name, path       string
		body             any
		status           int
		constraint, viol string
	}{
		{"unknown guardrail type", "/phc/v1/personas/learning", map[string]any{"guardrails": []any{map[string]any{"type": "be_nice"}}}, 400, "schema_violation", "/guardrails/0/type"},
		{"free-text guardrail", "/phc/v1/personas/learning", map[string]any{"guardrails": []any{"no personal data"}}, 400, "schema_violation", "/guardrails/0"},
		{"purpose_only without purposes", "/phc/v1/personas/learning", map[string]any{"guardrails": []any{map[string]any{"type": "purpose_only"}}}, 400, "schema_violation", "/guardrails/0/params"},
		{"empty update", "/phc/v1/personas/learning", map[string]any{}, 400, "schema_violation", ""},
		{"id is not editable", "/phc/v1/personas/learning", map[string]any{"id": "other"}, 400, "schema_violation", "/id"},
		{"unknown persona", "/phc/v1/personas/nope", map[string]any{"name": "X"}, 404, "not_found", ""},
		{"malformed id", "/phc/v1/personas/Bad%20Id", map[string]any{"name": "X"}, 400, "invalid_request", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := h.constraint(tc.status, tc.constraint, "PUT", tc.path, h.owner, tc.body)
			if tc.viol != "" && !strings.Contains(string(raw), `"path":"`+tc.viol+`"`) {
				t.Errorf("PUT %s = %s; want a violation at %s", tc.path, raw, tc.viol)
			}
		})
	}
	if ops := h.receiptOps(); !slices.Contains(ops, "persona.update") {
		t.Errorf("receipts %v; want persona.update", ops)
	}
}

// TestPersonaPreferencesDelivered: a read that names a persona its grant
// selects receives the persona's preferences, labelled advisory; a read
// naming none, or a persona no grant of its selects, receives none.
func TestPersonaPreferencesDelivered(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "learning", "name": "Learning", "preferences": []string{"short answers", "Spanish examples"}}, nil)
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "work", "name": "Work", "preferences": []string{"formal"}}, nil)
	h.ownerClaim("learning.spanish.schedule", "twice a week", "", "learning")
	tutor := h.consumer("tutor", "*", "read")
	h.grant("tutor", "learning", "read", map[string]any{"personas": []string{"learning"}})

	for _, tc := range []struct {
		name, query string
		want        []string // nil: no persona in the answer
	}{
		{"named persona", "purpose=learning&persona=learning", []string{"short answers", "Spanish examples"}},
		{"no persona named", "purpose=learning", nil},
		{"persona no grant selects", "purpose=learning&persona=work", nil},
		{"another purpose", "purpose=assist&persona=learning", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out wireContext
			h.must(200, "GET", "/phc/v1/context?"+tc.query, tutor, nil, &out)
			switch {
			case tc.want == nil && out.Persona != nil:
				t.Fatalf("context?%s persona = %+v; want none", tc.query, out.Persona)
			case tc.want != nil && (out.Persona == nil || out.Persona.ID != "learning" || !out.Persona.Preferences.Advisory ||
				!slices.Equal(out.Persona.Preferences.Items, tc.want)):
				t.Fatalf("context?%s persona = %+v; want learning, advisory, %v", tc.query, out.Persona, tc.want)
			}
		})
	}
}

// TestPersonaGuardrailsEnforced: each guardrail type limits reads under its
// persona — through a grant that selects the persona — and not reads of
// the same claims reached by keys alone.
func TestPersonaGuardrailsEnforced(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "learning", "name": "Learning"}, nil)
	pub := h.ownerClaim("learning.spanish.level", "B1", "public", "learning")
	h.ownerClaim("learning.spanish.schedule", "twice a week", "standard", "learning")
	tutor := h.consumer("tutor", "*", "read")
	for _, purpose := range []string{"learning", "training", "assist"} {
		h.grantRouted("tutor", purpose, "", map[string]any{"personas": []string{"learning"}})
	}
	h.grantRouted("tutor", "local", "local", map[string]any{"personas": []string{"learning"}})
	h.grantRouted("tutor", "bykeys", "", map[string]any{"keys": []string{"learning.*"}})
	all := []string{"learning.spanish.level", "learning.spanish.schedule"}

	type read struct {
		query      string
		want       []string // keys served
		constraint string   // or the refusal
	}
	for _, tc := range []struct {
		name      string
		guardrail map[string]any
		reads     []read
	}{
		{"none", nil, []read{
			{query: "purpose=training&persona=learning", want: all},
		}},
		{"no_training", map[string]any{"type": "no_training"}, []read{
			{query: "purpose=training&persona=learning", constraint: "restriction_blocked"},
			{query: "purpose=training", want: []string{}},
			{query: "purpose=learning&persona=learning", want: all},
			{query: "purpose=bykeys", want: all},
		}},
		{"purpose_only", map[string]any{"type": "purpose_only", "params": map[string]any{"purposes": []string{"learning"}}}, []read{
			{query: "purpose=assist&persona=learning", constraint: "restriction_blocked"},
			{query: "purpose=assist", want: []string{}},
			{query: "purpose=learning&persona=learning", want: all},
		}},
		{"local_processing_only", map[string]any{"type": "local_processing_only"}, []read{
			{query: "purpose=learning&persona=learning", constraint: "restriction_blocked"},
			{query: "purpose=local&persona=learning", want: all},
		}},
		{"max_sensitivity", map[string]any{"type": "max_sensitivity", "params": map[string]any{"tier": "public"}}, []read{
			{query: "purpose=learning&persona=learning", want: []string{"learning.spanish.level"}},
			{query: "purpose=learning", want: []string{"learning.spanish.level"}},
			{query: "purpose=bykeys", want: all},
		}},
		{"keys_only", map[string]any{"type": "keys_only", "params": map[string]any{"keys": []string{"learning.spanish.schedule"}}}, []read{
			{query: "purpose=assist&persona=learning", want: []string{"learning.spanish.schedule"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := []any{}
			if tc.guardrail != nil {
				gs = append(gs, tc.guardrail)
			}
			h.must(200, "PUT", "/phc/v1/personas/learning", h.owner, map[string]any{"guardrails": gs}, nil)
			for _, rd := range tc.reads {
				if rd.constraint != "" {
					h.constraint(403, rd.constraint, "GET", "/phc/v1/context?"+rd.query, tutor, nil)
					continue
				}
				var out wireContext
				h.must(200, "GET", "/phc/v1/context?"+rd.query, tutor, nil, &out)
				if got := out.keys(); !slices.Equal(got, rd.want) {
					t.Errorf("guardrail %v: context?%s = %v; want %v", tc.guardrail, rd.query, got, rd.want)
				}
			}
		})
	}

	// A single claim read goes through the same decision.
	h.must(200, "PUT", "/phc/v1/personas/learning", h.owner, map[string]any{"guardrails": []any{map[string]any{"type": "no_training"}}}, nil)
	h.constraint(404, "not_found", "GET", "/phc/v1/claims/"+pub+"?purpose=training", tutor, nil)
	h.must(200, "GET", "/phc/v1/claims/"+pub+"?purpose=learning", tutor, nil, nil)
}

// TestPersonaDelete: removing a persona takes it out of every claim (no
// claim is deleted, no version written) and every grant; a grant that
// selected no other persona is revoked rather than left to cover every
// persona; the graph stays consistent and the removal is receipted.
func TestPersonaDelete(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	for _, p := range []string{"work", "learning"} {
		h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": p, "name": p}, nil)
	}
	both := h.ownerClaim("work.lang", "Spanish", "", "work", "learning")
	onlyWork := h.ownerClaim("work.project", "Atlas", "", "work")
	loose := h.ownerClaim("work.salary", "none of your business", "") // in no persona
	r := h.consumer("reader", "*", "read")
	gWork := h.grantRouted("reader", "assist", "", map[string]any{"keys": []string{"work.*"}, "personas": []string{"work"}})
	gBoth := h.grantRouted("reader", "learn", "", map[string]any{"personas": []string{"work", "learning"}})
	gKeys := h.grantRouted("reader", "keys", "", map[string]any{"keys": []string{"work.lang"}})

	var del struct {
		ID             string   `json:"id"`
		Claims         []string `json:"claims"`
		GrantsNarrowed []string `json:"grants_narrowed"`
		GrantsRevoked  []string `json:"grants_revoked"`
		Revision       uint64   `json:"revision"`
	}
	h.must(200, "DELETE", "/phc/v1/personas/work", h.owner, nil, &del)
	wantClaims := []string{both, onlyWork}
	slices.Sort(wantClaims)
	if !slices.Equal(del.Claims, wantClaims) || !slices.Equal(del.GrantsNarrowed, []string{gBoth}) ||
		!slices.Equal(del.GrantsRevoked, []string{gWork}) || del.Revision == 0 {
		t.Fatalf("DELETE persona = %+v; want claims %v, narrowed [%s], revoked [%s]", del, wantClaims, gBoth, gWork)
	}

	// Claims stay, at version 1, without the persona.
	for _, tc := range []struct {
		id   string
		want []string
	}{{both, []string{"learning"}}, {onlyWork, []string{}}, {loose, []string{}}} {
		var out struct {
			Claim struct {
				Version  int      `json:"version"`
				Status   string   `json:"status"`
				Personas []string `json:"personas"`
			} `json:"claim"`
		}
		h.must(200, "GET", "/phc/v1/claims/"+tc.id, h.owner, nil, &out)
		if out.Claim.Version != 1 || out.Claim.Status != "active" || !slices.Equal(out.Claim.Personas, tc.want) {
			t.Errorf("claim %s after the persona's removal = %+v; want version 1, active, personas %v", tc.id, out.Claim, tc.want)
		}
	}

	// What each grant serves now: nothing widens.
	for _, tc := range []struct {
		purpose string
		want    []string
	}{
		{"assist", []string{}},           // revoked: never every work.* key
		{"learn", []string{"work.lang"}}, // narrowed to learning
		{"keys", []string{"work.lang"}},  // untouched
	} {
		var out wireContext
		h.must(200, "GET", "/phc/v1/context?purpose="+tc.purpose, r, nil, &out)
		if got := out.keys(); !slices.Equal(got, tc.want) {
			t.Errorf("context for %s after the removal = %v; want %v", tc.purpose, got, tc.want)
		}
	}
	var grants struct {
		Grants []struct {
			ID        string  `json:"id"`
			RevokedAt *string `json:"revoked_at"`
			Selectors struct {
				Personas []string `json:"personas"`
			} `json:"selectors"`
		} `json:"grants"`
	}
	h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
	for _, g := range grants.Grants {
		switch g.ID {
		case gWork:
			if g.RevokedAt == nil {
				t.Errorf("grant %s not revoked", g.ID)
			}
		case gBoth:
			if g.RevokedAt != nil || !slices.Equal(g.Selectors.Personas, []string{"learning"}) {
				t.Errorf("grant %s = %+v; want in force, personas [learning]", g.ID, g)
			}
		case gKeys:
			if g.RevokedAt != nil {
				t.Errorf("grant %s revoked", g.ID)
			}
		}
	}

	h.checkOK()
	ops := h.receiptOps()
	for _, op := range []string{"persona.delete", "grant.revoke", "grant.narrow"} {
		if !slices.Contains(ops, op) {
			t.Errorf("receipts %v; want %s", ops, op)
		}
	}

	// Gone: not listed, not editable, not removable again; a persona made
	// again under the id starts empty.
	h.constraint(404, "not_found", "DELETE", "/phc/v1/personas/work", h.owner, nil)
	h.constraint(404, "not_found", "PUT", "/phc/v1/personas/work", h.owner, map[string]any{"name": "W"})
	h.constraint(400, "invalid_request", "POST", "/phc/v1/claims/"+onlyWork+"/personas", h.owner, map[string]any{"personas": []string{"work"}})
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "work", "name": "Work again"}, nil)
	var list struct {
		Claims []json.RawMessage `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims?persona=work", h.owner, nil, &list)
	if len(list.Claims) != 0 {
		t.Errorf("claims in the re-made persona = %d; want 0", len(list.Claims))
	}
	h.checkOK()
}

// TestDisputeAndRetract: a disputed claim is served with
// confirmation.status "disputed" (never as confirmed) until the owner
// withdraws the dispute or corrects it; a retracted claim is served to no
// recipient, stays readable by the owner with status "retracted", leaves
// the graph, and stales what was derived from it.
func TestDisputeAndRetract(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]any{"id": "learning", "name": "Learning"}, nil)
	id := h.ownerClaim("learning.spanish.level", "B1", "", "learning")
	tutor := h.consumer("tutor", "*", "read")
	h.grant("tutor", "learning", "read", map[string]any{"personas": []string{"learning"}})
	var sum struct {
		Summary struct {
			ID string `json:"id"`
		} `json:"summary"`
	}
	h.must(201, "POST", "/phc/v1/summaries", h.owner, map[string]any{"value": "intermediate Spanish", "derived_from": []string{id + "@1"}}, &sum)

	status := func(who string) (ctxStatus, claimStatus string) {
		t.Helper()
		var out wireContext
		h.must(200, "GET", "/phc/v1/context?purpose=learning", tutor, nil, &out)
		if len(out.Claims) != 1 {
			t.Fatalf("%s: context = %+v; want the claim", who, out)
		}
		var one struct {
			Claim struct {
				Confirmation struct {
					Status string `json:"status"`
				} `json:"confirmation"`
			} `json:"claim"`
		}
		h.must(200, "GET", "/phc/v1/claims/"+id+"?purpose=learning", tutor, nil, &one)
		return out.Claims[0].Confirmation.Status, one.Claim.Confirmation.Status
	}
	if a, b := status("before"); a != "confirmed" || b != "confirmed" {
		t.Fatalf("before the dispute: %s, %s; want confirmed", a, b)
	}

	var w struct {
		Claim struct {
			Version      int    `json:"version"`
			Status       string `json:"status"`
			Confirmation struct {
				Status string `json:"status"`
				By     string `json:"by"`
			} `json:"confirmation"`
		} `json:"claim"`
	}
	h.must(200, "POST", "/phc/v1/claims/"+id+"/dispute", h.owner, nil, &w)
	if w.Claim.Version != 1 || w.Claim.Status != "active" || w.Claim.Confirmation.Status != "disputed" || w.Claim.Confirmation.By != "owner" {
		t.Fatalf("dispute = %+v", w.Claim)
	}
	if a, b := status("disputed"); a != "disputed" || b != "disputed" {
		t.Fatalf("disputed claim served as %s, %s; want disputed", a, b)
	}
	var field struct {
		Status string `json:"status"`
	}
	h.must(200, "GET", "/context/fields/learning.spanish.level", h.owner, nil, &field)
	if field.Status != "disputed" {
		t.Errorf("PCP field of a disputed claim: status %q; want disputed", field.Status)
	}
	var sm struct {
		Summary struct {
			Status string `json:"status"`
			Stale  struct {
				Cause string `json:"cause"`
			} `json:"stale"`
		} `json:"summary"`
	}
	h.must(200, "GET", "/phc/v1/summaries/"+sum.Summary.ID, h.owner, nil, &sm)
	if sm.Summary.Status != "stale" || sm.Summary.Stale.Cause != "disputed" {
		t.Errorf("summary of a disputed claim: %+v; want stale", sm.Summary)
	}
	h.constraint(409, "conflict", "POST", "/phc/v1/claims/"+id+"/dispute", h.owner, nil)
	h.must(200, "DELETE", "/phc/v1/claims/"+id+"/dispute", h.owner, nil, &w)
	if a, b := status("withdrawn"); a != "confirmed" || b != "confirmed" {
		t.Fatalf("after withdrawing the dispute: %s, %s; want confirmed", a, b)
	}
	h.constraint(409, "conflict", "DELETE", "/phc/v1/claims/"+id+"/dispute", h.owner, nil)
	h.must(200, "POST", "/phc/v1/claims/"+id+"/dispute", h.owner, nil, nil)
	h.must(200, "PUT", "/phc/v1/claims/"+id, h.owner, map[string]any{"value": "B2"}, nil)
	if a, b := status("corrected"); a != "confirmed" || b != "confirmed" {
		t.Fatalf("after the owner's correction: %s, %s; want confirmed", a, b)
	}

	h.must(200, "POST", "/phc/v1/claims/"+id+"/retract", h.owner, nil, &w)
	if w.Claim.Status != "retracted" {
		t.Fatalf("retract = %+v", w.Claim)
	}
	var out wireContext
	h.must(200, "GET", "/phc/v1/context?purpose=learning", tutor, nil, &out)
	if len(out.Claims) != 0 {
		t.Errorf("context after the retraction = %+v; want nothing", out.Claims)
	}
	h.constraint(404, "not_found", "GET", "/phc/v1/claims/"+id+"?purpose=learning", tutor, nil)
	h.constraint(404, "not_found", "GET", "/context/fields/learning.spanish.level", h.owner, nil)
	h.must(200, "GET", "/phc/v1/claims/"+id, h.owner, nil, &w)
	if w.Claim.Status != "retracted" || w.Claim.Version != 2 {
		t.Errorf("owner's read of a retracted claim = %+v; want status retracted, version 2", w.Claim)
	}
	var versions struct {
		Claims []json.RawMessage `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims/"+id+"/versions", h.owner, nil, &versions)
	if len(versions.Claims) != 2 {
		t.Errorf("versions of a retracted claim = %d; want 2", len(versions.Claims))
	}
	h.constraint(409, "conflict", "POST", "/phc/v1/claims/"+id+"/retract", h.owner, nil)
	for _, call := range []struct{ method, path string }{
		{"POST", "/phc/v1/claims/" + id + "/dispute"},
		{"PUT", "/phc/v1/claims/" + id},
	} {
		h.constraint(404, "not_found", call.method, call.path, h.owner, map[string]any{"value": "C1"})
	}
	h.checkOK()
	ops := h.receiptOps()
	for _, op := range []string{"claim.dispute", "claim.undispute", "claim.retract"} {
		if !slices.Contains(ops, op) {
			t.Errorf("receipts %v; want %s", ops, op)
		}
	}
	// Deleting stays possible.
	h.must(200, "DELETE", "/phc/v1/claims/"+id, h.owner, nil, nil)
	h.checkOK()
}

// TestCLIPersonaAndClaimVerbs: phc persona rename|set|remove and phc claims
// dispute|undispute|retract, against a real daemon.
func TestCLIPersonaAndClaimVerbs(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.phcOK("persona", "add", "work", "Work")
	id := h.ownerClaim("learning.spanish.level", "B1", "", "learning", "work")
	h.phcOK("persona", "rename", "learning", "Languages")
	h.phcOK("persona", "set", "learning", "--preference", "short answers",
		"--guardrail", "no_training", "--guardrail", "purpose_only=learning,assist", "--guardrail", `{"type":"keys_only","params":{"keys":["learning.*"]}}`)
	out := h.phcOK("persona", "list")
	for _, want := range []string{"Languages", "preference (advisory): short answers", `"no_training"`, `"purposes":["learning","assist"]`, `"keys_only"`} {
		if !strings.Contains(out, want) {
			t.Errorf("persona list = %q; want %q in it", out, want)
		}
	}
	h.phcOK("persona", "set", "learning", "--no-guardrails")
	if out := h.phcOK("persona", "list"); strings.Contains(out, "guardrail:") {
		t.Errorf("persona list after --no-guardrails = %q", out)
	}
	for _, args := range [][]string{
		{"persona", "set", "learning"},
		{"persona", "set", "learning", "--guardrail", "no_training=x"},
		{"persona", "set", "learning", "--preference", "a", "--no-preferences"},
		{"persona", "rename", "learning"},
		{"persona", "remove"},
		{"claims", "bogus", id},
	} {
		if code, _, errs := h.phc(args...); code != 2 {
			t.Errorf("phc %q = exit %d (%s); want 2", args, code, errs)
		}
	}
	if code, _, _ := h.phc("persona", "set", "learning", "--guardrail", "be_nice"); code != 1 {
		t.Errorf("phc persona set --guardrail be_nice = exit %d; want 1", code)
	}

	if out := h.phcOK("claims", "dispute", id); !strings.Contains(out, "disputed") {
		t.Errorf("claims dispute = %q", out)
	}
	if out := h.phcOK("claims", "undispute", id); !strings.Contains(out, "confirmed") {
		t.Errorf("claims undispute = %q", out)
	}
	if out := h.phcOK("claims", "retract", id); !strings.Contains(out, "retracted") {
		t.Errorf("claims retract = %q", out)
	}
	out = h.phcOK("persona", "remove", "work")
	if !strings.Contains(out, "persona work removed") || !strings.Contains(out, "1 claims left it") {
		t.Errorf("persona remove = %q", out)
	}
	if out := h.phcOK("persona", "list"); strings.Contains(out, "Work") {
		t.Errorf("persona list after remove = %q", out)
	}
	h.checkOK()
}
