package cayley

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	cgraph "github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/quad"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/phc-project/phc/graph"
)

func edgesOf(t *testing.T, g *Graph) []graph.Edge {
	t.Helper()
	var es []graph.Edge
	if err := g.Each(context.Background(), func(e graph.Edge) error { es = append(es, e); return nil }); err != nil {
		t.Fatal(err)
	}
	graph.SortEdges(es)
	return es
}

// legacyFile writes a graph as this package did before the watermark had
// a bucket: every Apply replaced the watermark quad, here writes times.
func legacyFile(t *testing.T, writes int) (string, []graph.Edge) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	lg := &Graph{db: db, adj: newCache()}
	if err := lg.openKV(); err != nil {
		t.Fatal(err)
	}
	qs := lg.qs
	var es []graph.Edge
	for w := 1; w <= writes; w++ {
		e := claimDelta(w, 0).Add[0]
		es = append(es, e)
		ds := []cgraph.Delta{{Quad: quadOf(e), Action: cgraph.Add}}
		if w > 1 {
			ds = append(ds, cgraph.Delta{Quad: watermarkQuad(uint64(w - 1)), Action: cgraph.Delete})
		}
		ds = append(ds, cgraph.Delta{Quad: watermarkQuad(uint64(w)), Action: cgraph.Add})
		if err := qs.ApplyDeltas(ds, cgraph.IgnoreOpts{IgnoreDup: true, IgnoreMissing: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	graph.SortEdges(es)
	return path, es
}

// TestLegacyWatermarkRebuilt: a file that keeps its watermark as quads
// (as this package once wrote them) reports watermark 0, so that the
// custodian rebuilds it; the rebuild leaves no watermark quad behind, and
// the file then keeps its watermark across a reopen.
func TestLegacyWatermarkRebuilt(t *testing.T) {
	path, es := legacyFile(t, 50)
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := g.Watermark(); err != nil || w != 0 {
		t.Fatalf("Watermark of a legacy file = %d, %v; want 0 (to be rebuilt)", w, err)
	}
	if err := g.Replace(es, 50); err != nil {
		t.Fatal(err)
	}
	if got := edgesOf(t, g); !reflect.DeepEqual(got, es) {
		t.Fatalf("edges after the rebuild: %d, want %d", len(got), len(es))
	}
	live := 0
	if err := g.scan(context.Background(), quad.Subject, quad.IRI(watermarkNode), watermarkPred, func(quad.Quad) error {
		live++
		return nil
	}); err != nil || live != 0 {
		t.Fatalf("%d watermark quads left after the rebuild (%v)", live, err)
	}
	if err := g.Apply(claimDelta(51, 51)); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	g, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if w, err := g.Watermark(); err != nil || w != 51 {
		t.Fatalf("Watermark after reopening = %d, %v; want 51", w, err)
	}
	var buf bytes.Buffer
	if err := g.WriteNQuads(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), watermarkPred); n != 1 {
		t.Fatalf("the export has %d watermarks:\n%s", n, buf.String())
	}
}

// TestNoWatermarkQuads: the watermark is never a quad, so nothing Cayley
// keeps grows with the number of writes but the writes' own edges.
func TestNoWatermarkQuads(t *testing.T) {
	g, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := 1; i <= 20; i++ {
		if err := g.Apply(claimDelta(i, uint64(i))); err != nil {
			t.Fatal(err)
		}
		if err := g.Apply(graph.Delta{Watermark: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []quad.Value{quad.IRI(watermarkNode), quad.IRI(watermarkPred), quad.Int(20)} {
		if ref, err := g.qs.ValueOf(v); err != nil || ref != nil {
			t.Fatalf("Cayley holds %v: %v, %v", v, ref, err)
		}
	}
}

// TestFailedWriteChangesNothing: when the transaction fails after Cayley
// wrote its part, neither the edges nor the watermark are kept.
func TestFailedWriteChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := claimDelta(1, 5)
	if err := g.Apply(first); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Edges(ctx, "self", graph.In, graph.About); err != nil { // cache it
		t.Fatal(err)
	}
	// Put a plain key where the watermark's bucket is: writing the
	// watermark, the transaction's last step, fails.
	if err := g.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(wmBucket); err != nil {
			return err
		}
		return tx.Cursor().Bucket().Put(wmBucket, []byte("in the way"))
	}); err != nil {
		t.Fatal(err)
	}
	second := claimDelta(2, 6)
	second.Remove = first.Add[:1]
	if err := g.Apply(second); err == nil {
		t.Fatal("Apply succeeded without its watermark")
	} else if !errors.Is(err, berrors.ErrIncompatibleValue) {
		t.Fatalf("Apply failed otherwise than meant: %v", err)
	}
	if got := edgesOf(t, g); !reflect.DeepEqual(got, sorted(first.Add)) {
		t.Fatalf("a failed Apply changed the edges: %v", got)
	}
	if got, err := g.Edges(ctx, "self", graph.In, graph.About); err != nil || !reflect.DeepEqual(got, first.Add[:1]) {
		t.Fatalf("a failed Apply changed Edges: %v, %v", got, err)
	}
	if w, _ := g.Watermark(); w == 6 {
		t.Fatal("a failed Apply moved the watermark")
	}
	// With the way clear, the same delta goes in.
	if err := g.db.Update(func(tx *bolt.Tx) error { return tx.Cursor().Bucket().Delete(wmBucket) }); err != nil {
		t.Fatal(err)
	}
	if err := g.Apply(second); err != nil {
		t.Fatal(err)
	}
	want := sorted(append(append([]graph.Edge{}, first.Add[1:]...), second.Add...))
	if got := edgesOf(t, g); !reflect.DeepEqual(got, want) {
		t.Fatalf("edges = %v, want %v", got, want)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	g, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := edgesOf(t, g); !reflect.DeepEqual(got, want) {
		t.Fatalf("edges after reopening = %v, want %v", got, want)
	}
	if w, err := g.Watermark(); err != nil || w != 6 {
		t.Fatalf("Watermark after reopening = %d, %v; want 6", w, err)
	}
}

func sorted(es []graph.Edge) []graph.Edge {
	es = append([]graph.Edge{}, es...)
	graph.SortEdges(es)
	return es
}
