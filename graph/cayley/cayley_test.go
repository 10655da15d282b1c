package cayley_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/graph/graphtest"
)

func openBolt(t testing.TB) *cayley.Graph {
	t.Helper()
	g, err := cayley.Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestMemory(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) graph.Graph {
		g := cayley.OpenMemory()
		t.Cleanup(func() { g.Close() })
		return g
	})
}

func TestBolt(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) graph.Graph { return openBolt(t) })
}

func TestBoltFileIsPrivateAndDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := cayley.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := graph.Edge{Subject: "ent_A", Predicate: graph.Related, Object: "ent_B", Label: "clm_1@1"}
	if err := g.Apply(graph.Delta{Add: []graph.Edge{e}, Watermark: 42}); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("graph file mode %o, want 600", perm)
	}
	// A file left world-readable by something else is tightened on open.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = cayley.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("graph file mode %o after reopening, want 600", fi.Mode().Perm())
	}
	if w, err := g.Watermark(); err != nil || w != 42 {
		t.Fatalf("Watermark after reopening = %d, %v", w, err)
	}
	es, err := g.Edges(context.Background(), "ent_A", graph.Out, graph.Related)
	if err != nil || len(es) != 1 || es[0] != e {
		t.Fatalf("Edges after reopening = %v, %v", es, err)
	}
}

func TestBoltFileHoldsNoNames(t *testing.T) {
	// The graph is given opaque ids only; this checks that nothing else
	// (such as a predicate spelled out by the caller) is needed to use it.
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := cayley.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Apply(graph.Delta{Add: []graph.Edge{{Subject: "ent_A", Predicate: graph.Related, Object: "ent_B", Label: "clm_1@1"}}, Watermark: 1}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"urn:phc:ent_A", "urn:phc:clm_1@1"} {
		if !containsBytes(raw, s) {
			t.Fatalf("the graph file does not hold %q: is the projection in it at all?", s)
		}
	}
}

func containsBytes(raw []byte, s string) bool {
	for i := 0; i+len(s) <= len(raw); i++ {
		if string(raw[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}

// chain builds n people in a ring with fan-out edges, labelled as claims.
func buildPeople(b testing.TB, g graph.Graph, people, degree int) {
	b.Helper()
	var d graph.Delta
	for i := 0; i < people; i++ {
		for k := 1; k <= degree/2; k++ {
			j := (i*7 + k*13) % people
			d.Add = append(d.Add, graph.Edge{
				Subject: fmt.Sprintf("ent_%08d", i), Predicate: graph.Related, Object: fmt.Sprintf("ent_%08d", j),
				Label: fmt.Sprintf("clm_%08d_%02d@1", i, k),
			})
		}
		if len(d.Add) >= 20000 {
			d.Watermark++
			if err := g.Apply(d); err != nil {
				b.Fatal(err)
			}
			d.Add = d.Add[:0]
		}
	}
	d.Watermark++
	if err := g.Apply(d); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkTraverse3Hops(b *testing.B) {
	for _, kind := range []string{"memory", "bolt"} {
		b.Run(kind, func(b *testing.B) {
			var g graph.Graph = cayley.OpenMemory()
			if kind == "bolt" {
				g = openBolt(b)
			}
			buildPeople(b, g, 25000, 8) // 100,000 relationship edges
			vis := graph.Visibility{Edge: func(graph.Edge) bool { return true }, Node: func(string) bool { return true }}
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				steps, err := g.Traverse(context.Background(), fmt.Sprintf("ent_%08d", i%25000), graph.Related, 3, vis)
				lat = append(lat, time.Since(t0))
				if err != nil || len(steps) == 0 {
					b.Fatal(err, len(steps))
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

func BenchmarkDependents10k(b *testing.B) {
	for _, kind := range []string{"memory", "bolt"} {
		b.Run(kind, func(b *testing.B) {
			var g graph.Graph = cayley.OpenMemory()
			if kind == "bolt" {
				g = openBolt(b)
			}
			var d graph.Delta
			for i := 0; i < 10000; i++ {
				parent := "clm_ROOT@1"
				if i >= 100 {
					parent = fmt.Sprintf("sum_%08d@1", i/100-1)
				}
				d.Add = append(d.Add, graph.Edge{Subject: fmt.Sprintf("sum_%08d@1", i), Predicate: graph.DerivedFrom, Object: parent})
			}
			d.Watermark = 1
			if err := g.Apply(d); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got, err := g.Dependents(context.Background(), []string{"clm_ROOT@1"}, graph.DerivedFrom, nil)
				if err != nil || len(got) != 10000 {
					b.Fatal(err, len(got))
				}
			}
		})
	}
}

// BenchmarkBulkApply: loading 200,000 edges (a 100,000-claim vault's
// projection) into an empty bolt graph, as a rebuild does.
func BenchmarkBulkApply(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		g := openBolt(b)
		var es []graph.Edge
		for p := 0; p < 25000; p++ {
			ent := fmt.Sprintf("ent_%08d", p)
			es = append(es, graph.Edge{Subject: fmt.Sprintf("clm_N%08d", p), Predicate: graph.About, Object: ent, Label: fmt.Sprintf("clm_N%08d@1", p)})
			for k := 0; k < 3; k++ {
				id := fmt.Sprintf("clm_R%08d%d", p, k)
				es = append(es, graph.Edge{Subject: id, Predicate: graph.About, Object: "self", Label: id + "@1"},
					graph.Edge{Subject: ent, Predicate: graph.Related, Object: fmt.Sprintf("ent_%08d", (p*7919+k)%25000), Label: id + "@1"})
			}
		}
		b.StartTimer()
		if err := g.Replace(es, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMemoryBatch(t *testing.T) {
	graphtest.RunBatch(t, func(t *testing.T) graphtest.Batcher {
		g := cayley.OpenMemory()
		t.Cleanup(func() { g.Close() })
		return g
	})
}

func TestBoltBatch(t *testing.T) {
	graphtest.RunBatch(t, func(t *testing.T) graphtest.Batcher { return openBolt(t) })
}
