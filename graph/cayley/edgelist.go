package cayley

import (
	"iter"
	"slices"
	"sort"

	"github.com/phc-project/phc/graph"
)

// edgeList is the cached list of one node's edges with one predicate,
// sorted by graph.CompareEdges. It is kept in chunks, so that adding or
// removing one edge of a node with very many — self, the subject of every
// claim — moves at most a chunk, not the whole list: copying the list on
// every Apply made a write cost O(degree).
//
// Lists are changed in place, under g.mu held for writing (by Apply); they
// are only read under g.mu held for reading, and what a reader returns is
// a copy, so no reader ever sees one change.
type edgeList struct {
	chunks [][]graph.Edge // in order; each sorted, non-empty, at most chunkMax long
}

const chunkMax = 512

// newEdgeList makes a list of es, which must be sorted; it keeps es.
func newEdgeList(es []graph.Edge) *edgeList {
	l := &edgeList{}
	for len(es) > 0 {
		n := min(len(es), chunkMax/2)
		l.chunks = append(l.chunks, es[:n:n]) // full: the next chunk is not written over
		es = es[n:]
	}
	return l
}

// all yields the edges in order.
func (l *edgeList) all() iter.Seq[graph.Edge] {
	return func(yield func(graph.Edge) bool) {
		for _, c := range l.chunks {
			for _, e := range c {
				if !yield(e) {
					return
				}
			}
		}
	}
}

func (l *edgeList) len() int {
	n := 0
	for _, c := range l.chunks {
		n += len(c)
	}
	return n
}

// chunk is the chunk where e is or belongs: the first whose last edge is
// not before e, or the last chunk. l is not empty.
func (l *edgeList) chunk(e graph.Edge) int {
	i := sort.Search(len(l.chunks), func(i int) bool {
		c := l.chunks[i]
		return graph.CompareEdges(c[len(c)-1], e) >= 0
	})
	return min(i, len(l.chunks)-1)
}

func (l *edgeList) insert(e graph.Edge) {
	if len(l.chunks) == 0 {
		l.chunks = [][]graph.Edge{{e}}
		return
	}
	i := l.chunk(e)
	c := l.chunks[i]
	j, found := slices.BinarySearchFunc(c, e, graph.CompareEdges)
	if found {
		return
	}
	c = slices.Insert(c, j, e)
	if len(c) <= chunkMax {
		l.chunks[i] = c
		return
	}
	half := len(c) / 2
	l.chunks[i] = c[:half:half]
	l.chunks = slices.Insert(l.chunks, i+1, slices.Clone(c[half:]))
}

func (l *edgeList) remove(e graph.Edge) {
	if len(l.chunks) == 0 {
		return
	}
	i := l.chunk(e)
	c := l.chunks[i]
	j, found := slices.BinarySearchFunc(c, e, graph.CompareEdges)
	if !found {
		return
	}
	if c = slices.Delete(c, j, j+1); len(c) == 0 {
		l.chunks = slices.Delete(l.chunks, i, i+1)
	} else {
		l.chunks[i] = c
	}
}
