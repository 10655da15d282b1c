package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestGrantNarrow narrows a grant over a real daemon, through the API and
// through phc grant narrow: the recipient reads less after each narrowing,
// the grant keeps its id, and anything wider is refused.
func TestGrantNarrow(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "work", "name": "Work"}, nil)
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "home", "name": "Home"}, nil)
	h.ownerClaim("contact.email", "ada@example.org", "", "work")
	h.ownerClaim("contact.phone", "+351 000 000", "", "home")
	h.ownerClaim("name.display", "Ada", "", "work", "home")
	app := h.consumer("app", "*", "read")
	id := h.grantRouted("app", "assist", "", map[string]any{"keys": []string{"contact.*", "name.display"}, "personas": []string{"work", "home"}})

	reads := func() []string {
		t.Helper()
		var c wireContext
		h.must(200, "GET", "/phc/v1/context?purpose=assist", app, nil, &c)
		return c.keys()
	}
	want := func(step string, keys ...string) {
		t.Helper()
		if got := reads(); !slices.Equal(got, keys) {
			t.Errorf("%s: the app reads %v; want %v", step, got, keys)
		}
	}
	want("before", "contact.email", "contact.phone", "name.display")

	var out struct {
		Grant struct {
			ID        string `json:"id"`
			Selectors struct {
				Personas []string `json:"personas"`
			} `json:"selectors"`
		} `json:"grant"`
		Revision uint64 `json:"revision"`
	}
	h.must(200, "POST", "/phc/v1/grants/"+id+"/narrow", h.owner, map[string]any{"selectors": map[string]any{"personas": []string{"work"}}}, &out)
	if out.Grant.ID != id || !slices.Equal(out.Grant.Selectors.Personas, []string{"work"}) || out.Revision == 0 {
		t.Errorf("narrow answered %+v; want grant %s in persona work", out, id)
	}
	want("after narrowing to work", "contact.email", "name.display")

	if got := h.phcOK("grant", "narrow", id, "--keys", "contact.email"); !strings.Contains(got, "narrowed "+id) || !strings.Contains(got, "keys [contact.email]") {
		t.Errorf("phc grant narrow = %q", got)
	}
	want("after phc grant narrow --keys contact.email", "contact.email")

	// Wider is refused, through the API and the CLI, and changes nothing.
	for _, body := range []map[string]any{
		{"selectors": map[string]any{"keys": []string{"contact.*"}}},
		{"selectors": map[string]any{"personas": []string{"work", "home"}}},
		{"operations": []string{"read", "share"}},
		{"expires_at": "2100-01-01T00:00:00Z"},
	} {
		raw := h.constraint(400, "invalid_request", "POST", "/phc/v1/grants/"+id+"/narrow", h.owner, body)
		if !strings.Contains(string(raw), "can only be narrowed") {
			t.Errorf("widening with %v answered %s; want it to say what may be narrowed", body, raw)
		}
	}
	if code, _, errs := h.phc("grant", "narrow", id, "--keys", "*"); code != 1 || !strings.Contains(errs, "can only be narrowed") {
		t.Errorf("phc grant narrow --keys '*' = exit %d, %q; want a refusal saying what may be narrowed", code, errs)
	}
	if code, _, errs := h.phc("grant", "narrow", id); code != 2 || !strings.Contains(errs, "at least one term") {
		t.Errorf("phc grant narrow with no term = exit %d, %q; want a usage error", code, errs)
	}
	want("after refusals", "contact.email")

	// Only the owner narrows; the app's own token cannot.
	if status, _ := h.do("POST", "/phc/v1/grants/"+id+"/narrow", app, map[string]any{"operations": []string{"read"}}); status < 400 {
		t.Errorf("the app narrowing its own grant = %d; want a refusal", status)
	}
	if got := h.phcOK("grant", "list"); !strings.Contains(got, id) || !strings.Contains(got, "keys [contact.email] personas [work]") || !strings.Contains(got, "(narrowed ") {
		t.Errorf("grant list = %q; want the narrowed terms", got)
	}
	if ops := h.receiptOps(); !slices.Contains(ops, "grant.narrow") {
		t.Errorf("receipts %v; want a grant.narrow", ops)
	}
	h.phcOK("revoke", id)
	h.constraint(409, "conflict", "POST", "/phc/v1/grants/"+id+"/narrow", h.owner, map[string]any{"operations": []string{"read"}})
}
