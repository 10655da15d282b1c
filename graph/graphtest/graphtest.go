// Package graphtest is the contract every graph backend passes: the same
// cases run against Cayley's memstore and against its kv layer on bbolt.
package graphtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cayleygraph/quad/nquads"

	"github.com/phc-project/phc/graph"
)

// Run runs the contract against graphs made by open, one per case.
func Run(t *testing.T, open func(t *testing.T) graph.Graph) {
	ctx := context.Background()
	rel := func(from, to, label string) graph.Edge {
		return graph.Edge{Subject: from, Predicate: graph.Related, Object: to, Label: label}
	}
	der := func(child, parent string) graph.Edge {
		return graph.Edge{Subject: child, Predicate: graph.DerivedFrom, Object: parent}
	}
	apply := func(t *testing.T, g graph.Graph, d graph.Delta) {
		t.Helper()
		if err := g.Apply(d); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	all := func(t *testing.T, g graph.Graph) []graph.Edge {
		t.Helper()
		var es []graph.Edge
		if err := g.Each(ctx, func(e graph.Edge) error { es = append(es, e); return nil }); err != nil {
			t.Fatalf("Each: %v", err)
		}
		sortEdges(es)
		return es
	}
	everything := graph.Visibility{Edge: func(graph.Edge) bool { return true }, Node: func(string) bool { return true }}

	t.Run("EmptyGraph", func(t *testing.T) {
		g := open(t)
		if w, err := g.Watermark(); err != nil || w != 0 {
			t.Fatalf("Watermark = %d, %v; want 0", w, err)
		}
		if es := all(t, g); len(es) != 0 {
			t.Fatalf("edges of an empty graph: %v", es)
		}
		es, err := g.Edges(ctx, "ent_A", graph.Both, "")
		if err != nil || len(es) != 0 {
			t.Fatalf("Edges of an absent node = %v, %v", es, err)
		}
	})

	t.Run("ApplyIsIdempotent", func(t *testing.T) {
		g := open(t)
		d := graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_B", "ent_C", "clm_2@1")}, Watermark: 3}
		apply(t, g, d)
		apply(t, g, d) // replayed after a crash
		want := []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_B", "ent_C", "clm_2@1")}
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
		rm := graph.Delta{Remove: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_X", "ent_Y", "clm_9@1")}, Watermark: 4}
		apply(t, g, rm)
		apply(t, g, rm)
		if got := all(t, g); !reflect.DeepEqual(got, want[1:]) {
			t.Fatalf("after removal: %v", got)
		}
		if w, _ := g.Watermark(); w != 4 {
			t.Fatalf("Watermark = %d, want 4", w)
		}
	})

	t.Run("LabelsKeepParallelEdgesApart", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_A", "ent_B", "clm_2@1")}, Watermark: 1})
		apply(t, g, graph.Delta{Remove: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")}, Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@2")}, Watermark: 2})
		want := []graph.Edge{rel("ent_A", "ent_B", "clm_1@2"), rel("ent_A", "ent_B", "clm_2@1")}
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
	})

	t.Run("RemovalsComeBeforeAdditions", func(t *testing.T) {
		g := open(t)
		a, b := rel("ent_A", "ent_B", "clm_1@1"), rel("ent_A", "ent_C", "clm_2@1")
		apply(t, g, graph.Delta{Add: []graph.Edge{a}, Watermark: 1})
		if _, err := g.Edges(ctx, "ent_A", graph.Both, graph.Related); err != nil { // warm any cache
			t.Fatal(err)
		}
		// An edge a delta both removes and adds is there after it, whether
		// it was before or not.
		apply(t, g, graph.Delta{Remove: []graph.Edge{a, b}, Add: []graph.Edge{a, b}, Watermark: 2})
		want := []graph.Edge{a, b}
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
		got, err := g.Edges(ctx, "ent_A", graph.Both, graph.Related)
		if err != nil {
			t.Fatal(err)
		}
		sortEdges(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Edges = %v, want %v", got, want)
		}
	})

	t.Run("AdditionsBesideRemovalsOfTheirNodes", func(t *testing.T) {
		g := open(t)
		about := func(label string) graph.Edge {
			return graph.Edge{Subject: "clm_X", Predicate: graph.About, Object: "self", Label: label}
		}
		in := func(p string) graph.Edge { return graph.Edge{Subject: "clm_X", Predicate: graph.InPersona, Object: p} }
		apply(t, g, graph.Delta{Add: []graph.Edge{about("clm_X@1"), in("per_1"), in("per_2")}, Watermark: 1})
		// clm_X loses three edges and gains two: more of its edges go than
		// come, which must not lose the ones that come.
		apply(t, g, graph.Delta{
			Remove:    []graph.Edge{about("clm_X@1"), in("per_1"), in("per_2")},
			Add:       []graph.Edge{about("clm_X@2"), in("per_1")},
			Watermark: 2,
		})
		want := []graph.Edge{about("clm_X@2"), in("per_1")}
		sortEdges(want)
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
	})

	t.Run("RemovingWhatIsNotThereKeepsTheRest", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_A", "ent_D", "clm_3@1")}, Watermark: 1})
		// A removal of an edge that is not there (of nodes that are), as
		// a replay makes, beside an addition to the same node...
		apply(t, g, graph.Delta{Remove: []graph.Edge{rel("ent_A", "ent_D", "clm_1@1")}, Add: []graph.Edge{rel("ent_A", "ent_C", "clm_2@1")}, Watermark: 2})
		// ...then the removal of the node's other edges: the one added
		// stays, whole.
		apply(t, g, graph.Delta{Remove: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_A", "ent_D", "clm_3@1")}, Watermark: 3})
		want := []graph.Edge{rel("ent_A", "ent_C", "clm_2@1")}
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
		if got, err := g.Edges(ctx, "ent_C", graph.Both, graph.Related); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Edges(ent_C) = %v, %v; want %v", got, err, want)
		}
	})

	t.Run("RemovalNamesItsLabel", func(t *testing.T) {
		g := open(t)
		plain, labelled := rel("ent_A", "ent_B", ""), rel("ent_A", "ent_B", "clm_1@1")
		apply(t, g, graph.Delta{Add: []graph.Edge{plain, labelled}, Watermark: 1})
		// A label the graph has never held names no edge: nothing goes.
		apply(t, g, graph.Delta{Remove: []graph.Edge{rel("ent_A", "ent_B", "clm_9@1")}, Watermark: 2})
		if got, want := all(t, g), []graph.Edge{plain, labelled}; !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
		apply(t, g, graph.Delta{Remove: []graph.Edge{labelled}, Watermark: 3})
		if got, want := all(t, g), []graph.Edge{plain}; !reflect.DeepEqual(got, want) {
			t.Fatalf("edges = %v, want %v", got, want)
		}
	})

	t.Run("WatermarkNeverGoesBack", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Watermark: 10})
		if err := g.Apply(graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")}, Watermark: 9}); err == nil {
			t.Fatal("a delta behind the watermark was applied")
		}
		if es := all(t, g); len(es) != 0 {
			t.Fatalf("a refused delta left edges: %v", es)
		}
		apply(t, g, graph.Delta{Watermark: 10})
		if w, _ := g.Watermark(); w != 10 {
			t.Fatalf("Watermark = %d, want 10", w)
		}
	})

	t.Run("RefusesMalformedEdges", func(t *testing.T) {
		g := open(t)
		for _, e := range []graph.Edge{
			{Subject: "", Predicate: graph.Related, Object: "ent_B"},
			{Subject: "ent_A", Predicate: "", Object: "ent_B"},
			{Subject: "ent_A", Predicate: graph.Related, Object: ""},
			{Subject: "ent_A", Predicate: "related", Object: "ent_B"},
		} {
			if err := g.Apply(graph.Delta{Add: []graph.Edge{e}, Watermark: 1}); err == nil {
				t.Errorf("edge %q was accepted", e.String())
			}
		}
		if w, _ := g.Watermark(); w != 0 {
			t.Fatalf("a refused delta moved the watermark to %d", w)
		}
	})

	t.Run("EdgesByDirectionAndPredicate", func(t *testing.T) {
		g := open(t)
		about := graph.Edge{Subject: "clm_1", Predicate: graph.About, Object: "ent_A", Label: "clm_1@1"}
		apply(t, g, graph.Delta{Add: []graph.Edge{
			rel("ent_A", "ent_B", "clm_2@1"), rel("ent_C", "ent_A", "clm_3@1"), rel("ent_A", "ent_A", "clm_4@1"), about,
		}, Watermark: 1})
		cases := []struct {
			dir  graph.Direction
			pred string
			want []graph.Edge
		}{
			{graph.Out, graph.Related, []graph.Edge{rel("ent_A", "ent_B", "clm_2@1"), rel("ent_A", "ent_A", "clm_4@1")}},
			{graph.In, graph.Related, []graph.Edge{rel("ent_C", "ent_A", "clm_3@1"), rel("ent_A", "ent_A", "clm_4@1")}},
			{graph.Both, graph.Related, []graph.Edge{rel("ent_A", "ent_B", "clm_2@1"), rel("ent_C", "ent_A", "clm_3@1"), rel("ent_A", "ent_A", "clm_4@1")}},
			{graph.In, "", []graph.Edge{about, rel("ent_C", "ent_A", "clm_3@1"), rel("ent_A", "ent_A", "clm_4@1")}},
			{graph.In, graph.About, []graph.Edge{about}},
		}
		for _, c := range cases {
			got, err := g.Edges(ctx, "ent_A", c.dir, c.pred)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Edges(%v, %q) = %v, want %v", c.dir, c.pred, got, c.want)
			}
		}
	})

	t.Run("TraverseBreadthFirstWithinDepth", func(t *testing.T) {
		g := open(t)
		// A - B - C - D, and a cycle B - E - A.
		apply(t, g, graph.Delta{Add: []graph.Edge{
			rel("ent_A", "ent_B", "clm_1@1"), rel("ent_B", "ent_C", "clm_2@1"), rel("ent_C", "ent_D", "clm_3@1"),
			rel("ent_B", "ent_E", "clm_4@1"), rel("ent_E", "ent_A", "clm_5@1"),
		}, Watermark: 1})
		steps, err := g.Traverse(ctx, "ent_A", graph.Related, 2, everything)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Step{
			{Edge: rel("ent_A", "ent_B", "clm_1@1"), Depth: 1, Node: "ent_B"},
			{Edge: rel("ent_E", "ent_A", "clm_5@1"), Depth: 1, Node: "ent_E"},
			{Edge: rel("ent_B", "ent_C", "clm_2@1"), Depth: 2, Node: "ent_C"},
			{Edge: rel("ent_B", "ent_E", "clm_4@1"), Depth: 2, Node: "ent_E"},
		}
		if !reflect.DeepEqual(steps, want) {
			t.Fatalf("Traverse = %v\nwant %v", steps, want)
		}
		steps, _ = g.Traverse(ctx, "ent_A", graph.Related, 3, everything)
		if len(steps) != 5 || steps[4].Node != "ent_D" || steps[4].Depth != 3 {
			t.Fatalf("depth 3: %v", steps)
		}
	})

	t.Run("TraverseNeverFollowsWhatIsHidden", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{
			rel("ent_A", "ent_B", "clm_1@1"), rel("ent_B", "ent_C", "clm_2@1"),
			rel("ent_A", "ent_H", "clm_3@1"), rel("ent_H", "ent_C", "clm_4@1"), rel("ent_A", "ent_C", "clm_5@1"),
		}, Watermark: 1})
		vis := graph.Visibility{
			Edge: func(e graph.Edge) bool { return e.Label != "clm_5@1" },
			Node: func(n string) bool { return n != "ent_H" },
		}
		steps, err := g.Traverse(ctx, "ent_A", graph.Related, 3, vis)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Step{
			{Edge: rel("ent_A", "ent_B", "clm_1@1"), Depth: 1, Node: "ent_B"},
			{Edge: rel("ent_B", "ent_C", "clm_2@1"), Depth: 2, Node: "ent_C"},
		}
		if !reflect.DeepEqual(steps, want) {
			t.Fatalf("Traverse = %v\nwant %v", steps, want)
		}
		// The same graph without the hidden parts answers the same.
		h := open(t)
		apply(t, h, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), rel("ent_B", "ent_C", "clm_2@1")}, Watermark: 1})
		other, _ := h.Traverse(ctx, "ent_A", graph.Related, 3, everything)
		if !reflect.DeepEqual(steps, other) {
			t.Fatalf("hidden parts changed the answer: %v vs %v", steps, other)
		}
	})

	t.Run("DependentsFollowLineageOnly", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{
			der("sum_1@1", "clm_A@1"), der("sum_1@1", "clm_B@2"), der("sum_2@1", "sum_1@1"),
			der("sum_3@1", "sum_2@1"), der("sum_4@1", "clm_C@1"), der("sum_5@1", "sum_9@1"),
			rel("ent_X", "clm_A@1", "clm_7@1"), // not lineage
		}, Watermark: 1})
		got, err := g.Dependents(ctx, []string{"clm_A@1"}, graph.DerivedFrom, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Dependent{{Node: "sum_1@1", Via: "clm_A@1"}, {Node: "sum_2@1", Via: "sum_1@1"}, {Node: "sum_3@1", Via: "sum_2@1"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Dependents = %v, want %v", got, want)
		}
		got, _ = g.Dependents(ctx, []string{"clm_A@1"}, graph.DerivedFrom, func(n string) bool { return n != "sum_2@1" })
		if !reflect.DeepEqual(got, want[:1]) {
			t.Fatalf("pruned Dependents = %v, want %v", got, want[:1])
		}
		got, _ = g.Dependents(ctx, []string{"clm_Z@1"}, graph.DerivedFrom, nil)
		if len(got) != 0 {
			t.Fatalf("Dependents of an absent node = %v", got)
		}
	})

	t.Run("ReadsSeeEveryApply", func(t *testing.T) {
		g := open(t)
		// Warm whatever a backend caches, then change the graph under it.
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1"), der("sum_1@1", "clm_1@1")}, Watermark: 1})
		for _, n := range []string{"ent_A", "ent_B", "ent_C", "clm_1@1"} {
			for _, p := range []string{graph.Related, graph.DerivedFrom} {
				if _, err := g.Edges(ctx, n, graph.Both, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		apply(t, g, graph.Delta{
			Remove:    []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")},
			Add:       []graph.Edge{rel("ent_A", "ent_C", "clm_1@2"), der("sum_2@1", "clm_1@1")},
			Watermark: 2,
		})
		check := func(node, pred string, want ...graph.Edge) {
			t.Helper()
			got, err := g.Edges(ctx, node, graph.Both, pred)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Edges(%s, %s) = %v, want %v", node, pred, got, want)
			}
		}
		check("ent_A", graph.Related, rel("ent_A", "ent_C", "clm_1@2"))
		check("ent_B", graph.Related)
		check("ent_C", graph.Related, rel("ent_A", "ent_C", "clm_1@2"))
		check("clm_1@1", graph.DerivedFrom, der("sum_1@1", "clm_1@1"), der("sum_2@1", "clm_1@1"))
		if err := g.Reset(); err != nil {
			t.Fatal(err)
		}
		check("ent_A", graph.Related)
		check("clm_1@1", graph.DerivedFrom)
	})

	t.Run("FreshNodesReadLikeOthers", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{der("sum_1@1", "clm_A@1")}, Watermark: 1})
		apply(t, g, graph.Delta{
			Add:   []graph.Edge{der("sum_2@1", "sum_1@1"), der("sum_2@1", "clm_A@1"), rel("ent_N", "ent_N", "clm_L@1"), rel("ent_N", "ent_B", "clm_M@1")},
			Fresh: []string{"sum_2@1", "ent_N"}, Watermark: 2,
		})
		apply(t, g, graph.Delta{Add: []graph.Edge{der("sum_3@1", "sum_2@1")}, Watermark: 3})
		got, err := g.Edges(ctx, "sum_2@1", graph.Both, graph.DerivedFrom)
		if err != nil {
			t.Fatal(err)
		}
		want := []graph.Edge{der("sum_2@1", "clm_A@1"), der("sum_2@1", "sum_1@1"), der("sum_3@1", "sum_2@1")}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Edges(fresh node) = %v, want %v", got, want)
		}
		got, _ = g.Edges(ctx, "ent_N", graph.Both, graph.Related)
		if want := []graph.Edge{rel("ent_N", "ent_N", "clm_L@1"), rel("ent_N", "ent_B", "clm_M@1")}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Edges(fresh node with a loop) = %v, want %v", got, want)
		}
		deps, _ := g.Dependents(ctx, []string{"clm_A@1"}, graph.DerivedFrom, nil)
		if len(deps) != 3 {
			t.Fatalf("Dependents through fresh nodes = %v", deps)
		}
	})

	t.Run("SuperNodeScansByPredicate", func(t *testing.T) {
		g := open(t)
		var d graph.Delta
		for i := 0; i < 2000; i++ {
			d.Add = append(d.Add, graph.Edge{Subject: "clm_" + strings.Repeat("A", 1) + itoa(i), Predicate: graph.About, Object: "self", Label: "clm_A" + itoa(i) + "@1"})
		}
		d.Add = append(d.Add, rel("self", "ent_B", "clm_R@1"), rel("ent_C", "self", "clm_S@1"))
		d.Watermark = 1
		apply(t, g, d)
		got, err := g.Edges(ctx, "self", graph.Both, graph.Related)
		if err != nil {
			t.Fatal(err)
		}
		if want := []graph.Edge{rel("self", "ent_B", "clm_R@1"), rel("ent_C", "self", "clm_S@1")}; !reflect.DeepEqual(got, want) {
			t.Fatalf("Edges = %v, want %v", got, want)
		}
		about, _ := g.Edges(ctx, "self", graph.In, graph.About)
		if len(about) != 2000 {
			t.Fatalf("%d about edges, want 2000", len(about))
		}
	})

	t.Run("ResetEmpties", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")}, Watermark: 7})
		if err := g.Reset(); err != nil {
			t.Fatal(err)
		}
		if w, _ := g.Watermark(); w != 0 {
			t.Fatalf("Watermark after Reset = %d", w)
		}
		if es := all(t, g); len(es) != 0 {
			t.Fatalf("edges after Reset: %v", es)
		}
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@2")}, Watermark: 2})
		if es := all(t, g); len(es) != 1 {
			t.Fatalf("edges after a rebuild: %v", es)
		}
	})

	t.Run("ReplaceLoadsAWholeGraph", func(t *testing.T) {
		if !large {
			t.Skip("loads 25,000 edges: runs with go test -tags slow")
		}
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")}, Watermark: 9})
		if _, err := g.Edges(ctx, "ent_A", graph.Both, graph.Related); err != nil { // warm any cache
			t.Fatal(err)
		}
		var es []graph.Edge
		for i := 0; i < 25000; i++ { // more than one transaction's worth
			es = append(es, rel("ent_A", "ent_C"+itoa(i), "clm_X"+itoa(i)+"@1"))
		}
		if err := g.Replace(es, 12); err != nil {
			t.Fatal(err)
		}
		if w, _ := g.Watermark(); w != 12 {
			t.Fatalf("Watermark after Replace = %d, want 12", w)
		}
		got, err := g.Edges(ctx, "ent_A", graph.Both, graph.Related)
		if err != nil || len(got) != len(es) {
			t.Fatalf("Edges after Replace: %d edges, %v; want %d", len(got), err, len(es))
		}
		for _, e := range got {
			if e.Object == "ent_B" {
				t.Fatalf("Replace kept an old edge: %v", e)
			}
		}
		if err := g.Apply(graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@2")}, Watermark: 11}); err == nil {
			t.Fatal("a delta behind the replaced graph's watermark was applied")
		}
	})

	t.Run("ReplaceCutShortLeavesWatermarkZero", func(t *testing.T) {
		if !large {
			t.Skip("loads 12,000 edges: runs with go test -tags slow")
		}
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("ent_A", "ent_B", "clm_1@1")}, Watermark: 9})
		var es []graph.Edge
		for i := 0; i < 12000; i++ { // more than one transaction's worth
			es = append(es, rel("ent_A", "ent_C"+itoa(i), "clm_X"+itoa(i)+"@1"))
		}
		es = append(es, graph.Edge{Subject: "ent_A", Predicate: "related", Object: "ent_B"}) // refused, late
		if err := g.Replace(es, 12); err == nil {
			t.Fatal("Replace loaded a malformed edge")
		}
		if w, err := g.Watermark(); err != nil || w != 0 {
			t.Fatalf("Watermark after a Replace cut short = %d, %v; want 0, to be rebuilt", w, err)
		}
	})

	t.Run("NQuadsRoundTrip", func(t *testing.T) {
		g := open(t)
		in := []graph.Edge{
			rel("ent_A", "ent_B", "clm_1@1"), der("sum_1@1", "clm_A@1"),
			{Subject: "ent_A", Predicate: graph.Type, Object: graph.NS + "Person"},
		}
		apply(t, g, graph.Delta{Add: in, Watermark: 5})
		var buf bytes.Buffer
		if err := g.WriteNQuads(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "<urn:phc:ent_A> <"+graph.Related+"> <urn:phc:ent_B> <urn:phc:clm_1@1> .") {
			t.Fatalf("export lacks the edge:\n%s", buf.String())
		}
		r := nquads.NewReader(&buf, false)
		n := 0
		for {
			_, err := r.ReadQuad()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("export does not parse as N-Quads: %v\n%s", err, buf.String())
			}
			n++
		}
		if n != len(in)+1 {
			t.Fatalf("export has %d quads, want %d (with the watermark)", n, len(in)+1)
		}
	})

	t.Run("ReadsDuringWrites", func(t *testing.T) {
		g := open(t)
		apply(t, g, graph.Delta{Add: []graph.Edge{rel("self", "ent_0", "clm_0@1"), der("sum_0@1", "clm_0@1")}, Watermark: 1})
		const writes = 200
		done := make(chan error, 1)
		go func() {
			defer close(done)
			for i := 1; i <= writes; i++ {
				d := graph.Delta{
					Add:       []graph.Edge{rel("self", "ent_"+itoa(i), "clm_"+itoa(i)+"@1"), der("sum_"+itoa(i)+"@1", "clm_0@1")},
					Fresh:     []string{"ent_" + itoa(i), "sum_" + itoa(i) + "@1"},
					Watermark: uint64(i + 1),
				}
				if i%3 == 0 {
					d.Remove = []graph.Edge{rel("self", "ent_"+itoa(i-1), "clm_"+itoa(i-1)+"@1")}
				}
				if err := g.Apply(d); err != nil {
					done <- err
					return
				}
			}
		}()
		for reading := true; reading; {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				reading = false
			default:
			}
			if _, err := g.Traverse(ctx, "self", graph.Related, 2, everything); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Dependents(ctx, []string{"clm_0@1"}, graph.DerivedFrom, nil); err != nil {
				t.Fatal(err)
			}
		}
		es, err := g.Edges(ctx, "self", graph.Out, graph.Related)
		if err != nil {
			t.Fatal(err)
		}
		if want := writes + 1 - writes/3; len(es) != want {
			t.Fatalf("self has %d edges, want %d", len(es), want)
		}
		deps, _ := g.Dependents(ctx, []string{"clm_0@1"}, graph.DerivedFrom, nil)
		if len(deps) != writes+1 {
			t.Fatalf("%d dependents, want %d", len(deps), writes+1)
		}
	})

	t.Run("ClosedRefusesEverything", func(t *testing.T) {
		g := open(t)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := g.Apply(graph.Delta{Watermark: 1}); !errors.Is(err, graph.ErrClosed) {
			t.Fatalf("Apply after Close = %v", err)
		}
		if _, err := g.Watermark(); !errors.Is(err, graph.ErrClosed) {
			t.Fatalf("Watermark after Close = %v", err)
		}
		if _, err := g.Traverse(ctx, "ent_A", graph.Related, 1, everything); !errors.Is(err, graph.ErrClosed) {
			t.Fatalf("Traverse after Close = %v", err)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

func sortEdges(es []graph.Edge) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].String() < es[j-1].String(); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
