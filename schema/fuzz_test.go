package schema

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// addSeeds adds every testdata document and a few edge cases to the corpus.
func addSeeds(f *testing.F) {
	f.Helper()
	files, err := filepath.Glob("testdata/*/*/*.json")
	if err != nil {
		f.Fatal(err)
	}
	if len(files) == 0 {
		f.Fatal("no seed files in testdata")
	}
	for _, file := range files {
		f.Add(readFile(f, file))
	}
	for _, s := range []string{
		``, `null`, `12345678901234567890`, `1e999`, `-0.0E+00`, `"\ud83d\ude00"`, `"\ud800"`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[[[[[[]]]]]]`, `{} x`, "\"\xff\"", `"<>&\u2028"`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecode checks that Decode never panics, that every error wraps one of
// the sentinels, and that whatever Decode accepts survives json.Marshal and
// decodes again to an equal value.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	lim := Limits{MaxBytes: 1 << 16, MaxDepth: 16, MaxStringBytes: 1 << 12, MaxMembers: 1 << 10}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := Decode(raw, lim)
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Decode(%q) = %v; want an error wrapping a sentinel", raw, err)
			}
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(Decode(%q)) error: %v", raw, err)
		}
		// Marshalling may lengthen strings (escapes) but nothing else.
		again, err := Decode(out, Limits{MaxBytes: 6 * len(raw), MaxDepth: lim.MaxDepth, MaxStringBytes: lim.MaxStringBytes, MaxMembers: lim.MaxMembers})
		if err != nil {
			t.Fatalf("Decode(json.Marshal(Decode(%q)) = %q) error: %v", raw, out, err)
		}
		if !reflect.DeepEqual(v, again) {
			t.Fatalf("Decode(%q) = %#v; re-decoded from %q as %#v", raw, v, out, again)
		}
	})
}

// FuzzValidateProposal checks that validating arbitrary input never panics
// and always yields well-formed, sorted, capped, deterministic violations
// in the package's own words.
func FuzzValidateProposal(f *testing.F) {
	addSeeds(f)
	v := mustNew(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		doc, vs, err := v.DecodeValid(Proposal, raw, DefaultLimits())
		switch {
		case err != nil:
			if doc != nil || vs != nil {
				t.Fatalf("DecodeValid(%q) returned an error with results", raw)
			}
			return
		case vs == nil:
			if doc == nil {
				t.Fatalf("DecodeValid(%q) returned no document, violations or error", raw)
			}
			return
		}
		if doc != nil {
			t.Fatalf("DecodeValid(%q) returned a document with violations", raw)
		}
		if len(vs) == 0 || len(vs) > maxViolations {
			t.Fatalf("DecodeValid(%q) returned %d violations", raw, len(vs))
		}
		sorted := slices.IsSortedFunc(vs, func(a, b Violation) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return strings.Compare(a.Keyword, b.Keyword)
		})
		if !sorted {
			t.Fatalf("DecodeValid(%q) returned unsorted violations %v", raw, vs)
		}
		for _, vi := range vs {
			checkViolation(t, vi)
		}
		decoded, err := Decode(raw, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if again := v.Validate(Proposal, decoded); !slices.Equal(vs, again) {
			t.Fatalf("Validate(%q) is not deterministic: %v then %v", raw, vs, again)
		}
	})
}
