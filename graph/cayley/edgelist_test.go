package cayley

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/phc-project/phc/graph"
)

// TestEdgeListIsASortedSet checks the chunked list against a sorted slice,
// with lists long enough to split chunks and empty them.
func TestEdgeListIsASortedSet(t *testing.T) {
	edge := func(i int) graph.Edge {
		return graph.Edge{Subject: fmt.Sprintf("clm_%04d", i*7919%3000), Predicate: graph.About, Object: "self", Label: fmt.Sprintf("clm_%04d@1", i)}
	}
	check := func(t interface{ Fatalf(string, ...any) }, seed uint64, initial, ops int, insert float64) {
		r := rand.New(rand.NewPCG(seed, 0))
		var model []graph.Edge
		for _, i := range r.Perm(3000)[:initial] {
			model = append(model, edge(i))
		}
		graph.SortEdges(model)
		l := newEdgeList(slices.Clone(model))
		for n := 0; n < ops; n++ {
			e := edge(r.IntN(3000))
			i, found := slices.BinarySearchFunc(model, e, graph.CompareEdges)
			if r.Float64() < insert {
				l.insert(e)
				if !found {
					model = slices.Insert(model, i, e)
				}
			} else {
				l.remove(e)
				if found {
					model = slices.Delete(model, i, i+1)
				}
			}
			if n%97 == 0 || n == ops-1 {
				got := slices.Collect(l.all())
				if !slices.Equal(got, model) && !(len(got) == 0 && len(model) == 0) {
					t.Fatalf("after %d operations: %d edges, want %d", n+1, len(got), len(model))
				}
				if l.len() != len(model) {
					t.Fatalf("len = %d, want %d", l.len(), len(model))
				}
				for _, c := range l.chunks {
					if len(c) == 0 || len(c) > chunkMax {
						t.Fatalf("a chunk of %d edges", len(c))
					}
				}
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		check(rt, rapid.Uint64().Draw(rt, "seed"), rapid.IntRange(0, 3000).Draw(rt, "initial"),
			rapid.IntRange(0, 6000).Draw(rt, "ops"), rapid.Float64Range(0.1, 0.9).Draw(rt, "insert"))
	})
	// Grown from nothing to splitting chunks, then emptied again.
	check(t, 1, 0, 20000, 0.8)
	check(t, 2, 3000, 20000, 0.2)
}
