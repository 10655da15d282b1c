package custodian

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian/internal/model"
)

// Search bounds.
const (
	maxSearchQuery = 256 // bytes
	defaultSearch  = 10  // results when the limit is left out
	maxSearch      = 50  // results at most
)

// SearchFields finds, among the fields p may read for purpose, those that
// match query, best first, at most limit of them (0: 10; at most 50). The
// query is lower-cased and split on white space; a field matches when
// every term is in its key (a key prefix such as "addresses.cur" or a
// segment such as "city" ranks highest) or in its value's text. It is a
// read like [Service.FieldContext]: a consumer's is decided by its grants
// and receipted, and discloses, values included, only the fields
// returned — never one it could not read otherwise, and never through its
// ranking. The owner searches every field.
func (s *Service) SearchFields(ctx context.Context, p Principal, query, purpose string, limit int) (SearchResult, error) {
	const op = "field.search"
	query = strings.TrimSpace(query)
	if query == "" || len(query) > maxSearchQuery || !utf8.ValidString(query) || strings.ContainsFunc(query, isControl) {
		return SearchResult{}, model.Fail(op, KindInvalid, "the query is 1 to 256 bytes of printable text")
	}
	switch {
	case limit == 0:
		limit = defaultSearch
	case limit < 0 || limit > maxSearch:
		return SearchResult{}, model.Fail(op, KindInvalid, "the limit is 1 to 50")
	}
	terms := strings.Fields(strings.ToLower(query))
	pick := func(rs []*claimRecord, byRef func(*claimRecord) bool) []*claimRecord {
		type hit struct {
			r     *claimRecord
			score int
		}
		var hits []hit
		for _, r := range rs {
			v := r.Head().Value
			if byRef != nil && byRef(r) {
				v = nil // served as a reference: its value answers no query
			}
			if n := searchScore(terms, r.Meta.Key, v); n > 0 {
				hits = append(hits, hit{r, n})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
		out := make([]*claimRecord, 0, min(len(hits), limit))
		for _, h := range hits[:min(len(hits), limit)] {
			out = append(out, h.r)
		}
		return out
	}
	out := SearchResult{Query: query, Fields: []Field{}}
	if p.Kind() == PrincipalConsumer {
		var err error
		if purpose, err = p.ReadPurpose(op, purpose); err != nil {
			return SearchResult{}, err
		}
		out.Fields, out.Warnings, out.Revision, err = s.consumerFieldsWhere(op, p, purpose, "*", true, pick)
		return out, err
	}
	type read struct {
		fs  []Field
		rev uint64
	}
	r, err := ownerRead(s, op, p, func(st *state) (read, error) {
		out := read{fs: []Field{}, rev: st.Revision}
		for _, r := range pick(st.fields("*"), nil) {
			out.fs = append(out.fs, fieldCached(r))
		}
		return out, nil
	})
	out.Fields, out.Revision = r.fs, r.rev
	return out, err
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// searchScore is how well key and value match every one of terms: 0 when
// one of them matches neither. A term that begins the key or a segment of
// it counts most, one inside the key less, one in the value's text least.
func searchScore(terms []string, key string, value json.RawMessage) int {
	lkey := strings.ToLower(key)
	var text string // the value's text, lower-cased, decoded only if needed
	score := 0
	for _, t := range terms {
		switch {
		case lkey == t:
			score += 100
		case strings.HasPrefix(lkey, t):
			score += 50
		case strings.Contains(lkey, "."+t) || strings.Contains(lkey, "_"+t):
			score += 30
		case strings.Contains(lkey, t):
			score += 10
		default:
			if text == "" {
				text = valueText(value)
			}
			if !strings.Contains(text, t) {
				return 0
			}
			score += 5
		}
	}
	return score
}

// valueText is the lower-cased text of a JSON value: its strings, numbers
// and member names, space separated.
func valueText(value json.RawMessage) string {
	var b strings.Builder
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case string:
			b.WriteString(strings.ToLower(v))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			if v {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		default:
			continue
		}
		b.WriteByte(' ')
	}
	if b.Len() == 0 {
		return " "
	}
	return b.String()
}
