package cayley

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/phc-project/phc/graph"
)

// claimID is the id of the i-th claim of a benchmark vault: spread over the
// id space as the custodian's random ids are, so that index keys and cached
// lists are written in no particular order.
func claimID(i int) string {
	x := uint64(i) + 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return fmt.Sprintf("clm_%016x", x^x>>31)
}

// claimDelta is one owner write: a new claim about self (labelled with its
// head ref) in one of a few personas, as custodian.claimEdges projects it.
func claimDelta(i int, w uint64) graph.Delta {
	id := claimID(i)
	return graph.Delta{Add: []graph.Edge{
		{Subject: id, Predicate: graph.About, Object: "self", Label: id + "@1"},
		{Subject: id, Predicate: graph.InPersona, Object: fmt.Sprintf("per_%02d", i%8)},
	}, Watermark: w}
}

// relationshipDelta is an owner write of a relationship from self: a new
// claim about self, and an edge from self to a new entity labelled with
// the claim's ref — self is the subject of ever more relationships.
func relationshipDelta(i int, w uint64) graph.Delta {
	id := claimID(i)
	return graph.Delta{Add: []graph.Edge{
		{Subject: id, Predicate: graph.About, Object: "self", Label: id + "@1"},
		{Subject: "self", Predicate: graph.Related, Object: "ent_" + id[4:], Label: id + "@1"},
	}, Watermark: w}
}

// boltHighWater is the size of the bolt file's used pages (its high-water
// mark: freed pages are reused before the file grows).
func boltHighWater(b *testing.B, g *Graph) int64 {
	var n int64
	if err := g.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkApplyClaim is the cost of one owner write as the vault grows: a
// claim applied on top of a graph already holding prior claims. On bolt the
// prior claims were written one Apply each, as a vault grows, so that any
// cost in the number of past writes shows; on the memstore they are loaded
// at once (it keeps no history). cache=warm first reads self's about edges,
// as a long-running custodian has them cached (self was fresh when the
// vault was made). Reports ns per Apply and, on bolt, the bytes the file's
// used pages grow and the bytes written to it (on Linux), per Apply.
//
//	go test ./graph/cayley -run '^$' -bench ApplyClaim -benchtime 2000x
func BenchmarkApplyClaim(b *testing.B) {
	benchmarkApply(b, claimDelta, []string{"bolt", "memory"}, graph.About)
}

// BenchmarkApplyRelationship is BenchmarkApplyClaim for relationships from
// self, on bolt: Cayley's kv layer indexes quads by (subject, predicate)
// and by (object, predicate, subject), one list of quad ids per key, and
// rewrites a key's whole list to add to it.
func BenchmarkApplyRelationship(b *testing.B) {
	benchmarkApply(b, relationshipDelta, []string{"bolt"}, graph.About, graph.Related)
}

func benchmarkApply(b *testing.B, write func(i int, w uint64) graph.Delta, kinds []string, warm ...string) {
	dir := b.TempDir()
	templates := map[int]string{} // prior writes → a bolt file holding them
	template := func(b *testing.B, prior int) string {
		if p, ok := templates[prior]; ok {
			return p
		}
		p := filepath.Join(dir, fmt.Sprintf("prior-%d.db", prior))
		g, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		g.db.NoSync = true // only to build the template quickly
		for i := 0; i < prior; i++ {
			if err := g.Apply(write(i, uint64(i+1))); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
		templates[prior] = p
		return p
	}
	for _, kind := range kinds {
		for _, prior := range []int{0, 10000, 100000} {
			for _, cache := range []string{"cold", "warm"} {
				b.Run(fmt.Sprintf("%s/prior=%d/cache=%s", kind, prior, cache), func(b *testing.B) {
					var g *Graph
					if kind == "bolt" {
						p := filepath.Join(b.TempDir(), "graph.db")
						copyFile(b, template(b, prior), p)
						var err error
						if g, err = Open(p); err != nil {
							b.Fatal(err)
						}
					} else {
						g = OpenMemory()
						d := graph.Delta{Watermark: uint64(prior)}
						for i := 0; i < prior; i++ {
							d.Add = append(d.Add, write(i, 0).Add...)
						}
						if err := g.Apply(d); err != nil {
							b.Fatal(err)
						}
					}
					defer g.Close()
					if cache == "warm" {
						for _, p := range warm {
							if _, err := g.Edges(context.Background(), "self", graph.Both, p); err != nil {
								b.Fatal(err)
							}
						}
					}
					var before, written int64
					if g.db != nil {
						before, written = boltHighWater(b, g), bytesWritten()
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := g.Apply(write(prior+i, uint64(prior+i+1))); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					if g.db != nil {
						b.ReportMetric(float64(boltHighWater(b, g)-before)/float64(b.N), "file-B/op")
						if written >= 0 {
							b.ReportMetric(float64(bytesWritten()-written)/float64(b.N), "written-B/op")
						}
					}
				})
			}
		}
	}
}

// bytesWritten is what the process has written so far (to the bolt file,
// in a benchmark): wchar in /proc/self/io, or -1 where there is none.
func bytesWritten() int64 {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
