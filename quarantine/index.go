package quarantine

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Index is what a vault keeps in memory of the records it holds: for each,
// its revision, kind, status and problems — enough to order, count, select
// and adopt them, and to tell whether one is still held as it was read.
// The records themselves (each [Held]'s description and body) stay in the
// vault's store, read a page or a chunk at a time, so that a quarantine of
// a million records costs the vault's memory about a hundred bytes each.
//
// Problems are kept once per distinct list (records of one import mostly
// share theirs), counted by status, so that a query by problem or status
// is counted without reading any record.
//
// An Index is not safe for concurrent use: the vault changes it under its
// write lock and reads it under its read lock.
type Index struct {
	held  map[string]entry
	order []slot // by revision, then id; a slot is dead unless held names it at its revision
	dead  int
	lists []problemList
	byKey map[string]int32 // a problem list's key → its place in lists
	free  []int32          // places in lists no record uses
}

// entry is an Index's memory of one held record.
type entry struct {
	rev      uint64
	problems int32 // its place in Index.lists
	kind     uint8
	status   uint8
}

type slot struct {
	rev uint64
	id  string
}

// problemList is one distinct list of problems, and how many held records
// of each status have it.
type problemList struct {
	text []string
	n    [2]int32
}

// Kinds of held records, in the order an adopt of all takes them: a
// claim may be about an entity and in a persona adopted before it, a
// summary derives from claims adopted before it.
var kinds = []string{"persona", "entity", "claim", "summary"}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{held: map[string]entry{}, byKey: map[string]int32{}}
}

// Len is the number of held records.
func (x *Index) Len() int { return len(x.held) }

// Hold adds held record h, or replaces what the index says of it, at
// h.Revision, which is the vault's newest: the order stays by revision,
// then id, at the cost of moving the records of that revision whose ids
// sort after h's (none when they are held by id, as [Hold] does).
func (x *Index) Hold(h *Held) {
	x.put(h)
	s := slot{h.Revision, h.ID}
	i, found := slices.BinarySearchFunc(x.order, s, compareSlots)
	if found { // held again at the revision it had: its slot is alive again
		x.dead--
		return
	}
	x.order = slices.Insert(x.order, i, s)
}

// Add adds held record h as [Index.Hold] does, but at the end of the
// order: it is for loading an index, which [Index.Sort] ends.
func (x *Index) Add(h *Held) {
	x.put(h)
	x.order = append(x.order, slot{h.Revision, h.ID})
}

// Sort puts the order right after a load by [Index.Add].
func (x *Index) Sort() { slices.SortFunc(x.order, compareSlots) }

func (x *Index) put(h *Held) {
	if _, ok := x.held[h.ID]; ok {
		x.Release(h.ID)
	}
	e := entry{rev: h.Revision, kind: uint8(max(0, slices.Index(kinds, h.Kind))), problems: x.intern(h.Problems)}
	if h.Status == StatusBlocked {
		e.status = 1
	}
	x.lists[e.problems].n[e.status]++
	x.held[h.ID] = e
}

// intern returns the place of problems in x.lists, adding it if new.
func (x *Index) intern(problems []string) int32 {
	key := listKey(problems)
	if i, ok := x.byKey[key]; ok {
		return i
	}
	l := problemList{text: slices.Clone(problems)}
	var i int32
	if n := len(x.free); n > 0 {
		i, x.free = x.free[n-1], x.free[:n-1]
		x.lists[i] = l
	} else {
		i = int32(len(x.lists))
		x.lists = append(x.lists, l)
	}
	x.byKey[key] = i
	return i
}

// listKey names a list of problems: each with its length, so that no two
// lists share a name.
func listKey(problems []string) string {
	var b strings.Builder
	for _, p := range problems {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// Release forgets held record id (adopted or rejected); an id not held is
// no change.
func (x *Index) Release(id string) {
	e, ok := x.held[id]
	if !ok {
		return
	}
	delete(x.held, id)
	l := &x.lists[e.problems]
	if l.n[e.status]--; l.n[0]+l.n[1] == 0 {
		delete(x.byKey, listKey(l.text))
		l.text = nil
		x.free = append(x.free, e.problems)
	}
	if x.dead++; x.dead > 1024 && x.dead > len(x.held) {
		x.order = slices.DeleteFunc(x.order, func(s slot) bool { return !x.alive(s) })
		x.dead = 0
	}
}

func (x *Index) alive(s slot) bool {
	e, ok := x.held[s.id]
	return ok && e.rev == s.rev
}

// Entry is what the index says of one held record.
type Entry struct {
	Revision uint64
	Kind     string
	Blocked  bool
}

// Get returns what the index says of held record id, if it is held.
func (x *Index) Get(id string) (Entry, bool) {
	e, ok := x.held[id]
	if !ok {
		return Entry{}, false
	}
	return Entry{Revision: e.rev, Kind: kinds[e.kind], Blocked: e.status == 1}, true
}

// IDs returns the id of every held record, sorted.
func (x *Index) IDs() []string {
	ids := make([]string, 0, len(x.held))
	for id := range x.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Adoptable returns the records an adopt of all takes: every one that is
// not blocked, personas first, then entities, claims and summaries, each
// kind by id.
func (x *Index) Adoptable() []string {
	var ids []string
	for id, e := range x.held {
		if e.status == 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(x.held[a].kind, x.held[b].kind), strings.Compare(a, b))
	})
	return ids
}

// Selection is the page of held records a [Query] selects: their ids,
// oldest first, to be read from the vault's store.
type Selection struct {
	IDs        []string
	Total      int // records the query selects
	NextCursor string
}

// Select returns the page of held records q selects, oldest first (by
// revision, then id). A cursor names the last record of the page before
// (its revision and id), so that a page never repeats nor skips a record
// that stayed held while the pages were read. A query that [Query.Check]
// refuses selects nothing.
func (x *Index) Select(q Query) Selection {
	limit, after, err := q.bounds()
	out := Selection{IDs: []string{}}
	if err != nil {
		return out
	}
	status := -1
	if q.Status != "" {
		status = 0
		if q.Status == StatusBlocked {
			status = 1
		}
	}
	match := make([]bool, len(x.lists))
	for i, l := range x.lists {
		match[i] = q.Problem == "" || slices.ContainsFunc(l.text, func(pr string) bool { return strings.Contains(pr, q.Problem) })
		if match[i] {
			if status < 0 {
				out.Total += int(l.n[0] + l.n[1])
			} else {
				out.Total += int(l.n[status])
			}
		}
	}
	start, _ := slices.BinarySearchFunc(x.order, after, compareSlots)
	if after.id != "" && start < len(x.order) && x.order[start] == after {
		start++
	}
	for _, s := range x.order[start:] {
		e, ok := x.held[s.id]
		if !ok || e.rev != s.rev || !match[e.problems] || (status >= 0 && int(e.status) != status) {
			continue
		}
		if len(out.IDs) == limit {
			last := x.held[out.IDs[limit-1]]
			out.NextCursor = strconv.FormatUint(last.rev, 10) + "." + out.IDs[limit-1]
			break
		}
		out.IDs = append(out.IDs, s.id)
	}
	return out
}

func compareSlots(a, b slot) int {
	return cmp.Or(cmp.Compare(a.rev, b.rev), strings.Compare(a.id, b.id))
}
