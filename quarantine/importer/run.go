package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// Target is where a source's category goes: the key prefix its memories
// are held under, and their claim kind ("" keeps the source's).
type Target struct {
	Key  string `json:"key"`
	Kind string `json:"kind,omitempty"`
}

// Map maps a source's categories (tags, block labels, relations) to
// [Target]s. A category it does not name lands under
// imported.<source>.<category>.
type Map map[string]Target

// ReadMap reads a mapping file (--map FILE): a JSON object from category
// to {"key": "prefix", "kind": "…"} or to a key prefix alone.
func ReadMap(file string) (Map, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: a mapping is a JSON object from category to key (or to {\"key\", \"kind\"}): %v", file, err)
	}
	m := Map{}
	for cat, v := range doc {
		var t Target
		if json.Unmarshal(v, &t.Key) != nil {
			if err := json.Unmarshal(v, &t); err != nil {
				return nil, fmt.Errorf("%s: category %q: want a key or {\"key\", \"kind\"}", file, cat)
			}
		}
		if !ValidPrefix(t.Key) || (t.Kind != "" && !validKind[t.Kind]) {
			return nil, fmt.Errorf("%s: category %q: %q is not a key prefix (dot-separated [a-z0-9_-] segments), or %q not a claim kind", file, cat, t.Key, t.Kind)
		}
		m[cat] = t
	}
	return m, nil
}

// ValidPrefix reports whether p can begin a key that has one segment
// more: 1–15 dot-separated segments of [a-z0-9_-] (none starting or ending
// with "_" or "-"), at most 191 bytes, so that with a last segment of up
// to 64 bytes it is a key (16 segments, 256 bytes at most).
func ValidPrefix(p string) bool {
	segs := strings.Split(p, ".")
	if p == "" || len(p) > 191 || len(segs) > 15 {
		return false
	}
	for _, s := range segs {
		if s == "" || s != slug(s) {
			return false
		}
	}
	return true
}

// TextSegment is the last key segment of a statement that has no id of
// its own: a digest of its text, so that the key says nothing of it.
func TextSegment(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// key is where m goes: its category's target (or
// imported.<source>.<category>), then one segment that is its own (its
// source id, or a digest of its text).
func (mp Map) key(source string, m Memory) (key, kind string) {
	t, ok := mp[m.Category]
	if !ok {
		t = Target{Key: "imported." + slug(source)}
		if m.Category != "" {
			t.Key += "." + slug(m.Category)
		}
	}
	own := m.SourceID
	if own == "" {
		own = TextSegment(m.Text)
	}
	kind = m.Kind
	if t.Kind != "" {
		kind = t.Kind
	}
	return t.Key + "." + slug(own), kind
}

// ParseTime reads a source's time: RFC 3339, a naive date-time (taken as
// UTC), a date, or a Unix epoch in seconds, milliseconds or fractional
// seconds (a number or a numeric string). ok is false for a value it
// cannot read (or none): the memory then has no time of its own.
func ParseTime(v any) (t time.Time, raw string, ok bool) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, "", false
	case json.Number:
		raw = x.String()
	case float64:
		raw = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		raw = strings.TrimSpace(x)
	default:
		return time.Time{}, fmt.Sprint(v), false
	}
	if raw == "" {
		return time.Time{}, "", false
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil && n > 0 {
		if n > 1e11 { // milliseconds
			return time.UnixMilli(n).UTC(), raw, true
		}
		return time.Unix(n, 0).UTC(), raw, true
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && f > 0 {
		sec := f
		if f > 1e11 { // milliseconds
			sec = f / 1000
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(frac*1e9)).UTC(), raw, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, raw); err == nil {
			return t.UTC(), raw, t.Year() > 0 && t.Year() < 10000
		}
	}
	return time.Time{}, raw, false
}

// Summary is what an import did.
type Summary struct {
	Source  string        `json:"source"`
	Seen    int           `json:"seen"`    // memories the source yielded
	Held    int           `json:"held"`    // held in the quarantine
	Dropped []Drop        `json:"dropped"` // left out, by location and reason
	Took    time.Duration `json:"-"`
}

// Sink holds a batch of records in the quarantine.
type Sink func(recs quarantine.Records) error

// Run imports in from src: a first pass reads the whole export and
// refuses it, holding nothing, if any of it is hostile or malformed; a
// second holds its memories through sink, batch at a time. progress, if
// not nil, is told the memories seen so far.
func Run(ctx context.Context, src Source, in *Input, m Map, now time.Time, batch int, sink Sink, progress func(seen int)) (Summary, error) {
	started := time.Now()
	if in.Size > in.Limits.MaxBytes {
		return Summary{}, refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
	}
	check := func(mem Memory) error {
		if len(mem.Text) > in.Limits.MaxTextBytes {
			return refused("memory %q is %d bytes, over the limit of %d", Clip(mem.SourceID, 64), len(mem.Text), in.Limits.MaxTextBytes)
		}
		return ctx.Err()
	}
	if err := src.Read(ctx, in, check, func(Drop) {}); err != nil {
		return Summary{}, err
	}
	sum := Summary{Source: src.Name(), Dropped: []Drop{}}
	var recs quarantine.Records
	flush := func() error {
		if len(recs.Claims) == 0 {
			return nil
		}
		if err := sink(recs); err != nil {
			return err
		}
		sum.Held += len(recs.Claims)
		recs = quarantine.Records{}
		return nil
	}
	emit := func(mem Memory) error {
		sum.Seen++
		if progress != nil {
			progress(sum.Seen)
		}
		where := src.Name() + " record " + strconv.Itoa(sum.Seen)
		if mem.SourceID != "" {
			where = src.Name() + " memory " + Clip(mem.SourceID, 128)
		}
		switch {
		case strings.TrimSpace(mem.Text) == "":
			sum.Dropped = append(sum.Dropped, Drop{Location: where, Reason: "empty"})
			return nil
		case HasCredential(mem.Text):
			sum.Dropped = append(sum.Dropped, Drop{Location: where, Reason: "holds a credential (an API key, token or password): dropped, never stored"})
			return nil
		}
		key, kind := m.key(src.Name(), mem)
		mem.Kind = kind
		c, err := mem.Claim(src.Name(), key, now)
		if err != nil {
			return err
		}
		recs.Claims = append(recs.Claims, c)
		if len(recs.Claims) >= batch {
			return flush()
		}
		return ctx.Err()
	}
	drop := func(d Drop) { sum.Dropped = append(sum.Dropped, d) }
	if err := src.Read(ctx, in, emit, drop); err != nil {
		return sum, err
	}
	if err := flush(); err != nil {
		return sum, err
	}
	sum.Took = time.Since(started)
	return sum, nil
}

// Result is the answer of an import (POST /phc/v1/import?from=…).
type Result struct {
	ImportID string `json:"import_id"`
	Summary
	TookMS int64 `json:"took_ms"`
}

// MapHeader carries a key map (a [Map] as JSON) with an import over HTTP.
const MapHeader = "PHC-Import-Map"
