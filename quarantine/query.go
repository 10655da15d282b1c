package quarantine

import (
	"slices"
	"strconv"
	"strings"
)

// Query selects held records: by status, by a problem's text (a
// substring, such as "identity unmapped" or "conflicts"), a page at a time
// (Cursor is the NextCursor of the page before). [Index.Select] runs it.
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

// Selects reports whether q's status and problem select held record h
// (a page's record read from the store after the index chose it).
func (q Query) Selects(h *Held) bool {
	return (q.Status == "" || h.Status == q.Status) &&
		(q.Problem == "" || slices.ContainsFunc(h.Problems, func(pr string) bool { return strings.Contains(pr, q.Problem) }))
}

// Check refuses a malformed query with an [*Error]: an unknown status, a
// limit out of 1–1000, a problem over 256 bytes or a cursor that is not
// one.
func (q Query) Check() error {
	_, _, err := q.bounds()
	return err
}

// bounds returns the page's limit and the record its cursor names (none:
// the page starts at the oldest).
func (q Query) bounds() (limit int, after slot, err error) {
	if q.Status != "" && q.Status != StatusQuarantined && q.Status != StatusBlocked {
		return 0, slot{}, refuse("status is quarantined or blocked")
	}
	limit = q.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 || len(q.Problem) > 256 {
		return 0, slot{}, refuse("limit is 1 to 1000; problem at most 256 bytes")
	}
	if _, err := strconv.Atoi(q.Cursor); err == nil && !strings.HasPrefix(q.Cursor, "-") {
		// A cursor from before held records were indexed (an offset):
		// the pages start again from the oldest, which repeats records
		// but skips none.
		return limit, slot{}, nil
	}
	if q.Cursor != "" {
		rev, id, ok := strings.Cut(q.Cursor, ".")
		n, err := strconv.ParseUint(rev, 10, 64)
		if !ok || err != nil || !strings.HasPrefix(id, "qrn_") || len(id) > 64 {
			return 0, slot{}, refuse("malformed cursor")
		}
		after = slot{rev: n, id: id}
	}
	return limit, after, nil
}
