package cli

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// masked is raw with what differs between any two answers anyway — ids
// and timestamps — replaced by placeholders, for a byte-for-byte
// comparison of the rest.
func masked(raw []byte) string {
	ids := regexp.MustCompile(`\b(clm|prp|req)_[A-Z2-7]{26}\b`)
	times := regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	return times.ReplaceAllString(ids.ReplaceAllString(string(raw), "${1}_ID"), "TIME")
}

// mcpAnswer calls tool and returns the whole result (content, structured
// content, error flag) as JSON.
func mcpAnswer(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) []byte {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// hiddenWriteVault is a daemon under auto_grant standard in which the
// owner wrote the fields of keys and hid each from apps — the even ones by
// raising their tier to sensitive, the odd ones by restricting them to the
// purpose journal — and an app "app" with a read-write token over
// everything, at HTTP and over MCP.
type hiddenWriteVault struct {
	h   *harness
	app string
	mcp *mcp.ClientSession
}

func newHiddenWriteVault(t *testing.T, keys ...string) *hiddenWriteVault {
	t.Helper()
	h := startHarness(t, "")
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "standard"}, nil)
	for i, key := range keys {
		if i%2 == 0 {
			h.must(200, "PUT", "/context/fields/"+key, h.owner, map[string]any{"value": "the owner's own"}, nil)
			h.must(200, "PUT", "/context/sensitivity/"+key, h.owner, map[string]string{"tier": "sensitive"}, nil)
			continue
		}
		var p struct {
			ID string `json:"proposal_id"`
		}
		h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": key, "value": "the owner's own", "kind": "fact",
			"assertion": "reported", "restrictions": []any{map[string]any{"type": "purpose_only", "mandatory": true,
				"params": map[string]any{"purposes": []string{"journal"}}}}}, &p)
		h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	}
	v := &hiddenWriteVault{h: h, app: h.consumer("app", "*", "read-write")}
	v.mcp = mustSession(t, h, v.app)
	return v
}

// TestWriteToHiddenFieldLikeAbsent: under auto_grant standard, an app's
// write to a field the owner hid from it (a tier raised to sensitive, a
// purpose_only restriction) answers exactly like its write to a field that
// does not exist — status, body, every member but ids and timestamps —
// over HTTP (PUT /context/fields/{id}) and MCP (context_set). The two
// vaults have the same history, with the hidden fields under other keys in
// the second. The owner still sees the write: it waits in the review queue
// (phc review too), marked blind, the owner's value stays, and the owner
// confirms or rejects it like any proposal; the app does not see it among
// its proposals, and blind writes have a cap apart from its quota. An app
// whose grant lets it read the field knows it is there: its write is a
// proposal, and the answer says so.
func TestWriteToHiddenFieldLikeAbsent(t *testing.T) {
	t.Parallel()
	hidden := newHiddenWriteVault(t, "notes.diary", "notes.journal", "notes.mood", "notes.dream")
	absent := newHiddenWriteVault(t, "notes.other1", "notes.other2", "notes.other3", "notes.other4")
	for _, key := range []string{"notes.diary", "notes.journal"} {
		put := func(v *hiddenWriteVault) string {
			status, raw := v.h.do("PUT", "/context/fields/"+key, v.app, map[string]any{"value": "the app's"})
			return strconv.Itoa(status) + " " + masked(raw)
		}
		if got, want := put(hidden), put(absent); got != want {
			t.Errorf("PUT %s: hidden answers\n%s\nabsent answers\n%s", key, got, want)
		}
	}
	for _, key := range []string{"notes.mood", "notes.dream"} {
		set := func(v *hiddenWriteVault) string {
			return masked(mcpAnswer(t, v.mcp, "context_set", map[string]any{"id": key, "value": "the app's"}))
		}
		if got, want := set(hidden), set(absent); got != want {
			t.Errorf("context_set %s: hidden answers\n%s\nabsent answers\n%s", key, got, want)
		}
	}
	if got, want := masked(mcpAnswer(t, hidden.mcp, "memory_status", map[string]any{})),
		masked(mcpAnswer(t, absent.mcp, "memory_status", map[string]any{})); got != want {
		t.Errorf("memory_status: hidden answers\n%s\nabsent answers\n%s", got, want)
	}

	// The owner sees every write to a hidden field, blind, and keeps the value.
	h := hidden.h
	var review struct {
		Proposals []struct {
			Key     string `json:"key"`
			Value   any    `json:"value"`
			Blind   bool   `json:"blind"`
			Current *struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &review)
	if len(review.Proposals) != 4 {
		t.Fatalf("review = %+v; want the app's four writes to hidden fields", review.Proposals)
	}
	for _, p := range review.Proposals {
		if !p.Blind || p.Current == nil || p.Current.Value != "the owner's own" || p.Value != "the app's" {
			t.Errorf("review item %+v; want a blind write against the owner's value", p)
		}
	}
	if code, out, errs := h.phc("review"); code != 0 || strings.Count(out, "BLIND:") != 4 {
		t.Errorf("phc review = %d %q %q; want the four writes marked BLIND", code, out, errs)
	}
	for _, key := range []string{"notes.diary", "notes.journal", "notes.mood", "notes.dream"} {
		var f wireField
		h.must(200, "GET", "/context/fields/"+key, h.owner, nil, &f)
		if f.Value != "the owner's own" {
			t.Errorf("%s = %v; the app's blind write replaced the owner's value", key, f.Value)
		}
	}
	if rc := lastReceipt(t, h, "app", "proposal.create"); rc.Decision != "allow" {
		t.Errorf("receipt of a blind write = %+v; want proposal.create allowed", rc)
	}
	// Blind writes have a cap of their own, the size of the app's quota of
	// waiting proposals: past it one is dropped, answered alike, with a
	// deny receipt; the app's quota is untouched by them.
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]int{"pending_proposals_per_app": 4}, nil)
	var answer writeAnswer
	h.must(200, "PUT", "/context/fields/notes.diary", hidden.app, map[string]any{"value": "dropped"}, &answer)
	if rc := lastReceipt(t, h, "app", "proposal.create"); answer.Status != "committed" || rc.Decision != "deny" || rc.Constraint != "rate_limited" {
		t.Errorf("a blind write past the cap = %+v, receipt %+v; want committed, receipted deny rate_limited", answer, rc)
	}
	h.must(202, "PUT", "/context/fields/health.mood", hidden.app, map[string]any{"value": "calm"}, nil)
	h.unlimited()

	// The owner decides a blind write like any proposal.
	var queue struct {
		Proposals []struct {
			ID  string `json:"proposal_id"`
			Key string `json:"key"`
		} `json:"proposals"`
	}
	h.must(200, "GET", "/phc/v1/review", h.owner, nil, &queue)
	items := queue.Proposals
	h.must(200, "POST", "/phc/v1/proposals/"+items[0].ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	h.must(200, "POST", "/phc/v1/proposals/"+items[1].ID+"/reject", h.owner, map[string]any{"reason": "no"}, nil)
	var f wireField
	h.must(200, "GET", "/context/fields/"+items[0].Key, h.owner, nil, &f)
	if f.Value != "the app's" || f.WrittenBy != "app" || f.Sensitivity != "sensitive" {
		t.Errorf("a confirmed blind write = %+v; want the app's value at the field's own tier", f)
	}

	// An app that may read the restricted field, under its purpose, knows
	// it exists: its write waits for the owner, and it is told so.
	diarist := h.consumer("diarist", "*", "read-write")
	h.grant("diarist", "journal", "read", map[string]any{"keys": []string{"notes.*"}})
	h.must(200, "GET", "/context/fields/notes.journal?purpose=journal", diarist, nil, nil)
	answer = writeAnswer{}
	h.must(202, "PUT", "/context/fields/notes.journal", diarist, map[string]any{"value": "the diarist's"}, &answer)
	if answer.Status != "pending" || !strings.HasPrefix(answer.ProposalID, "prp_") {
		t.Fatalf("a write by an app that reads the field = %+v; want pending with a proposal_id", answer)
	}
	out, isErr := call(t, mustSession(t, h, diarist), "memory_status", map[string]any{})
	if ps, _ := out["proposals"].([]any); isErr || len(ps) != 1 || ps[0].(map[string]any)["proposal_id"] != answer.ProposalID {
		t.Fatalf("memory_status of the diarist = %v; want its pending write", out)
	}
}

func mustSession(t *testing.T, h *harness, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpSession(t, h, token)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestQualificationHiddenLikeAbsent: an app holding a grant that requires
// a qualification it has not met reads a sensitive field that exists, one
// hidden from it by a restriction, and one that does not exist: the three
// answers are the same qualification_required, over HTTP and MCP; a claim
// id that exists and one that does not answer alike too. Once qualified,
// it reads the field, and the hidden and the absent one are the same
// not_found.
func TestQualificationHiddenLikeAbsent(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	f := newDECFixture(t, h) // health.binding.allergy, sensitive
	var p struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "health.binding.notes", "value": "private", "kind": "fact",
		"assertion": "reported", "restrictions": []any{map[string]any{"type": "purpose_only", "mandatory": true,
			"params": map[string]any{"purposes": []string{"therapy"}}}}}, &p)
	h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, nil)
	f.policy("oracle-policy", "oracle-app")
	tok := f.qualifiedRecipient("oracle-app", "oracle-policy")
	cs := mustSession(t, h, tok)

	keys := []string{"health.binding.allergy", "health.binding.notes", "health.binding.absent"}
	answers := func(want int) []string {
		t.Helper()
		var out []string
		for _, key := range keys {
			status, raw := h.do("GET", "/context/fields/"+key+"?purpose=care", tok, nil)
			if key != keys[0] || want != 200 {
				out = append(out, strconv.Itoa(status)+" "+masked(raw))
			}
			mcpRaw := mcpAnswer(t, cs, "context_get", map[string]any{"id": key, "purpose": "care"})
			if key != keys[0] || want != 200 {
				out = append(out, masked(mcpRaw))
			} else if status != 200 {
				t.Fatalf("GET %s once qualified = %d %s", key, status, raw)
			}
		}
		return out
	}
	same := func(what string, got []string) {
		t.Helper()
		for i := 1; i < len(got); i++ {
			if got[i] != got[i%2] {
				t.Errorf("%s: answer %d\n%s\ndiffers from\n%s", what, i, got[i], got[i%2])
			}
		}
	}
	before := answers(0)
	if !strings.Contains(before[0], "qualification_required") {
		t.Fatalf("a read refused for its qualification = %s; want qualification_required", before[0])
	}
	same("unqualified reads", before)

	claim := func(id string) string {
		status, raw := h.do("GET", "/phc/v1/claims/"+url.PathEscape(id)+"?purpose=care", tok, nil)
		return strconv.Itoa(status) + " " + masked(raw)
	}
	if got, want := claim(f.claimID), claim("clm_"+strings.Repeat("A", 26)); got != want || !strings.Contains(got, "qualification_required") {
		t.Errorf("GET a claim that exists = %s; one that does not = %s; want the same qualification_required", got, want)
	}
	// A key the requiring grant does not select is not its business.
	h.constraint(404, "not_found", "GET", "/context/fields/identity.nothing?purpose=care", tok, nil)

	h.must(200, "POST", "/phc/v1/dec/present", tok, f.chain("oracle-app"), nil)
	after := answers(200)
	if !strings.Contains(after[0], "not_found") {
		t.Fatalf("a hidden field once qualified = %s; want not_found", after[0])
	}
	same("qualified reads", after)
}
