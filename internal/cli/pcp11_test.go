package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestPCPSection11FormFilling runs PCP §11 "Any form, any agent, one
// approval flow" as a client written from the spec does it, over HTTP:
// the agent reads a visa form, identifies the fields it needs, constructs
// a scope request; the owner approves once (critical data: with the
// password, PCP §4's additional verification); the agent reads the fields
// and ends with every value in hand. Critical data comes as a reference by
// default; the answer says how the app obtains the value — the person's
// local vault hook resolves it (Client-Vault v=1), which the test does as
// that hook does — and the owner may instead approve with values, which
// hands them over directly.
func TestPCPSection11FormFilling(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t) // the vault holds identity.passport_number, critical
	h := f.h
	form := map[string]string{
		"identity.full_name": "Cool Cucumber", "identity.dob": "1990-06-15", "identity.citizenship": "AU",
		"addresses.current.street": "123 Main St", "addresses.current.city": "Seattle",
	}
	for id, v := range form {
		h.must(200, "PUT", "/context/fields/"+id, h.owner, map[string]any{"value": v}, nil)
	}
	form["identity.passport_number"] = passport

	// The agent registers (PCP §4) and, once the owner approved it, gets a
	// token (PCP §10 step 2).
	h.must(201, "POST", "/context/consumers/register", "", map[string]string{"name": "visa-agent", "secret": specSecret}, nil)
	h.must(200, "POST", "/phc/v1/consumers/visa-agent/approve", h.owner, nil, nil)
	var tok struct {
		Token string `json:"token"`
	}
	h.must(201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "visa-agent", "secret": specSecret,
		"scope": "identity.*, addresses.*", "ttl": "1h"}, &tok)

	// fill asks for the form's scope, has the owner approve once with
	// extra (the password; a disclosure), and returns what the read of the
	// approved token answers: key → value, and the warnings.
	fill := func(purpose string, approve ...string) (map[string]string, []string) {
		t.Helper()
		var req struct {
			ID     string `json:"request_id"`
			Status string `json:"status"`
			Tier   string `json:"tier"`
		}
		h.must(202, "POST", "/context/requests", tok.Token, map[string]any{
			"scope":   "identity.full_name, identity.dob, identity.citizenship, identity.passport_number, addresses.current",
			"purpose": purpose, "duration": "30 minutes"}, &req)
		if req.Status != "pending" || req.Tier != "critical" {
			t.Fatalf("the form's request = %+v; want pending, critical", req)
		}
		h.phcOK(append([]string{"approve", req.ID, "--password"}, approve...)...)
		var got requestAnswer
		h.must(200, "GET", "/context/requests/"+req.ID, tok.Token, nil, &got)
		var ctx struct {
			Categories map[string][]struct {
				ID    string `json:"id"`
				Value string `json:"value"`
			} `json:"categories"`
			Warnings []string `json:"warnings"`
		}
		h.must(200, "GET", "/context/context", got.Token, nil, &ctx)
		values := map[string]string{}
		for _, fs := range ctx.Categories {
			for _, f := range fs {
				values[f.ID] = f.Value
			}
		}
		return values, ctx.Warnings
	}

	// The owner approves as usual: critical data comes as a reference,
	// and the answer says how to obtain the value.
	values, warnings := fill("Fill Australian visa application form")
	ref := values["identity.passport_number"]
	m := regexp.MustCompile(`^⟦(PASSPORT_[0-9]+):[^⟧]*⟧$`).FindStringSubmatch(ref)
	if m == nil {
		t.Fatalf("passport = %q; want a reference", ref)
	}
	hint := strings.Join(warnings, "\n")
	if !strings.Contains(hint, "identity.passport_number") || !strings.Contains(hint, "Client-Vault") || !strings.Contains(hint, "client_vault_endpoint") {
		t.Fatalf("the answer does not say how to obtain the value: warnings %q", warnings)
	}
	// As the answer says: the owner turns local vaults on; the person's
	// hook shows its key on an MCP request, the owner activates it, and
	// the hook resolves the reference.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil)
	seen := f.clock.Now()
	k := f.boundKey("visa", tok.Token)
	status, _, body := f.resolve(k, f.refs(seen, m[1]))
	resolved, _ := body["values"].(map[string]any)
	if status != 200 || resolved[m[1]] != passport {
		t.Fatalf("resolve %s = %d %v", m[1], status, body)
	}
	values["identity.passport_number"] = resolved[m[1]].(string)
	for id, v := range form {
		if values[id] != v {
			t.Errorf("%s = %q; want %q (values in hand %v)", id, values[id], v, values)
		}
	}

	// Or the owner approves with values: the agent has them at once.
	values, _ = fill("Fill Australian visa application form, page 2", "--disclosure", "value")
	for id, v := range form {
		if values[id] != v {
			t.Errorf("approved with values: %s = %q; want %q", id, values[id], v)
		}
	}
}
