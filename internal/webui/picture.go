package webui

import (
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
// node: the node in the middle, the others around it; types names the
// entities' types.
func neighbourhood(n custodian.Neighbors, types map[string]string) *picture {
	w, h, r1 := 900, 520, 190
	if len(n.Edges) == 0 {
		w, h = 220, 70
	}
	pic := &picture{Width: w, Height: h}
	pos := map[string][2]int{}
	var order []string
	add := func(id string) {
		if _, ok := pos[id]; !ok {
			pos[id] = [2]int{}
			order = append(order, id)
		}
	}
	add(n.Node)
	for _, e := range n.Edges {
		add(e.From)
		add(e.To)
	}
	cx, cy := w/2, h/2
	others := len(order) - 1
	for i, id := range order {
		if i == 0 {
			pos[id] = [2]int{cx, cy}
			continue
		}
		// Spread over 300 degrees from the upper left, so that no two
		// neighbours sit in line with the centre.
		a := (-150 + 300*float64(i-1)/float64(max(others, 1))) * math.Pi / 180
		pos[id] = [2]int{cx + int(float64(r1)*1.45*math.Cos(a)), cy + int(float64(r1)*math.Sin(a))}
	}
	const bw, bh = 190, 44
	for _, e := range n.Edges {
		a, b := pos[e.From], pos[e.To]
		x1, y1 := toBorder(b, a, bw, bh)
		x2, y2 := toBorder(a, b, bw, bh)
		pic.Edges = append(pic.Edges, pedge{X1: x1, Y1: y1, X2: x2, Y2: y2, LX: (x1 + x2) / 2, LY: (y1+y2)/2 - 4, Label: short(e.Relation, maxLabel)})
	}
	for i, id := range order {
		p := pos[id]
		nd := pnode{ID: id, X: p[0] - bw/2, Y: p[1] - bh/2, W: bw, H: bh, Label: short(id, 22), Sub: types[id],
			Href: "/graph?node=" + url.QueryEscape(id), Fill: fillEntity, Line: lineEntity, Highlighted: i == 0}
		if id == custodian.SubjectSelf {
			nd.Sub = "the owner"
		}
		pic.Nodes = append(pic.Nodes, nd)
	}
	return pic
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
