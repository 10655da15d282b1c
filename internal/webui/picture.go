package webui

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian"
)

// A picture is a graph laid out for SVG: the template draws it, escaping
// every label and link.
type picture struct {
	Width, Height int
	Nodes         []pnode
	Edges         []pedge
}

type pnode struct {
	ID          string // the record the node stands for
	X, Y, W, H  int
	Label, Sub  string
	Href        string
	Fill, Line  string // fixed colours, chosen here, never from data
	Highlighted bool
}

type pedge struct {
	X1, Y1, X2, Y2 int
	LX, LY         int
	Label          string
}

// Node colours by state.
const (
	fillCurrent = "#e6f4ea"
	lineCurrent = "#1e7b34"
	fillStale   = "#fdecea"
	lineStale   = "#b3261e"
	fillOld     = "#f1f3f4"
	lineOld     = "#80868b"
	fillEntity  = "#e8f0fe"
	lineEntity  = "#1a56c4"
)

const (
	nodeW           = 250
	nodeH           = 52
	colGap          = 90
	rowGap          = 24
	margin          = 20
	maxLineageDepth = 4
	maxLabel        = 26
)

// short cuts s to n runes, with an ellipsis.
func short(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// layout places nodes in columns (col may be negative) in the order given,
// and links edges between node ids.
type layout struct {
	cols  map[int][]pnode
	links [][3]string // from id, to id, label
}

func newLayout() *layout { return &layout{cols: map[int][]pnode{}} }

func (l *layout) has(id string) bool {
	for _, c := range l.cols {
		for _, n := range c {
			if n.ID == id {
				return true
			}
		}
	}
	return false
}

func (l *layout) add(col int, n pnode) {
	if !l.has(n.ID) {
		l.cols[col] = append(l.cols[col], n)
	}
}

func (l *layout) link(from, to, label string) { l.links = append(l.links, [3]string{from, to, label}) }

func (l *layout) picture() *picture {
	cols := make([]int, 0, len(l.cols))
	for c := range l.cols {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	pic := &picture{}
	at := map[string]pnode{}
	rows := 0
	for i, c := range cols {
		for j, n := range l.cols[c] {
			n.X, n.Y, n.W, n.H = margin+i*(nodeW+colGap), margin+j*(nodeH+rowGap), nodeW, nodeH
			n.Label, n.Sub = short(n.Label, maxLabel), short(n.Sub, maxLabel+6)
			pic.Nodes = append(pic.Nodes, n)
			at[n.ID] = n
		}
		rows = max(rows, len(l.cols[c]))
	}
	pic.Width = 2*margin + len(cols)*nodeW + max(len(cols)-1, 0)*colGap
	pic.Height = 2*margin + rows*nodeH + max(rows-1, 0)*rowGap
	for _, e := range l.links {
		a, ok1 := at[e[0]]
		b, ok2 := at[e[1]]
		if !ok1 || !ok2 {
			continue
		}
		var pe pedge
		if a.X == b.X { // same column: top to bottom
			pe = pedge{X1: a.X + a.W/2, Y1: a.Y + a.H, X2: b.X + b.W/2, Y2: b.Y}
		} else {
			pe = pedge{X1: a.X + a.W, Y1: a.Y + a.H/2, X2: b.X, Y2: b.Y + b.H/2}
			if b.X < a.X {
				pe = pedge{X1: a.X, Y1: a.Y + a.H/2, X2: b.X + b.W, Y2: b.Y + b.H/2}
			}
		}
		pe.LX, pe.LY, pe.Label = (pe.X1+pe.X2)/2, (pe.Y1+pe.Y2)/2-4, e[2]
		pic.Edges = append(pic.Edges, pe)
	}
	return pic
}

// Links are drawn relative to the session's path; under makes them whole.
func claimHref(id string) string   { return "/claims/" + url.PathEscape(id) }
func summaryHref(id string) string { return "/summaries/" + url.PathEscape(id) }

// under puts every link of p under base, the session's path; p may be nil.
func (p *picture) under(base string) *picture {
	if p == nil {
		return nil
	}
	for i := range p.Nodes {
		p.Nodes[i].Href = base + p.Nodes[i].Href
	}
	return p
}

func summaryNode(sm custodian.Summary, here bool) pnode {
	n := pnode{ID: sm.ID, Label: "summary " + sm.ID, Sub: "summary v" + strconv.Itoa(sm.Version) + " · " + sm.Status, Href: summaryHref(sm.ID), Highlighted: here}
	switch sm.Status {
	case custodian.SummaryCurrent:
		n.Fill, n.Line = fillCurrent, lineCurrent
	case custodian.SummaryStale:
		n.Fill, n.Line = fillStale, lineStale
		if sm.Stale != nil {
			n.Sub += ": " + sm.Stale.RootCause
		}
	default:
		n.Fill, n.Line = fillOld, lineOld
	}
	return n
}

// derivesFrom reports whether sm names a version of record id as parent.
func derivesFrom(sm custodian.Summary, id string) bool {
	for _, ref := range sm.DerivedFrom {
		if pid, _, _ := strings.Cut(ref, "@"); pid == id {
			return true
		}
	}
	return false
}

// claimLineage draws a claim's versions (oldest at the top) and the
// summaries made from them, and theirs, as the owner's lists hold them.
func claimLineage(cur custodian.Claim, versions []custodian.Claim, sums []custodian.Summary) *picture {
	l := newLayout()
	prev := ""
	for _, v := range versions {
		ref := v.Ref()
		n := pnode{ID: ref, Label: v.Key, Sub: "v" + strconv.Itoa(v.Version) + " · " + v.Status, Href: claimHref(v.ID), Highlighted: v.Version == cur.Version}
		if v.Version == cur.Version && v.Status == custodian.StatusActive {
			n.Fill, n.Line = fillCurrent, lineCurrent
		} else {
			n.Fill, n.Line = fillOld, lineOld
		}
		l.add(0, n)
		if prev != "" {
			l.link(prev, ref, "corrected")
		}
		prev = ref
	}
	var first []custodian.Summary
	for _, sm := range sums {
		for _, ref := range sm.DerivedFrom {
			if id, _, _ := strings.Cut(ref, "@"); id == cur.ID {
				l.add(1, summaryNode(sm, false))
				l.link(ref, sm.ID, "derived")
				first = append(first, sm)
			}
		}
	}
	for _, p := range first {
		for _, sm := range sums {
			if derivesFrom(sm, p.ID) {
				l.add(2, summaryNode(sm, false))
				l.link(p.ID, sm.ID, "derived")
			}
		}
	}
	return l.picture()
}

// summaryLineage draws a summary's ancestry (its parents to the left, as
// far as maxLineageDepth) and the summaries made from it (to the right).
func summaryLineage(sm custodian.Summary, sums []custodian.Summary, claims map[string]custodian.Claim) *picture {
	byID := map[string]custodian.Summary{}
	for _, x := range sums {
		byID[x.ID] = x
	}
	l := newLayout()
	l.add(0, summaryNode(sm, true))
	var up func(x custodian.Summary, col int)
	up = func(x custodian.Summary, col int) {
		if -col > maxLineageDepth {
			return
		}
		for _, ref := range x.DerivedFrom {
			id, _, _ := strings.Cut(ref, "@")
			if p, ok := byID[id]; ok {
				if !l.has(p.ID) {
					l.add(col, summaryNode(p, false))
					up(p, col-1)
				}
				l.link(p.ID, x.ID, "derived")
				continue
			}
			_, v, _ := strings.Cut(ref, "@")
			n := pnode{ID: ref, Label: ref, Sub: "claim (gone)", Href: claimHref(id), Fill: fillOld, Line: lineOld}
			if c, ok := claims[id]; ok {
				n.Label = c.Key
				if c.Ref() == ref && c.Status == custodian.StatusActive {
					n.Sub, n.Fill, n.Line = "v"+v+" · current", fillCurrent, lineCurrent
				} else {
					n.Sub, n.Fill, n.Line = "v"+v+" · now v"+strconv.Itoa(c.Version)+" "+c.Status, fillStale, lineStale
				}
			}
			l.add(col, n)
			l.link(ref, x.ID, "derived")
		}
	}
	up(sm, -1)
	for _, c := range sums {
		if derivesFrom(c, sm.ID) {
			l.add(1, summaryNode(c, false))
			l.link(sm.ID, c.ID, "derived")
		}
	}
	return l.picture()
}

// neighbourhood draws the relationships a traversal found around its
// node: the node in the middle, its neighbours on a ring around it and
// the nodes two hops away on a wider ring, each near the neighbour that
// leads to it; every node shows its name (names says them) and every edge
// its relation.
func neighbourhood(n custodian.Neighbors, names entityNames) *picture {
	const bw, bh = 190, 44
	if len(n.Edges) == 0 {
		pic := &picture{Width: 220, Height: 70}
		pic.Nodes = append(pic.Nodes, entityNode(n.Node, names, 110, 35, bw, bh, true))
		return pic
	}
	// Rings by hops from the centre, in the order the edges name them.
	adj := map[string][]string{}
	for _, e := range n.Edges {
		adj[e.From] = append(adj[e.From], e.To)
		adj[e.To] = append(adj[e.To], e.From)
	}
	hops := map[string]int{n.Node: 0}
	parent := map[string]string{}
	var rings [3][]string
	rings[0] = []string{n.Node}
	queue := []string{n.Node}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, next := range adj[id] {
			if _, seen := hops[next]; seen {
				continue
			}
			h := min(hops[id]+1, 2)
			hops[next], parent[next] = h, id
			rings[h] = append(rings[h], next)
			queue = append(queue, next)
		}
	}
	// The inner ring is wide enough for its boxes side by side; the outer
	// one lies a box's width and height further out, and wider still when
	// it holds many.
	circ := func(k int) float64 { return float64(k) * (bw + 30) / (2 * math.Pi) }
	rx1 := max(260, circ(len(rings[1]))*1.3)
	ry1 := max(130, rx1*0.5)
	rx2 := max(rx1+bw+70, circ(len(rings[2]))*1.3)
	ry2 := max(ry1+bh+70, rx2*0.5)
	if len(rings[2]) == 0 {
		rx2, ry2 = rx1, ry1
	}
	w := int(2*rx2) + bw + 2*margin
	h := int(2*ry2) + bh + 2*margin
	cx, cy := float64(w)/2, float64(h)/2
	pos := map[string][2]int{n.Node: {int(cx), int(cy)}}
	angle := map[string]float64{}
	// The inner ring: centred on the top; a few neighbours stay in its
	// upper part, so that no two sit in line with the centre (an edge
	// between them would run under the centre's box).
	k1 := len(rings[1])
	step1 := 2 * math.Pi / float64(max(k1, 1))
	if k1 <= 3 {
		step1 = 100 * math.Pi / 180
	}
	for i, id := range rings[1] {
		a := -math.Pi/2 + (float64(i)-float64(k1-1)/2)*step1
		angle[id] = a
		pos[id] = [2]int{int(cx + rx1*math.Cos(a)), int(cy + ry1*math.Sin(a))}
	}
	// The outer ring: each node near the neighbour that leads to it, its
	// siblings beside it, and each at least a box's width from the one
	// before (the ring holds them all: see rx2).
	gap := float64(bw+30) / rx2
	type want struct {
		id string
		a  float64
	}
	var outer []want
	for _, id := range rings[2] {
		var sibs []string
		for _, o := range rings[2] {
			if parent[o] == parent[id] {
				sibs = append(sibs, o)
			}
		}
		j := slices.Index(sibs, id)
		outer = append(outer, want{id, angle[parent[id]] + (float64(j)-float64(len(sibs)-1)/2)*gap})
	}
	slices.SortStableFunc(outer, func(a, b want) int { return cmp.Compare(a.a, b.a) })
	for i := range outer {
		if i > 0 && outer[i].a < outer[i-1].a+gap {
			outer[i].a = outer[i-1].a + gap
		}
	}
	// Pushed round so far that the last would reach the first: evenly,
	// then.
	if k2 := len(outer); k2 > 1 && outer[k2-1].a-outer[0].a > 2*math.Pi-gap {
		for i := range outer {
			outer[i].a = outer[0].a + 2*math.Pi*float64(i)/float64(k2)
		}
	}
	for _, o := range outer {
		pos[o.id] = [2]int{int(cx + rx2*math.Cos(o.a)), int(cy + ry2*math.Sin(o.a))}
	}
	// Crop the picture to its boxes.
	minX, minY, maxX, maxY := w, h, 0, 0
	for _, p := range pos {
		minX, minY = min(minX, p[0]-bw/2), min(minY, p[1]-bh/2)
		maxX, maxY = max(maxX, p[0]+bw/2), max(maxY, p[1]+bh/2)
	}
	for id, p := range pos {
		pos[id] = [2]int{p[0] - minX + margin, p[1] - minY + margin}
	}
	pic := &picture{Width: maxX - minX + 2*margin, Height: maxY - minY + 2*margin}
	for _, e := range n.Edges {
		a, b := pos[e.From], pos[e.To]
		x1, y1 := toBorder(b, a, bw, bh)
		x2, y2 := toBorder(a, b, bw, bh)
		pic.Edges = append(pic.Edges, pedge{X1: x1, Y1: y1, X2: x2, Y2: y2, LX: (x1 + x2) / 2, LY: (y1+y2)/2 - 4, Label: short(e.Relation, maxLabel)})
	}
	for _, ring := range rings {
		for _, id := range ring {
			p := pos[id]
			pic.Nodes = append(pic.Nodes, entityNode(id, names, p[0], p[1], bw, bh, id == n.Node))
		}
	}
	return pic
}

// entityNode is the box of graph node id centred at x, y: its name, and
// its type below.
func entityNode(id string, names entityNames, x, y, w, h int, here bool) pnode {
	nd := pnode{ID: id, X: x - w/2, Y: y - h/2, W: w, H: h, Label: short(names.Label(id), 22), Sub: names.TypeOf(id),
		Href: "/graph?node=" + url.QueryEscape(id), Fill: fillEntity, Line: lineEntity, Highlighted: here}
	if id == custodian.SubjectSelf {
		nd.Sub = "the owner"
	} else if names.Label(id) == id {
		nd.Label = short(id, 22)
	}
	return nd
}

// toBorder is where the line from the centre from to the centre to meets
// the border of a w×h box around to, so that an arrow ends at the box.
func toBorder(from, to [2]int, w, h int) (int, int) {
	dx, dy := float64(to[0]-from[0]), float64(to[1]-from[1])
	if dx == 0 && dy == 0 {
		return to[0], to[1]
	}
	t := math.Inf(1)
	if dx != 0 {
		t = float64(w) / 2 / math.Abs(dx)
	}
	if dy != 0 {
		t = min(t, float64(h)/2/math.Abs(dy))
	}
	return to[0] - int(t*dx), to[1] - int(t*dy)
}
