// Package cayley implements the custodian's knowledge graph (package graph)
// on Cayley: its memstore ([OpenMemory]) or its kv layer over a bbolt file
// this package opens itself with mode 0600 ([Open]).
package cayley

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	cgraph "github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/cayley/graph/iterator"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/cayley/graph/memstore"
	"github.com/cayleygraph/cayley/graph/refs"
	"github.com/cayleygraph/quad"
	lru "github.com/hashicorp/golang-lru/v2"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/phc-project/phc/graph"
)

const (
	watermarkNode = graph.NS + "projection"
	watermarkPred = graph.NS + "watermark"
	idPrefix      = "urn:phc:"
)

var _ graph.Graph = (*Graph)(nil)

// Graph is the knowledge graph on Cayley. It is safe for concurrent use.
type Graph struct {
	mu      sync.RWMutex
	qs      cgraph.QuadStore
	adj     *lru.Cache[string, *edgeList] // node and predicate → its edges; kept current by Apply
	db      *bolt.DB                      // nil for the memstore
	kv      *boltKV                       // Cayley's storage on db; nil for the memstore
	path    string
	closed  bool
	wm      uint64 // the watermark (see watermark.go)
	wmStale bool   // a failed write left wm unsure: read the file
	// The kv layer's indexes scan reads a node's edges with one predicate
	// from (nil: none such): leading with subject or object, predicate.
	bySubject, byObject *ckv.QuadIndex
}

// OpenMemory returns an empty graph held in memory (Cayley's memstore).
func OpenMemory() *Graph {
	return &Graph{qs: memstore.New(), adj: newCache()}
}

// cacheNodes bounds the adjacency cache. Cayley's kv layer costs about
// 12 µs per node looked up on bbolt (a read transaction and a batch of
// value lookups), which puts a 3-hop traversal over the 5 ms target; the
// cache holds each recently used node's complete edge list, updated in
// place by every Apply, so it is never stale.
const cacheNodes = 1 << 18

func newCache() *lru.Cache[string, *edgeList] {
	c, err := lru.New[string, *edgeList](cacheNodes)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return c
}

// Open opens (creating it if needed) the graph kept in the bbolt file at
// path. The file is created with mode 0600 by this package, not by Cayley,
// whose own opener makes it world-readable.
func Open(path string) (*Graph, error) {
	if os.Getenv("CAYLEY_KV_INDEXES") != "" {
		// The scans below rely on the kv layer's default indexes.
		return nil, errors.New("graph: CAYLEY_KV_INDEXES is set; only the default indexes are supported")
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("graph: %w", err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("graph: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("graph: open %s: %w", path, err)
	}
	g := &Graph{db: db, path: path, adj: newCache()}
	if err := g.openKV(); err != nil {
		db.Close()
		return nil, fmt.Errorf("graph: %s: %w", path, err)
	}
	if err := g.loadWatermark(); err != nil {
		db.Close()
		return nil, fmt.Errorf("graph: %s: %w", path, err)
	}
	return g, nil
}

// kvOptions turns off the kv layer's bloom filters: each is sized for 100
// million quads (over 100 MB) whatever the graph holds, and only speeds up
// duplicate checks on write.
var kvOptions = cgraph.Options{ckv.OptNoBloom: true}

// graphIndexes are the kv layer's indexes in the files this package
// creates. The kv layer keeps, under each key of an index, the list of the
// ids of every quad ever written with that key — a deleted one stays — and
// rewrites the whole list to add one. Its default indexes lead with
// (subject, predicate) and (object, predicate, subject): under the first,
// a node with many edges of one predicate (self, with a relationship to
// everyone) has one long list, rewritten by every edge it gains. Keyed by
// subject, predicate and object, a list only holds the edges between two
// nodes; the scans by (subject, predicate) read a range of keys instead.
// Files made before keep the default indexes until they are rebuilt.
var graphIndexes = []ckv.QuadIndex{
	{Dirs: []quad.Direction{quad.Subject, quad.Predicate, quad.Object}},
	{Dirs: []quad.Direction{quad.Object, quad.Predicate, quad.Subject}},
}

// openKV opens Cayley's kv quad store on g.db, initialising it, with
// graphIndexes, when new.
func (g *Graph) openKV() error {
	kv := &boltKV{DB: hbolt.New(g.db)}
	qs, err := ckv.New(kv, kvOptions)
	if errors.Is(err, cgraph.ErrNotInitialized) {
		if err = ckv.Init(kv, kvOptions); err == nil {
			err = setIndexes(g.db, graphIndexes)
		}
		if err == nil {
			qs, err = ckv.New(kv, kvOptions)
		}
	}
	if err != nil {
		return err
	}
	inds, err := readIndexes(g.db)
	if err != nil {
		return err
	}
	g.qs, g.kv, g.bySubject, g.byObject = qs, kv, nil, nil
	for i, ind := range inds {
		if len(ind.Dirs) < 2 || ind.Dirs[1] != quad.Predicate {
			continue
		}
		switch ind.Dirs[0] {
		case quad.Subject:
			g.bySubject = &inds[i]
		case quad.Object:
			g.byObject = &inds[i]
		}
	}
	return nil
}

// Where the kv layer records its indexes, as JSON (see its
// writeIndexesMeta), and names an index's bucket.
var metaIndexes = [2][]byte{[]byte("meta"), []byte("indexes")}

func indexBucket(ind ckv.QuadIndex) []byte {
	b := make([]byte, len(ind.Dirs))
	for i, d := range ind.Dirs {
		b[i] = d.Prefix()
	}
	return b
}

// setIndexes makes inds the indexes of a kv store just initialised, empty,
// with the default ones.
func setIndexes(db *bolt.DB, inds []ckv.QuadIndex) error {
	data, err := json.Marshal(inds)
	if err != nil {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, ind := range ckv.DefaultQuadIndexes {
			if err := tx.DeleteBucket(indexBucket(ind)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return err
			}
		}
		for _, ind := range inds {
			if _, err := tx.CreateBucketIfNotExists(indexBucket(ind)); err != nil {
				return err
			}
		}
		meta := tx.Bucket(metaIndexes[0])
		if meta == nil {
			return errors.New("the kv store has no meta bucket")
		}
		return meta.Put(metaIndexes[1], data)
	})
}

// readIndexes reads the indexes of a kv store as the kv layer does.
func readIndexes(db *bolt.DB) ([]ckv.QuadIndex, error) {
	var inds []ckv.QuadIndex
	err := db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaIndexes[0])
		if meta == nil {
			return nil
		}
		if data := meta.Get(metaIndexes[1]); data != nil {
			return json.Unmarshal(data, &inds)
		}
		return nil
	})
	return inds, err
}

// replaceChunk is the edges per transaction of a Replace: bbolt makes room
// for each key of a transaction by moving the rest of its page, so one huge
// transaction of random keys is quadratic; many small ones pay a commit
// each. (Skipping the fsync of each saved little — the time is Cayley's
// indexing — and bbolt warns that a crash without it can corrupt the file.)
const replaceChunk = 10000

// Replace empties the graph and loads edges. The watermark is written last:
// until then it is 0, so a crash part way is seen as a graph to rebuild.
func (g *Graph) Replace(edges []graph.Edge, watermark uint64) error {
	if err := g.Reset(); err != nil {
		return err
	}
	for len(edges) > 0 {
		n := min(len(edges), replaceChunk)
		if err := g.Apply(graph.Delta{Add: edges[:n]}); err != nil {
			return err
		}
		edges = edges[n:]
	}
	return g.Apply(graph.Delta{Watermark: watermark})
}

// Reset empties the graph, watermark included, so that it can be rebuilt.
func (g *Graph) Reset() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return graph.ErrClosed
	}
	g.adj.Purge()
	if g.db == nil {
		g.qs = memstore.New()
		g.wm = 0
		return nil
	}
	if err := g.db.Update(func(tx *bolt.Tx) error {
		var names [][]byte
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, append([]byte{}, name...))
			return nil
		}); err != nil {
			return err
		}
		for _, n := range names {
			if err := tx.DeleteBucket(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("graph: reset: %w", err)
	}
	g.wm, g.wmStale = 0, false // its bucket went with the rest
	if err := g.openKV(); err != nil {
		return fmt.Errorf("graph: reset: %w", err)
	}
	return nil
}

// Close releases the graph. It is idempotent.
func (g *Graph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	err := g.qs.Close()
	if g.db != nil {
		err = errors.Join(err, g.db.Close())
	}
	return err
}

func toValue(s string) quad.Value {
	if s == "" {
		return nil
	}
	if strings.Contains(s, ":") {
		return quad.IRI(s)
	}
	return quad.IRI(idPrefix + s)
}

func fromValue(v quad.Value) string {
	switch v := v.(type) {
	case nil:
		return ""
	case quad.IRI:
		return strings.TrimPrefix(string(v), idPrefix)
	default:
		return quad.StringOf(v)
	}
}

func quadOf(e graph.Edge) quad.Quad {
	return quad.Quad{Subject: toValue(e.Subject), Predicate: toValue(e.Predicate), Object: toValue(e.Object), Label: toValue(e.Label)}
}

func edgeOf(q quad.Quad) graph.Edge {
	return graph.Edge{Subject: fromValue(q.Subject), Predicate: fromValue(q.Predicate), Object: fromValue(q.Object), Label: fromValue(q.Label)}
}

func valid(e graph.Edge) error {
	if e.Subject == "" || e.Predicate == "" || e.Object == "" {
		return fmt.Errorf("graph: edge %q has an empty part", e.String())
	}
	if !strings.Contains(e.Predicate, ":") {
		return fmt.Errorf("graph: predicate %q is not an IRI", e.Predicate)
	}
	return nil
}

// Apply applies d in one transaction: its removals, then its additions,
// and the new watermark. A watermark lower than the current one is
// refused: the graph never goes back.
func (g *Graph) Apply(d graph.Delta) error {
	return g.ApplyAll([]graph.Delta{d})
}

// ApplyAll applies ds, in order, in one transaction (one commit of the
// bolt file), reaching the last one's watermark: the graph ends as if each
// had been given to Apply in turn, or — if any would be refused — as it
// was. A delta is refused, and with it the batch, if its watermark is
// lower than the one before it (the graph's, for the first) or one of its
// edges is malformed. So a batch replayed after a crash must start, as the
// custodian's replay does, with the deltas above the watermark (or at it):
// those replay harmlessly, edges being added and removed idempotently.
func (g *Graph) ApplyAll(ds []graph.Delta) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return graph.ErrClosed
	}
	if len(ds) == 0 {
		return nil
	}
	cur, err := g.watermark()
	if err != nil {
		return err
	}
	w := cur
	for i, d := range ds {
		if d.Watermark < w {
			if i == 0 {
				return fmt.Errorf("graph: watermark %d is behind the graph's %d", d.Watermark, cur)
			}
			return fmt.Errorf("graph: delta %d's watermark %d is behind the one before it, %d", i, d.Watermark, w)
		}
		w = d.Watermark
		for _, es := range [][]graph.Edge{d.Remove, d.Add} {
			for _, e := range es {
				if err := valid(e); err != nil {
					return err
				}
			}
		}
	}
	changes := netChanges(ds)
	if len(changes) == 0 && w == cur {
		return nil
	}
	if err := g.commit(changes, w); err != nil {
		g.adj.Purge() // whatever the store kept, the cache is not trusted
		return err
	}
	for _, d := range ds {
		g.updateCache(d)
		g.cacheFresh(d)
	}
	return nil
}

// netChanges is what ds do to the store, applied in order, each delta's
// removals before its additions: for each quad they touch, the last thing
// done to it. Adding and removing are idempotent, so that is exactly what
// applying them one by one does. (It is also what makes a delta that
// removes and adds the same edge keep it: Cayley's kv layer, given both in
// one call, applies every addition first.)
func netChanges(ds []graph.Delta) []cgraph.Delta {
	last := map[quad.Quad]int{} // quad → its index in out
	var out []cgraph.Delta
	set := func(e graph.Edge, a cgraph.Procedure) {
		q := quadOf(e)
		if i, ok := last[q]; ok {
			out[i].Action = a
			return
		}
		last[q] = len(out)
		out = append(out, cgraph.Delta{Quad: q, Action: a})
	}
	for _, d := range ds {
		for _, e := range d.Remove {
			set(e, cgraph.Delete)
		}
		for _, e := range d.Add {
			set(e, cgraph.Add)
		}
	}
	return out
}

// cachedPreds are the predicates whose adjacency a fresh node gets in the
// cache at once: the ones traversal, node visibility and invalidation read.
var cachedPreds = []string{graph.Related, graph.About, graph.DerivedFrom}

// cacheFresh records the complete adjacency of d's fresh nodes — exactly
// d's edges, as they had none before — so that the first walk through a
// new summary or entity does not read Cayley.
func (g *Graph) cacheFresh(d graph.Delta) {
	if len(d.Fresh) == 0 {
		return
	}
	by := make(map[string][]graph.Edge, len(d.Fresh)*len(cachedPreds))
	fresh := make(map[string]bool, len(d.Fresh))
	for _, n := range d.Fresh {
		fresh[n] = true
		for _, p := range cachedPreds {
			by[cacheKey(n, p)] = nil
		}
	}
	for _, e := range d.Add {
		ends := []string{e.Subject}
		if e.Object != e.Subject {
			ends = append(ends, e.Object)
		}
		for _, n := range ends {
			k := cacheKey(n, e.Predicate)
			if list, ok := by[k]; ok && fresh[n] {
				by[k] = append(list, e)
			}
		}
	}
	for k, list := range by {
		if _, ok := g.adj.Peek(k); ok {
			continue // updateCache kept it current
		}
		graph.SortEdges(list)
		list = slices.CompactFunc(list, func(a, b graph.Edge) bool { return a == b })
		g.adj.Add(k, newEdgeList(list))
	}
}

// updateCache brings the cached edge lists of the nodes d touches up to
// date: its removals, then its additions. A node not in the cache stays
// out: its list is read in full when it is next needed.
func (g *Graph) updateCache(d graph.Delta) {
	for _, e := range d.Remove {
		g.cacheEdit(e, (*edgeList).remove)
	}
	for _, e := range d.Add {
		g.cacheEdit(e, (*edgeList).insert)
	}
}

// cacheEdit changes, with edit, the cached lists of e's two ends.
func (g *Graph) cacheEdit(e graph.Edge, edit func(*edgeList, graph.Edge)) {
	ks, ko := cacheKey(e.Subject, e.Predicate), cacheKey(e.Object, e.Predicate)
	if l, ok := g.adj.Peek(ks); ok {
		edit(l, e)
	}
	if ko != ks {
		if l, ok := g.adj.Peek(ko); ok {
			edit(l, e)
		}
	}
}

// watermarkQuad is the watermark as WriteNQuads exports it (and as graphs
// written before watermark.go kept it).
func watermarkQuad(w uint64) quad.Quad {
	return quad.Quad{Subject: quad.IRI(watermarkNode), Predicate: quad.IRI(watermarkPred), Object: quad.Int(int64(w))}
}

// Watermark is the revision of the canonical store the graph reflects: 0
// for an empty graph.
func (g *Graph) Watermark() (uint64, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return 0, graph.ErrClosed
	}
	return g.watermark()
}

// scan calls fn for every quad with v in direction dir and, when pred is
// not empty, predicate pred. The quads' values are fetched in one batch.
func (g *Graph) scan(ctx context.Context, dir quad.Direction, v quad.Value, pred string, fn func(quad.Quad) error) error {
	ref, err := g.qs.ValueOf(v)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	if ref == nil {
		return nil
	}
	var predKey any
	if pred != "" {
		pr, err := g.qs.ValueOf(quad.IRI(pred))
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
		if pr == nil {
			return nil
		}
		predKey = refs.ToKey(pr)
	}
	var prims []cgraph.Ref
	var shape interface{ Iterate() iterator.Scanner } = g.qs.QuadIterator(dir, ref)
	ind := g.bySubject
	if dir == quad.Object {
		ind = g.byObject
	}
	if kqs, ok := g.qs.(*ckv.QuadStore); ok && predKey != nil && ind != nil {
		// Scan only this node's edges with this predicate: the kv layer's
		// indexes lead with (subject, predicate) and (object, predicate),
		// but its one-direction iterator does not use the second part, so
		// a node with many edges of other kinds (self, the object of every
		// claim) would be read in full.
		pr, _ := g.qs.ValueOf(quad.IRI(pred))
		shape = ckv.IndexScan{Index: *ind, Values: []uint64{uint64(ref.(ckv.Int64Value)), uint64(pr.(ckv.Int64Value))}}.BuildIterator(kqs)
	}
	it := shape.Iterate()
	for it.Next(ctx) {
		prims = append(prims, it.Result())
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	// Resolve every direction of every quad in one batch.
	parts := make([]cgraph.Ref, 0, 4*len(prims))
	kept := prims[:0]
	for _, pr := range prims {
		var dirs [4]cgraph.Ref
		for i, d := range quad.Directions {
			if dirs[i], err = g.qs.QuadDirection(pr, d); err != nil {
				return fmt.Errorf("graph: %w", err)
			}
		}
		if predKey != nil && (dirs[1] == nil || refs.ToKey(dirs[1]) != predKey) {
			continue
		}
		kept = append(kept, pr)
		parts = append(parts, dirs[:]...)
	}
	vals, err := cgraph.ValuesOf(ctx, g.qs, parts)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	for i := range kept {
		q := quad.Quad{Subject: vals[4*i], Predicate: vals[4*i+1], Object: vals[4*i+2], Label: vals[4*i+3]}
		if !q.IsValid() {
			continue
		}
		if err := fn(q); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Edges returns the edges with predicate pred (every predicate if empty)
// that have node at the ends dir names, sorted by label, subject and
// object.
func (g *Graph) Edges(ctx context.Context, node string, dir graph.Direction, pred string) ([]graph.Edge, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, graph.ErrClosed
	}
	return g.edges(ctx, node, dir, pred)
}

func (g *Graph) edges(ctx context.Context, node string, dir graph.Direction, pred string) ([]graph.Edge, error) {
	var all iter.Seq[graph.Edge]
	if pred == "" {
		es, err := g.read(ctx, node, "")
		if err != nil {
			return nil, err
		}
		all = slices.Values(es)
	} else {
		l, err := g.adjacent(ctx, node, pred)
		if err != nil {
			return nil, err
		}
		all = l.all()
	}
	var out []graph.Edge
	for e := range all {
		if (dir&graph.Out != 0 && e.Subject == node) || (dir&graph.In != 0 && e.Object == node) {
			out = append(out, e)
		}
	}
	return out, nil
}

func cacheKey(node, pred string) string { return node + " " + pred }

// adjacent returns every edge of node with predicate pred, in either
// direction, sorted, from the cache or Cayley. The list is shared: callers
// hold g.mu for reading while they use it, and must not modify it.
func (g *Graph) adjacent(ctx context.Context, node, pred string) (*edgeList, error) {
	if l, ok := g.adj.Get(cacheKey(node, pred)); ok {
		return l, nil
	}
	out, err := g.read(ctx, node, pred)
	if err != nil {
		return nil, err
	}
	l := newEdgeList(out)
	g.adj.Add(cacheKey(node, pred), l)
	return l, nil
}

// read reads node's edges with predicate pred (any, if empty) from Cayley.
func (g *Graph) read(ctx context.Context, node, pred string) ([]graph.Edge, error) {
	v := toValue(node)
	if v == nil {
		return nil, nil
	}
	var out []graph.Edge
	add := func(q quad.Quad) error {
		if q.Subject != quad.IRI(watermarkNode) {
			out = append(out, edgeOf(q))
		}
		return nil
	}
	if err := g.scan(ctx, quad.Subject, v, pred, add); err != nil {
		return nil, err
	}
	if err := g.scan(ctx, quad.Object, v, pred, func(q quad.Quad) error {
		if q.Subject == v {
			return nil // a loop, already listed
		}
		return add(q)
	}); err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}

// Each calls fn for every edge of the graph (the watermark aside), in no
// particular order.
func (g *Graph) Each(ctx context.Context, fn func(graph.Edge) error) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return graph.ErrClosed
	}
	it := g.qs.QuadsAllIterator().Iterate()
	defer it.Close()
	for it.Next(ctx) {
		q, err := g.qs.Quad(it.Result())
		if err != nil {
			return fmt.Errorf("graph: %w", err)
		}
		if !q.IsValid() || q.Subject == quad.IRI(watermarkNode) {
			continue
		}
		if err := fn(edgeOf(q)); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	return ctx.Err()
}

// Traverse walks the edges with predicate pred in both directions from
// start, breadth first, up to depth hops. An edge is followed and returned
// only when vis allows the edge and both of its ends; so nothing hidden
// influences what is returned or in which order. Edges come in BFS order,
// each node's edges sorted by label, subject and object. start itself must
// be visible; the caller checks that.
func (g *Graph) Traverse(ctx context.Context, start, pred string, depth int, vis graph.Visibility) ([]graph.Step, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, graph.ErrClosed
	}
	seen := map[string]bool{start: true}
	done := map[graph.Edge]bool{}
	frontier := []string{start}
	var out []graph.Step
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, n := range frontier {
			es, err := g.edges(ctx, n, graph.Both, pred)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				if done[e] || !vis.Edge(e) {
					continue
				}
				other := e.Object
				if other == n {
					other = e.Subject
				}
				if !vis.Node(e.Subject) || !vis.Node(e.Object) {
					continue
				}
				done[e] = true
				out = append(out, graph.Step{Edge: e, Depth: d, Node: other})
				if !seen[other] {
					seen[other] = true
					next = append(next, other)
				}
			}
		}
		frontier = next
	}
	return out, nil
}

// Dependents returns the transitive dependents of roots along pred: every
// node with a pred edge to a root, to such a node, and so on, breadth
// first. visit is asked once per dependent found; a node it refuses is
// neither returned nor followed (the custodian refuses summaries already
// stale: their own dependents were invalidated with them).
func (g *Graph) Dependents(ctx context.Context, roots []string, pred string, visit func(string) bool) ([]graph.Dependent, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, graph.ErrClosed
	}
	seen := map[string]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	queue := append([]string{}, roots...)
	var out []graph.Dependent
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		es, err := g.adjacent(ctx, n, pred)
		if err != nil {
			return nil, err
		}
		for e := range es.all() {
			if e.Object != n {
				continue
			}
			d := e.Subject
			if seen[d] {
				continue
			}
			seen[d] = true
			if visit != nil && !visit(d) {
				continue
			}
			out = append(out, graph.Dependent{Node: d, Via: n})
			queue = append(queue, d)
		}
	}
	return out, nil
}
