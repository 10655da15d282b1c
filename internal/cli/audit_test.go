package cli

import (
	"strings"
	"testing"
	"time"
)

// TestAudit: the PCP audit view of the receipts names actions, consumers
// and fields (keys), never values.
func TestAudit(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.must(201, "POST", "/phc/v1/personas", h.owner, map[string]string{"id": "learning", "name": "Learning"}, nil)
	tutor := h.consumer("tutor", "learning.*", "write")
	coach := h.consumer("coach", "*", "read")
	h.grant("tutor", "learning", "contribute", map[string]any{"keys": []string{"learning.*"}})
	var g struct{ ID string }
	h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
		"recipient": map[string]string{"kind": "consumer", "id": "coach"}, "purpose": "learning",
		"operations": []string{"read"}, "selectors": map[string]any{"keys": []string{"learning.*"}},
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, &g)
	var p struct {
		ProposalID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", tutor, map[string]any{
		"key": scheduleKey, "value": scheduleValue, "kind": "goal", "assertion": "reported"}, &p)
	h.must(200, "POST", "/phc/v1/proposals/"+p.ProposalID+"/confirm", h.owner, map[string]any{"personas": []string{"learning"}}, nil)
	h.must(200, "GET", "/phc/v1/context?purpose=learning", coach, nil, nil)
	h.must(200, "GET", "/phc/v1/context?purpose=marketing", coach, nil, nil)
	h.must(200, "DELETE", "/phc/v1/grants/"+g.ID, h.owner, nil, nil)

	var audit struct {
		Entries []struct {
			Action    string   `json:"action"`
			Operation string   `json:"operation"`
			Consumer  string   `json:"consumer"`
			Purpose   string   `json:"purpose"`
			Fields    []string `json:"fields"`
		} `json:"entries"`
	}
	raw := h.must(200, "GET", "/context/audit?limit=50", h.owner, nil, &audit)
	if strings.Contains(string(raw), scheduleValue) {
		t.Fatal("the audit holds a value")
	}
	want := []string{"REVOKE grant.revoke coach learning", "DENY context.read coach marketing", "READ context.read coach learning " + scheduleKey,
		"WRITE proposal.confirm " + scheduleKey, "WRITE proposal.create tutor"}
	var got []string
	for _, e := range audit.Entries[:5] {
		got = append(got, strings.Join(strings.Fields(strings.Join(append([]string{e.Action, e.Operation, e.Consumer, e.Purpose}, e.Fields...), " ")), " "))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit entry %d = %q; want %q", i, got[i], want[i])
		}
	}
	h.constraint(403, "session_required", "GET", "/context/audit", coach, nil)
	h.constraint(400, "invalid_request", "GET", "/context/audit?limit=5000", h.owner, nil)
}
