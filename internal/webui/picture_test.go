package webui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestPictureEscapes renders lineage and neighbourhood pictures whose
// labels and links carry markup, and checks that the SVG holds them only
// as text.
func TestPictureEscapes(t *testing.T) {
	const hostile = `<script>alert(1)</script>"'&`
	tests := []struct {
		name string
		pic  *picture
	}{
		{"lineage", claimLineage(custodian.Claim{ID: "clm_A", Version: 1, Key: hostile, Status: custodian.StatusActive},
			[]custodian.Claim{{ID: "clm_A", Version: 1, Key: hostile, Status: custodian.StatusActive}},
			[]custodian.Summary{{ID: "sum_B", Version: 1, DerivedFrom: []string{"clm_A@1"}, Status: custodian.SummaryStale,
				Stale: &custodian.Staleness{RootCause: hostile}}})},
		{"neighbourhood", neighbourhood(custodian.Neighbors{Node: "self", Edges: []custodian.NeighborEdge{
			{From: "self", To: hostile, Relation: hostile}}}, entityNames{hostile: {Type: hostile, Name: hostile}})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := parseTemplates()["claim"].ExecuteTemplate(&buf, "picture", tc.pic); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(out, "<script") || strings.Contains(out, `"'&`) {
				t.Errorf("the picture holds markup unescaped:\n%s", out)
			}
			if !strings.Contains(out, "&lt;script&gt;") {
				t.Errorf("the picture lost the hostile label instead of escaping it:\n%s", out)
			}
			if n := strings.Count(out, "<a href="); n != len(tc.pic.Nodes) {
				t.Errorf("the picture has %d links; want one a node (%d)", n, len(tc.pic.Nodes))
			}
		})
	}
}

// TestLayout checks the columns of a summary's lineage: parents to the
// left, the summary, what was made from it to the right.
func TestLayout(t *testing.T) {
	parent := custodian.Summary{ID: "sum_P", Version: 1, DerivedFrom: []string{"clm_A@1"}, Status: custodian.SummaryCurrent}
	sm := custodian.Summary{ID: "sum_S", Version: 1, DerivedFrom: []string{"sum_P@1", "clm_B@2"}, Status: custodian.SummaryStale}
	child := custodian.Summary{ID: "sum_C", Version: 1, DerivedFrom: []string{"sum_S@1"}, Status: custodian.SummaryStale}
	claims := map[string]custodian.Claim{
		"clm_A": {ID: "clm_A", Version: 1, Key: "a", Status: custodian.StatusActive},
		"clm_B": {ID: "clm_B", Version: 3, Key: "b", Status: custodian.StatusActive},
	}
	pic := summaryLineage(sm, []custodian.Summary{parent, sm, child}, claims)
	x := map[string]int{}
	sub := map[string]string{}
	for _, n := range pic.Nodes {
		x[n.ID], sub[n.ID] = n.X, n.Sub
	}
	if !(x["clm_A@1"] < x["sum_P"] && x["sum_P"] < x["sum_S"] && x["clm_B@2"] < x["sum_S"] && x["sum_S"] < x["sum_C"]) {
		t.Errorf("columns = %v; want clm_A@1 < sum_P < sum_S < sum_C and clm_B@2 < sum_S", x)
	}
	if sub["clm_B@2"] != "v2 · now v3 active" || sub["clm_A@1"] != "v1 · current" {
		t.Errorf("parent states = %q, %q; want v2 · now v3 active, v1 · current", sub["clm_B@2"], sub["clm_A@1"])
	}
	if len(pic.Edges) != 4 {
		t.Errorf("%d edges; want 4 (A→P, P→S, B→S, S→C)", len(pic.Edges))
	}
}

// TestNeighbourhoodLayout: a neighbourhood of many nodes two hops deep is
// drawn with every node named, no two boxes overlapping, and all of them
// inside the picture.
func TestNeighbourhoodLayout(t *testing.T) {
	names := entityNames{}
	var edges []custodian.NeighborEdge
	for i := range 6 {
		friend := fmt.Sprintf("ent_friend%d", i)
		names[friend] = entity{Type: "person", Name: fmt.Sprintf("Friend %d", i)}
		edges = append(edges, custodian.NeighborEdge{From: "self", To: friend, Relation: "friend"})
		for j := range 2 {
			org := fmt.Sprintf("ent_org%d_%d", i, j)
			names[org] = entity{Type: "organisation", Name: fmt.Sprintf("Org %d.%d", i, j)}
			edges = append(edges, custodian.NeighborEdge{From: friend, To: org, Relation: "works_at"})
		}
	}
	pic := neighbourhood(custodian.Neighbors{Node: "self", Edges: edges}, names)
	if len(pic.Nodes) != 1+6+12 {
		t.Fatalf("%d nodes; want 19", len(pic.Nodes))
	}
	for i, a := range pic.Nodes {
		if strings.HasPrefix(a.Label, "ent_") {
			t.Errorf("node %s is labelled with its id, not its name", a.ID)
		}
		if a.X < 0 || a.Y < 0 || a.X+a.W > pic.Width || a.Y+a.H > pic.Height {
			t.Errorf("node %s at %d,%d %dx%d lies outside the %dx%d picture", a.Label, a.X, a.Y, a.W, a.H, pic.Width, pic.Height)
		}
		for _, b := range pic.Nodes[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				t.Errorf("nodes %s and %s overlap", a.Label, b.Label)
			}
		}
	}
	for _, e := range pic.Edges {
		if e.Label == "" {
			t.Error("an edge has no relation label")
		}
	}
}
