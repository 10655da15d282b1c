package quarantine

import (
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Query selects held records: by status, by a problem's text (a
// substring, such as "identity unmapped" or "conflicts"), a page at a time
// (Cursor is the NextCursor of the page before).
type Query struct {
	Status  string
	Problem string
	Limit   int // 1–1000; 0: 100
	Cursor  string
}

// Page is a page of held records, oldest first, without bodies.
type Page struct {
	Records    []Held `json:"records"`
	Total      int    `json:"total"` // records the query selects
	NextCursor string `json:"next_cursor,omitempty"`
}

// Check refuses a malformed query with an [*Error]: an unknown status, a
// limit out of 1–1000, a problem over 256 bytes or a cursor that is not
// one.
func (q Query) Check() error {
	_, _, err := q.bounds()
	return err
}

// bounds returns the page's limit and offset.
func (q Query) bounds() (limit, offset int, err error) {
	if q.Status != "" && q.Status != StatusQuarantined && q.Status != StatusBlocked {
		return 0, 0, refuse("status is quarantined or blocked")
	}
	limit = q.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 || len(q.Problem) > 256 {
		return 0, 0, refuse("limit is 1 to 1000; problem at most 256 bytes")
	}
	if q.Cursor != "" {
		n, err := strconv.Atoi(q.Cursor)
		if err != nil || n < 0 {
			return 0, 0, refuse("malformed cursor")
		}
		offset = n
	}
	return limit, offset, nil
}

// Select returns the page of held that q selects, oldest first (by
// revision, then id), each record without its body. A query that [Query.Check]
// refuses selects nothing.
func (q Query) Select(held iter.Seq[*Held]) Page {
	limit, offset, err := q.bounds()
	out := Page{Records: []Held{}}
	if err != nil {
		return out
	}
	var all []Held
	for r := range held {
		if q.Status != "" && r.Status != q.Status {
			continue
		}
		if q.Problem != "" && !slices.ContainsFunc(r.Problems, func(pr string) bool { return strings.Contains(pr, q.Problem) }) {
			continue
		}
		c := *r
		c.Body = nil
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Revision != all[j].Revision {
			return all[i].Revision < all[j].Revision
		}
		return all[i].ID < all[j].ID
	})
	out.Total = len(all)
	if offset < len(all) {
		end := min(len(all), offset+limit)
		out.Records = all[offset:end]
		if end < len(all) {
			out.NextCursor = strconv.Itoa(end)
		}
	}
	return out
}
