package graphtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/phc-project/phc/graph"
)

// Batcher is a graph that can also apply several deltas in one
// transaction.
type Batcher interface {
	graph.Graph
	// ApplyAll applies ds in order, in one transaction, reaching the last
	// one's watermark: the graph ends as if each had been given to Apply
	// in turn — or, if any would be refused, as it was.
	ApplyAll(ds []graph.Delta) error
}

// RunBatch runs the contract of ApplyAll against graphs made by open, one
// per case (several per case of the property test).
func RunBatch(t *testing.T, open func(t *testing.T) Batcher) {
	ctx := context.Background()
	rel := func(from, to, label string) graph.Edge {
		return graph.Edge{Subject: from, Predicate: graph.Related, Object: to, Label: label}
	}
	all := func(t interface {
		Helper()
		Fatalf(string, ...any)
	}, g graph.Graph) []graph.Edge {
		t.Helper()
		var es []graph.Edge
		if err := g.Each(ctx, func(e graph.Edge) error { es = append(es, e); return nil }); err != nil {
			t.Fatalf("Each: %v", err)
		}
		graph.SortEdges(es)
		return es
	}

	t.Run("ApplyAllIsApplyOneByOne", func(t *testing.T) {
		run := 0
		rapid.Check(t, func(rt *rapid.T) {
			run++
			a, b := open(t), open(t)
			defer a.Close()
			defer b.Close()
			m := newBatchModel(rt, run)
			for _, g := range []Batcher{a, b} {
				if err := g.Apply(m.base); err != nil {
					rt.Fatalf("Apply(base): %v", err)
				}
			}
			// The same reads on both, so that both backends' caches (if
			// any) hold the same nodes when the deltas come.
			for _, k := range m.warm {
				for _, g := range []Batcher{a, b} {
					if _, err := g.Edges(ctx, k.node, graph.Both, k.pred); err != nil {
						rt.Fatal(err)
					}
				}
			}
			if err := a.ApplyAll(m.batch); err != nil {
				rt.Fatalf("ApplyAll: %v", err)
			}
			for i, d := range m.batch {
				if err := b.Apply(d); err != nil {
					rt.Fatalf("Apply(delta %d): %v", i, err)
				}
			}
			want := m.result()
			for name, g := range map[string]Batcher{"ApplyAll": a, "Apply one by one": b} {
				if got := all(rt, g); !reflect.DeepEqual(got, want) {
					rt.Fatalf("%s: edges\n%v\nwant\n%v", name, got, want)
				}
				if w, err := g.Watermark(); err != nil || w != m.batch[len(m.batch)-1].Watermark {
					rt.Fatalf("%s: Watermark = %d, %v; want %d", name, w, err, m.batch[len(m.batch)-1].Watermark)
				}
			}
			// Every node's edges, as the caches answer them now.
			for _, n := range m.nodes() {
				for _, p := range append([]string{""}, batchPreds...) {
					for _, dir := range []graph.Direction{graph.Out, graph.In, graph.Both} {
						ea, err := a.Edges(ctx, n, dir, p)
						if err != nil {
							rt.Fatal(err)
						}
						eb, err := b.Edges(ctx, n, dir, p)
						if err != nil {
							rt.Fatal(err)
						}
						if !reflect.DeepEqual(ea, eb) {
							rt.Fatalf("Edges(%s, %v, %q): ApplyAll %v, one by one %v", n, dir, p, ea, eb)
						}
						if w := m.edges(want, n, dir, p); !reflect.DeepEqual(ea, w) && !(len(ea) == 0 && len(w) == 0) {
							rt.Fatalf("Edges(%s, %v, %q) = %v, want %v", n, dir, p, ea, w)
						}
					}
				}
			}
		})
	})

	t.Run("ApplyAllIsAllOrNothing", func(t *testing.T) {
		g := open(t)
		base := rel("ent_A", "ent_B", "clm_1@1")
		if err := g.Apply(graph.Delta{Add: []graph.Edge{base}, Watermark: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Edges(ctx, "ent_A", graph.Both, graph.Related); err != nil { // warm any cache
			t.Fatal(err)
		}
		good := graph.Delta{Remove: []graph.Edge{base}, Add: []graph.Edge{rel("ent_A", "ent_C", "clm_2@1")}, Watermark: 6}
		for name, batch := range map[string][]graph.Delta{
			"first behind the graph": {{Add: []graph.Edge{rel("ent_A", "ent_D", "clm_3@1")}, Watermark: 4}, good},
			"one behind another":     {good, {Add: []graph.Edge{rel("ent_A", "ent_D", "clm_3@1")}, Watermark: 5}},
			"a malformed edge":       {good, {Add: []graph.Edge{{Subject: "ent_A", Predicate: "related", Object: "ent_D"}}, Watermark: 7}},
		} {
			if err := g.ApplyAll(batch); err == nil {
				t.Fatalf("%s: the batch was applied", name)
			}
			if got := all(t, g); !reflect.DeepEqual(got, []graph.Edge{base}) {
				t.Fatalf("%s: a refused batch changed the edges: %v", name, got)
			}
			if got, _ := g.Edges(ctx, "ent_A", graph.Both, graph.Related); !reflect.DeepEqual(got, []graph.Edge{base}) {
				t.Fatalf("%s: a refused batch changed Edges: %v", name, got)
			}
			if w, _ := g.Watermark(); w != 5 {
				t.Fatalf("%s: a refused batch moved the watermark to %d", name, w)
			}
		}
		if err := g.ApplyAll(nil); err != nil {
			t.Fatalf("ApplyAll(nil) = %v", err)
		}
		if w, _ := g.Watermark(); w != 5 {
			t.Fatalf("ApplyAll(nil) moved the watermark to %d", w)
		}
	})

	t.Run("ApplyAllReplays", func(t *testing.T) {
		g := open(t)
		a, b := rel("ent_A", "ent_B", "clm_1@1"), rel("ent_A", "ent_B", "clm_1@2")
		batch := []graph.Delta{
			{Add: []graph.Edge{a}, Watermark: 2},
			{Remove: []graph.Edge{a}, Add: []graph.Edge{b}, Watermark: 3},
			{Add: []graph.Edge{rel("ent_B", "ent_C", "clm_2@1")}, Watermark: 3},
		}
		if err := g.ApplyAll(batch); err != nil {
			t.Fatal(err)
		}
		want := all(t, g)
		if len(want) != 2 {
			t.Fatalf("edges = %v", want)
		}
		// The deltas the graph has not reached yet — none but those at
		// its watermark — replay as harmlessly as one delta does; a batch
		// reaching back behind the watermark is refused, as Apply would
		// refuse its first delta.
		if err := g.ApplyAll(batch[1:]); err != nil {
			t.Fatalf("replaying the deltas at the watermark: %v", err)
		}
		if err := g.ApplyAll(batch); err == nil {
			t.Fatal("a batch behind the watermark was applied")
		}
		if got := all(t, g); !reflect.DeepEqual(got, want) {
			t.Fatalf("after replays: %v, want %v", got, want)
		}
		if w, _ := g.Watermark(); w != 3 {
			t.Fatalf("Watermark = %d, want 3", w)
		}
	})

	t.Run("ApplyAllAfterClose", func(t *testing.T) {
		g := open(t)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.ApplyAll([]graph.Delta{{Watermark: 1}}); !errors.Is(err, graph.ErrClosed) {
			t.Fatalf("ApplyAll after Close = %v", err)
		}
	})
}

var batchPreds = []string{graph.Related, graph.About, graph.DerivedFrom}

type cacheKey struct{ node, pred string }

// batchModel is one random case of ApplyAllIsApplyOneByOne: a base delta,
// the nodes read before the batch, and a batch of deltas over a handful of
// nodes, predicates and labels, so that deltas often add and remove the
// same edges; some deltas bring fresh nodes, which later ones may use.
type batchModel struct {
	base  graph.Delta
	warm  []cacheKey
	batch []graph.Delta
	fresh []string
}

var batchNodes = []string{"self", "ent_A", "ent_B", "ent_C"}

func newBatchModel(rt *rapid.T, run int) *batchModel {
	m := &batchModel{}
	node := func(extra []string) *rapid.Generator[string] {
		return rapid.SampledFrom(append(append([]string{}, batchNodes...), extra...))
	}
	edge := func(extra []string) *rapid.Generator[graph.Edge] {
		return rapid.Custom(func(t *rapid.T) graph.Edge {
			return graph.Edge{
				Subject:   node(extra).Draw(t, "subject"),
				Predicate: rapid.SampledFrom(batchPreds).Draw(t, "predicate"),
				Object:    node(extra).Draw(t, "object"),
				Label:     rapid.SampledFrom([]string{"", "clm_1@1", "clm_2@1"}).Draw(t, "label"),
			}
		})
	}
	m.base = graph.Delta{Add: rapid.SliceOfN(edge(nil), 0, 12).Draw(rt, "base"), Watermark: 1}
	m.warm = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) cacheKey {
		return cacheKey{node(nil).Draw(t, "node"), rapid.SampledFrom(batchPreds).Draw(t, "pred")}
	}), 0, 8).Draw(rt, "warm")
	w := uint64(1)
	for i, n := 0, rapid.IntRange(1, 6).Draw(rt, "deltas"); i < n; i++ {
		var d graph.Delta
		var fresh []string
		if rapid.Bool().Draw(rt, "fresh") {
			// A node no delta has named yet, with edges in this delta.
			f := fmt.Sprintf("sum_%d_%d@1", run, len(m.fresh))
			fresh = append(fresh, f)
			d.Fresh = []string{f}
			for _, e := range rapid.SliceOfN(edge(fresh), 1, 4).Draw(rt, "fresh edges") {
				if rapid.Bool().Draw(rt, "as subject") {
					e.Subject = f
				} else {
					e.Object = f
				}
				d.Add = append(d.Add, e)
			}
		}
		d.Remove = append(d.Remove, rapid.SliceOfN(edge(m.fresh), 0, 5).Draw(rt, "remove")...)
		d.Add = append(d.Add, rapid.SliceOfN(edge(m.fresh), 0, 5).Draw(rt, "add")...)
		w += uint64(rapid.IntRange(0, 1).Draw(rt, "step"))
		d.Watermark = w
		m.batch = append(m.batch, d)
		m.fresh = append(m.fresh, fresh...)
	}
	return m
}

// result is the graph the case ends with, by the letter of the contract:
// each delta's removals, then its additions.
func (m *batchModel) result() []graph.Edge {
	set := map[graph.Edge]bool{}
	for _, d := range append([]graph.Delta{m.base}, m.batch...) {
		for _, e := range d.Remove {
			delete(set, e)
		}
		for _, e := range d.Add {
			set[e] = true
		}
	}
	var es []graph.Edge
	for e := range set {
		es = append(es, e)
	}
	graph.SortEdges(es)
	return es
}

func (m *batchModel) nodes() []string { return append(slices.Clone(batchNodes), m.fresh...) }

// edges is what Edges(n, dir, pred) must answer on the graph es.
func (m *batchModel) edges(es []graph.Edge, n string, dir graph.Direction, pred string) []graph.Edge {
	var out []graph.Edge
	for _, e := range es {
		if pred != "" && e.Predicate != pred {
			continue
		}
		if (dir&graph.Out != 0 && e.Subject == n) || (dir&graph.In != 0 && e.Object == n) {
			out = append(out, e)
		}
	}
	return out
}
