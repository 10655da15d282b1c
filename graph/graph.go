package graph

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
)

// Vocabulary. Predicates and types are IRIs; everything else in a quad is
// an opaque id (an implementation keeps it as urn:phc:<id>).
const (
	NS = "https://phc.local/ns#"

	Type        = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
	DerivedFrom = "http://www.w3.org/ns/prov#wasDerivedFrom" // summary ref → parent ref
	Related     = NS + "related"                             // from → to, labelled with the edge claim's ref
	About       = NS + "about"                               // claim id → its subject node (no label)
	InPersona   = NS + "inPersona"                           // claim id → persona node
)

// Edge is one quad: Subject -Predicate-> Object, in the graph named by
// Label (empty for none). Subject, Object and Label are ids or IRIs; an id
// never contains a colon.
type Edge struct {
	Subject, Predicate, Object, Label string
}

func (e Edge) String() string {
	return e.Subject + " " + e.Predicate + " " + e.Object + " " + e.Label
}

// Delta is one committed change to the projection: the edges it adds and
// removes, and the revision of the canonical store the graph reaches with
// it. Applying a delta is atomic and idempotent: adding an edge that is
// there, or removing one that is not, is not an error, so a delta replayed
// after a crash changes nothing twice.
//
// Fresh lists nodes the delta introduces: ids just minted, of which the
// graph holds no edge before the delta. An implementation may take the
// delta's edges as such a node's complete adjacency (to cache it) — so a
// node must never be listed that could already have edges.
type Delta struct {
	Add       []Edge   `json:"add,omitempty"`
	Remove    []Edge   `json:"remove,omitempty"`
	Fresh     []string `json:"fresh,omitempty"`
	Watermark uint64   `json:"watermark"`
}

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("graph: closed")

// Direction says which end of an edge a node is.
type Direction uint8

const (
	Out  Direction = 1 << iota // the node is the subject
	In                         // the node is the object
	Both = Out | In
)

// Step is one edge a traversal discloses, found at Depth hops (1 for the
// start node's own edges); Node is the end it reached.
type Step struct {
	Edge  Edge
	Depth int
	Node  string
}

// Visibility decides, for one caller, what a traversal may see. Both are
// asked before anything is followed or disclosed.
type Visibility struct {
	Edge func(Edge) bool   // may the caller see this edge (by its label)
	Node func(string) bool // may the caller see this node
}

// Dependent is a node found by Dependents, with the node through which it
// was first reached (a root or another dependent).
type Dependent struct {
	Node, Via string
}

// Graph is what every implementation provides and what the custodian
// projects its store into (custodian.Config.Graph); graphtest holds its
// contract.
type Graph interface {
	// Apply applies d in one transaction: its removals, its additions and
	// the new watermark. A watermark lower than the current one is
	// refused: the graph never goes back.
	Apply(d Delta) error
	// Watermark is the revision the graph reflects: 0 for an empty graph.
	Watermark() (uint64, error)
	// Edges returns the edges with predicate pred (any if empty) that have
	// node at the ends dir names, sorted by label, subject, predicate and
	// object.
	Edges(ctx context.Context, node string, dir Direction, pred string) ([]Edge, error)
	// Traverse walks the edges with predicate pred in both directions
	// from start, breadth first, up to depth hops. An edge is followed and
	// returned only when vis allows the edge and both of its ends, so
	// nothing hidden influences what is returned or in which order. Each
	// node's edges come sorted as Edges sorts them.
	Traverse(ctx context.Context, start, pred string, depth int, vis Visibility) ([]Step, error)
	// Dependents returns the transitive dependents of roots along pred —
	// every node with a pred edge to a root, to such a node, and so on —
	// breadth first. visit is asked once per dependent found; a node it
	// refuses is neither returned nor followed.
	Dependents(ctx context.Context, roots []string, pred string, visit func(string) bool) ([]Dependent, error)
	// Each calls fn for every edge (the watermark aside), in no order.
	Each(ctx context.Context, fn func(Edge) error) error
	// Reset empties the graph, watermark included.
	Reset() error
	// Replace empties the graph and loads edges, reaching watermark only
	// when all are in: a crash part way leaves a graph at watermark 0,
	// which the custodian rebuilds again.
	Replace(edges []Edge, watermark uint64) error
	// WriteNQuads writes every edge as N-Quads, sorted, ids as urn:phc:
	// IRIs, and the watermark last.
	WriteNQuads(ctx context.Context, w io.Writer) error
	// Close releases the graph; it is idempotent.
	Close() error
}

// SortEdges sorts es by label, subject, predicate and object.
func SortEdges(es []Edge) { slices.SortFunc(es, CompareEdges) }

// CompareEdges orders edges by label, subject, predicate and object.
func CompareEdges(a, b Edge) int {
	return cmp.Or(cmp.Compare(a.Label, b.Label), cmp.Compare(a.Subject, b.Subject),
		cmp.Compare(a.Predicate, b.Predicate), cmp.Compare(a.Object, b.Object))
}
