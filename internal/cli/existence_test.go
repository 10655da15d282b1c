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
