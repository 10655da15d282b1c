package custodian

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// FuzzParseScope: a token scope either parses into valid patterns or is
// refused as KindInvalid; it never panics.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"*", "identity.*", "a.b,c.*", " learning.* , x ", "", ",,", "A.b", "a..b", "a.*.*", strings.Repeat("a,", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseScope(s)
		if err != nil {
			if model.KindOf(err) != KindInvalid {
				t.Fatalf("parseScope(%q) kind = %v", s, model.KindOf(err))
			}
			return
		}
		for _, p := range ps {
			if !validPattern(p) {
				t.Fatalf("parseScope(%q) accepted invalid pattern %q", s, p)
			}
		}
	})
}

// FuzzParseTTL: a TTL is refused or lies within the bounds.
func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{`3600`, `"1h"`, `"30m"`, `-1`, `0`, `1e9`, `"1h30m"`, `null`, `"-5m"`, `99999999999999999999`, `{}`,
		`"30 minutes"`, `"8760h"`, `"1 day"`, `"999999 weeks"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		d, err := parseTTL(raw)
		if err != nil {
			if model.KindOf(err) != KindInvalid {
				t.Fatalf("parseTTL(%s) kind = %v", raw, model.KindOf(err))
			}
			return
		}
		if d < model.MinTokenTTL || d > model.TTLCeiling {
			t.Fatalf("parseTTL(%s) = %v, outside the bounds", raw, d)
		}
	})
}

// FuzzMatchKey: a key pattern matches a key only if the key is below its
// prefix; "*" matches all.
func FuzzMatchKey(f *testing.F) {
	f.Add("identity.*", "identity.name")
	f.Add("identity.*", "identityx")
	f.Add("a.b", "a.b")
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if !engine.MatchKey(pattern, key) {
			return
		}
		switch {
		case pattern == "*", pattern == key:
		case strings.HasSuffix(pattern, ".*") && strings.HasPrefix(key, strings.TrimSuffix(pattern, "*")) && len(key) > len(pattern)-1:
		default:
			t.Fatalf("matchKey(%q, %q) = true", pattern, key)
		}
	})
}

// FuzzSnapshotChunk: a chunk of the claim metas snapshot either fails to
// decode or decodes to metas that encode back to the same chunk.
func FuzzSnapshotChunk(f *testing.F) {
	m := claimMeta{ID: "clm_A", Head: 2, Status: StatusActive, Personas: []string{"work"}, Key: "a.b", Subject: SubjectSelf,
		Tier: "standard", Kind: "fact", HeadRev: 9}
	f.Add(engine.AppendMeta([]byte{engine.SnapFormat}, &m))
	f.Add([]byte{engine.SnapFormat, 0x80})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, chunk []byte) {
		recs, _, err := engine.DecodeSnapChunk(chunk, nil, map[string]string{}, nil)
		if err != nil {
			return
		}
		again := []byte{engine.SnapFormat}
		for _, r := range recs {
			again = engine.AppendMeta(again, &r.Meta)
		}
		recs2, _, err := engine.DecodeSnapChunk(again, nil, map[string]string{}, nil)
		if err != nil || len(recs2) != len(recs) {
			t.Fatalf("re-encoded chunk: %d metas, %v; want %d", len(recs2), err, len(recs))
		}
		for i := range recs {
			a, b := recs[i].Meta, recs2[i].Meta
			if a.ID != b.ID || a.Key != b.Key || a.HeadRev != b.HeadRev || len(a.Personas) != len(b.Personas) {
				t.Fatalf("meta %d changed through a round trip: %+v, %+v", i, a, b)
			}
		}
	})
}
