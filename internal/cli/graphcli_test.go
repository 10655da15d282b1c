package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestGraphWithoutCurl follows the graph section of docs/owner.md with
// the CLI alone: an entity, a relationship claim in the coach's persona, a
// traversal by the coach that shows the edge, and a summary.
func TestGraphWithoutCurl(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	h.phcOK("persona", "add", "learning", "Learning")
	h.phcOK("consumer", "add", "coach", "--secret", "coach-secret-0123456789")
	h.phcOK("grant", "--to", "coach", "--purpose", "learning", "--ops", "read", "--personas", "learning", "--expires", "1d")

	// A claim about you the coach may read (a node is shown only with one).
	goal := strings.TrimSpace(h.phcOK("propose", "learning.goal", "--value", "Practice Spanish twice a week", "--kind", "goal"))
	h.phcOK("review", "confirm", goal, "--persona", "learning")
	ana := strings.TrimSpace(h.phcOK("entity", "add", "person", "--name", "Ana", "--key", "people.ana.name", "--persona", "learning"))
	if !strings.HasPrefix(ana, "ent_") {
		t.Fatalf("entity add printed %q", ana)
	}
	if out := h.phcOK("entity", "list"); !strings.Contains(out, ana+"  person") {
		t.Errorf("entity list = %q", out)
	}
	prp := strings.TrimSpace(h.phcOK("propose", "people.ana.relation", "--kind", "relationship",
		"--value", `{"from":"self","to":"`+ana+`","relation":"friend"}`))
	if !strings.HasPrefix(prp, "prp_") {
		t.Fatalf("propose printed %q", prp)
	}
	h.phcOK("review", "confirm", prp, "--persona", "learning")

	coach := strings.TrimSpace(h.phcOK("token", "--consumer", "coach", "--secret", "coach-secret-0123456789", "--scope", "*", "--mode", "read"))
	var g struct {
		Edges []struct {
			Relation string `json:"relation"`
			To       string `json:"to"`
		} `json:"edges"`
	}
	h.must(200, "GET", "/phc/v1/graph/neighbors/self?purpose=learning&depth=2", coach, nil, &g)
	found := false
	for _, e := range g.Edges {
		found = found || e.To == ana
	}
	if !found {
		t.Errorf("the coach sees no edge to Ana: %+v", g)
	}

	var claims struct {
		Claims []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
			Key     string `json:"key"`
		} `json:"claims"`
	}
	if err := json.Unmarshal([]byte(h.phcOK("claims", "--json")), &claims); err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, c := range claims.Claims {
		from = append(from, "--from", c.ID+"@1")
	}
	sum := strings.TrimSpace(h.phcOK(append([]string{"summary", "add", "Ana and I practise Spanish"}, from...)...))
	if !regexp.MustCompile(`^sum_`).MatchString(sum) {
		t.Errorf("summary add printed %q", sum)
	}
	if code, _, errs := h.phc("summary", "add", "x", "--from", "clm_x"); code != 2 || !strings.Contains(errs, "clm_…@2") {
		t.Errorf("summary add --from without a version = %d %s", code, errs)
	}
}
