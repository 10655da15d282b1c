package custodian_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
)

// Benchmarks of issue 4 (docs/design.md §8), in process, on the daemon's own
// storage: the encrypted bbolt store and Cayley's kv layer on a bbolt file.
// docs/benchmarks/history.md records their figures. Run them with
//
//	go test -run '^$' -bench 'Invalidate|Traverse3Hops' -benchtime 200x ./custodian/
//	go test -run '^$' -bench 'GraphRebuild' -benchtime 3x ./custodian/

// onDisk puts the service's store and graph in bbolt files under a
// temporary directory, as phc serve does.
func onDisk(tb testing.TB) func(*custodian.Config) {
	return func(c *custodian.Config) {
		dir := tb.TempDir()
		st, err := store.OpenBolt(filepath.Join(dir, "phc.db"), c.Vault.(*vault.Vault))
		if err != nil {
			tb.Fatal(err)
		}
		g, err := cayley.Open(filepath.Join(dir, "graph.db"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { g.Close(); st.Close() })
		c.Store, c.Graph = st, g
	}
}

// BenchmarkInvalidate10k: one correction of a claim with 10,000 transitive
// dependents (summaries of it, and summaries of those), timed from the call
// to its durable answer — the stale marks, their store writes and the graph
// update included.
func BenchmarkInvalidate10k(b *testing.B) {
	ts := newTestService(b, onDisk(b))
	ctx := b.Context()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := ts.mustClaim(fmt.Sprintf("bench.inv%d", i), "A").Claim
		if err := ts.BulkSummaries(ts.owner, a.Ref(), 10000); err != nil {
			b.Fatal(err)
		}
		runtime.GC() // the bulk load's garbage is not the correction's
		b.StartTimer()
		w, err := ts.Correct(ctx, ts.owner, a.ID, input[custodian.CorrectionInput](ts, []byte(`{"value": "B"}`)))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		list, err := ts.ListSummaries(ctx, ts.owner)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range list {
			if s.Status != custodian.SummaryStale || s.Stale.Revision > w.Revision {
				b.Fatalf("summary %s is %s after the correction", s.ID, s.Status)
			}
		}
		b.StartTimer()
	}
}

// graph100k builds 25,000 people, each with a name claim and three
// relationships (100,000 claims), and a consumer that may read people and
// relationships for "assist".
func graph100k(b *testing.B) (*testService, []string, custodian.Principal) {
	ts := newTestService(b, onDisk(b))
	if _, _, err := ts.PutSettings(b.Context(), ts.owner, input[custodian.SettingsInput](ts, []byte(`{"reads_per_minute": 10000000}`))); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	people, err := ts.BulkGraph(ts.owner, 25000, 3)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded 100,000 claims in %v", time.Since(t0))
	ts.mustConsumer("bench-reader")
	reader := ts.mustPrincipal("bench-reader", "*", "read")
	ts.mustGrant(grantSpec{recipient: "bench-reader", ops: []string{"read"}, keys: []string{"people.*", "rel.*"}})
	return ts, people, reader
}

// BenchmarkTraverse3Hops: a permission-checked 3-hop traversal on a
// 100,000-claim graph, as the owner (no receipt) and as a consumer (every
// edge and node checked against its grants, and a receipt committed).
func BenchmarkTraverse3Hops(b *testing.B) {
	ts, people, reader := graph100k(b)
	for _, who := range []struct {
		name string
		p    custodian.Principal
	}{{"owner", ts.owner}, {"consumer", reader}} {
		b.Run(who.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			edges := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				out, err := ts.Traverse(b.Context(), who.p, custodian.NeighborQuery{
					Node: people[(i*7919)%len(people)], Depth: 3, Purpose: "assist", Limit: 500})
				lat = append(lat, time.Since(t0))
				if err != nil || len(out.Edges) == 0 {
					b.Fatalf("Traverse = %d edges, %v", len(out.Edges), err)
				}
				edges += len(out.Edges)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(edges)/float64(b.N), "edges/op")
		})
	}
}

// BenchmarkGraphRebuild: rebuilding the graph of a 100,000-claim vault from
// the store.
func BenchmarkGraphRebuild(b *testing.B) {
	ts, _, _ := graph100k(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ts.RebuildGraph(b.Context(), ts.owner); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	rep, err := ts.Check(b.Context(), ts.owner)
	if err != nil || !rep.Graph.OK {
		b.Fatalf("Check after rebuild = %+v, %v", rep.Graph, err)
	}
	b.ReportMetric(float64(rep.Graph.Edges), "edges")
}
