package custodian

import (
	"context"
	"strconv"
	"time"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/internal/identity"
)

// Traverse walks the relationships around q.Node, breadth first, up to
// q.Depth hops. An edge is followed and returned only when the caller may
// see the relationship claim and both of its ends — a node is visible to a
// consumer when it may read some claim about it — and this is decided
// before anything is followed. Nothing hidden changes the answer: a hidden
// start node answers exactly as an absent one (KindNotFound), and pages,
// cursors and order are computed over what the caller may see.
func (s *Service) Traverse(ctx context.Context, p Principal, q NeighborQuery) (Neighbors, error) {
	const op = "graph.neighbors"
	if q.Node != SubjectSelf && !identity.ValidID(q.Node, "ent_") {
		return Neighbors{}, model.Fail(op, KindInvalid, "node must be self or an entity id")
	}
	if q.Relation != "" && !model.ValidRelation(q.Relation) {
		return Neighbors{}, model.Fail(op, KindInvalid, "malformed relation")
	}
	if q.Depth == 0 {
		q.Depth = 1
	}
	if q.Depth < 1 || q.Depth > MaxDepth {
		return Neighbors{}, model.Fail(op, KindInvalid, "depth must be 1 to 3")
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > 500 {
		return Neighbors{}, model.Fail(op, KindInvalid, "limit must be 1 to 500")
	}
	offset := 0
	if q.Cursor != "" {
		n, ok := parseCursor(q.Cursor)
		if !ok {
			return Neighbors{}, model.Fail(op, KindInvalid, "malformed cursor")
		}
		offset = n
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return Neighbors{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return Neighbors{}, err
	}
	defer release()
	if err := st.reached(op, q.MinRevision); err != nil {
		return Neighbors{}, err
	}
	// The graph follows the store a little behind: read it once it holds
	// every committed write (a traversal never misses the caller's own).
	if err := st.awaitGraph(op); err != nil {
		return Neighbors{}, err
	}
	switch p.Kind() {
	case PrincipalOwner:
		return readSettled(op, st, func() (Neighbors, error) {
			out, _, _, ok, err := s.neighbors(ctx, st, p, q, offset, s.eng.Clock.Now())
			if err != nil {
				return Neighbors{}, err
			}
			if !ok {
				return Neighbors{}, model.NotFound(op)
			}
			return out, nil
		})
	case PrincipalConsumer:
	default:
		return Neighbors{}, model.Fail(op, KindUnauthenticated, "")
	}
	if q.Purpose, err = p.ReadPurpose(op, q.Purpose); err != nil {
		return Neighbors{}, err
	}
	if !validPurpose(q.Purpose) {
		return Neighbors{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if !p.Token().CanRead() {
		return Neighbors{}, s.refuse(st, p, "graph.read", model.Fail(op, KindModeDenied, "the token does not allow reads"))
	}
	var out Neighbors
	var failure error
	rc := Receipt{Actor: p.Actor(), Operation: "graph.read", Recipient: p.Consumer, Purpose: q.Purpose}
	disclosed, err := s.recipientRead(st, p, rc, func(st *state, now time.Time) ([]string, []*Grant, *Error) {
		out, failure = Neighbors{}, nil
		if !st.live(p, now) {
			return nil, nil, nil
		}
		res, records, used, ok, err := s.neighbors(ctx, st, p, q, offset, now)
		if err != nil || !ok {
			failure = err
			return nil, nil, nil
		}
		out = res
		return records, used, nil
	})
	if err == nil {
		err = failure
	}
	if err != nil {
		return Neighbors{}, err
	}
	if !disclosed {
		return Neighbors{}, model.NotFound(op)
	}
	return out, nil
}

// neighbors runs the traversal for p on the view (with st.mu held). ok is
// false when the start node is absent or hidden. records are the refs
// disclosed (the claim that makes the start visible, then every edge), and
// used the grants relied on.
func (s *Service) neighbors(ctx context.Context, st *state, p Principal, q NeighborQuery, offset int, now time.Time) (out Neighbors, records []string, used []*Grant, ok bool, err error) {
	v := st.visibility(p, q.Purpose, q.Relation, now)
	if !v.node(q.Node) {
		return Neighbors{}, nil, nil, false, nil
	}
	steps, err := s.eng.Graph.Traverse(ctx, q.Node, graph.Related, q.Depth, graph.Visibility{Edge: v.edge, Node: v.node})
	if err != nil {
		return Neighbors{}, nil, nil, false, model.Wrap("graph.neighbors", KindInternal, err)
	}
	out = Neighbors{Node: q.Node, Edges: []NeighborEdge{}, Revision: st.Revision}
	if why := v.why[q.Node]; why != nil {
		records = append(records, why.Ref())
	}
	page := steps
	if offset >= len(page) {
		page = nil
	} else {
		page = page[offset:]
	}
	if len(page) > q.Limit {
		page = page[:q.Limit]
		out.NextCursor = strconv.Itoa(offset + q.Limit)
	}
	for _, step := range page {
		r := st.Claims[model.IDOfRef(step.Edge.Label)]
		rel, _ := model.RelationshipOf(r.Head())
		out.Edges = append(out.Edges, NeighborEdge{Edge: step.Edge.Label, From: rel.From, To: rel.To, Relation: rel.Relation, Depth: step.Depth})
		records = append(records, step.Edge.Label)
		for _, n := range []string{rel.From, rel.To} {
			if g := v.grant[n]; g != nil {
				used = append(used, g)
			}
		}
		if g := v.grant[step.Edge.Label]; g != nil {
			used = append(used, g)
		}
	}
	if g := v.grant[q.Node]; g != nil {
		used = append(used, g)
	}
	return out, records, distinctGrants(used), true, nil
}

// parseCursor reads a page cursor: an offset into what the caller may see,
// in canonical decimal, at most 2^20.
func parseCursor(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<20 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// visibility decides, for one caller and one traversal, which nodes and
// edges it may see, remembering each answer and the grant and claim behind
// it.
type visibility struct {
	st       *state
	p        Principal
	purpose  string
	relation string
	now      time.Time
	grants   []*Grant
	nodes    map[string]bool
	why      map[string]*Claim // node → a claim about it the caller may read
	grant    map[string]*Grant // node or edge ref → the grant that showed it
}

func (st *state) visibility(p Principal, purpose, relation string, now time.Time) *visibility {
	v := &visibility{st: st, p: p, purpose: purpose, relation: relation, now: now,
		nodes: map[string]bool{}, why: map[string]*Claim{}, grant: map[string]*Grant{}}
	if p.Kind() == PrincipalConsumer {
		v.grants = st.grantsFor(p.Consumer, OpRead, now)
	}
	return v
}

// node: the owner sees self and every entity; a consumer sees a node when
// it may read at least one claim about it that is not a relationship (see
// nodeWitness).
func (v *visibility) node(n string) bool {
	if seen, ok := v.nodes[n]; ok {
		return seen
	}
	ok := v.nodeUncached(n)
	v.nodes[n] = ok
	return ok
}

func (v *visibility) nodeUncached(n string) bool {
	if n != SubjectSelf && v.st.Entities[n] == nil {
		return false
	}
	if v.p.Kind() == PrincipalOwner {
		return true
	}
	var g *Grant
	w := v.st.nodeWitness(n, func(r *claimRecord) bool {
		g = v.st.readGrant(v.grants, v.p, r, v.purpose, v.now)
		return g != nil
	})
	if w == nil {
		return false
	}
	v.why[n], v.grant[n] = w.Head(), g
	return true
}

// edge: the relationship claim must be active at the labelled version, of
// the relation asked for, and readable by the caller.
func (v *visibility) edge(e graph.Edge) bool {
	id, ver, ok := model.ParseRef(e.Label)
	if !ok {
		return false
	}
	r := v.st.Claims[id]
	if r == nil || r.Meta.Status != StatusActive || r.Meta.Head != ver {
		return false
	}
	rel, ok := model.RelationshipOf(r.Head())
	if !ok || rel.From != e.Subject || rel.To != e.Object || (v.relation != "" && rel.Relation != v.relation) {
		return false
	}
	if v.p.Kind() == PrincipalOwner {
		return true
	}
	g := v.st.readGrant(v.grants, v.p, r, v.purpose, v.now)
	if g == nil {
		return false
	}
	v.grant[e.Label] = g
	return true
}
