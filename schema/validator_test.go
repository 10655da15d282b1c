package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/violations.golden.json")

const goldenFile = "testdata/violations.golden.json"

// mustNew returns a Validator or stops the test.
func mustNew(t testing.TB) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatalf("New() error: %v", err)
	}
	return v
}

// testFiles returns the sorted .json files under testdata/<dir>.
func testFiles(t testing.TB, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no test files in testdata/%s", dir)
	}
	slices.Sort(names)
	return names
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestGoodDocumentsValidate(t *testing.T) {
	v := mustNew(t)
	for _, name := range []string{Proposal, Claim, Correction, Grant, Persona, PersonaUpdate} {
		for _, file := range testFiles(t, filepath.Join("good", name)) {
			t.Run(name+"/"+filepath.Base(file), func(t *testing.T) {
				doc, vs, err := v.DecodeValid(name, readFile(t, file), DefaultLimits())
				if err != nil || vs != nil {
					t.Fatalf("DecodeValid(%s, %s) = _, %+v, %v; want valid", name, file, vs, err)
				}
				if doc == nil {
					t.Fatalf("DecodeValid(%s, %s) returned a nil document", name, file)
				}
			})
		}
	}
}

// TestBadProposalsGolden pins the exact violations of each bad proposal in
// testdata/bad/proposal. Regenerate with: go test ./schema -update
func TestBadProposalsGolden(t *testing.T) {
	v := mustNew(t)
	got := make(map[string][]Violation)
	for _, file := range testFiles(t, "bad/proposal") {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		doc, vs, err := v.DecodeValid(Proposal, readFile(t, file), DefaultLimits())
		if err != nil {
			t.Fatalf("DecodeValid(%s) error: %v; want violations", file, err)
		}
		if doc != nil || len(vs) == 0 {
			t.Errorf("DecodeValid(%s) = %v, %v; want no document and violations", file, doc, vs)
		}
		got[name] = vs
	}
	if *update {
		if err := os.WriteFile(goldenFile, marshalGolden(t, got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var want map[string][]Violation
	if err := json.Unmarshal(readFile(t, goldenFile), &want); err != nil {
		t.Fatalf("reading %s: %v", goldenFile, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations differ from %s (-want +got); run go test ./schema -update if intended:\n%s", goldenFile, diff)
	}
}

// marshalGolden renders the golden file with one violation a line, so that
// its diffs are easy to review.
func marshalGolden(t testing.TB, m map[string][]Violation) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("{")
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(",")
		}
		key, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n  %s: [", key)
		for j, vi := range m[name] {
			line, err := json.Marshal(vi)
			if err != nil {
				t.Fatal(err)
			}
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n    %s", line)
		}
		b.WriteString("\n  ]")
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// TestViolationsNeverEchoValues checks every bad document: no violation
// message contains any string or number of the input, and paths contain
// member names only.
func TestViolationsNeverEchoValues(t *testing.T) {
	v := mustNew(t)
	for _, file := range testFiles(t, "bad/proposal") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw := readFile(t, file)
			doc, err := Decode(raw, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			values, names := scalarValues(doc)
			for _, vi := range v.Validate(Proposal, doc) {
				checkViolation(t, vi)
				for _, val := range values {
					if len(val) < 3 {
						continue
					}
					if strings.Contains(vi.Message, val) || (!names[val] && strings.Contains(vi.Path, val)) {
						t.Errorf("violation %+v echoes the input value %q", vi, val)
					}
				}
			}
			if bytes.Contains(raw, []byte("SECRET")) {
				for _, vi := range v.Validate(Proposal, doc) {
					if strings.Contains(vi.Message, "SECRET") {
						t.Errorf("violation %+v echoes input", vi)
					}
				}
			}
		})
	}
}

// scalarValues returns the strings and number literals of doc's values,
// and the set of its member names.
func scalarValues(doc any) ([]string, map[string]bool) {
	var out []string
	names := make(map[string]bool)
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for n, e := range x {
				names[n] = true
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		}
	}
	walk(doc)
	return out, names
}

// knownMessage reports whether m is one of this package's message texts,
// with any digits standing for a schema-defined bound.
func knownMessage(m string) bool {
	fixed := []string{
		"is required", "is not allowed", "is invalid", "is not an allowed name",
		"must be one of the allowed values", "must be the allowed value",
		"must match the required pattern", "must not contain duplicate items",
		"must match one of the allowed forms", "must match exactly one of the allowed forms",
		"must not match the excluded form", "has too many items", "must have valid content",
		"must be a json value", "cannot be validated", "unknown schema",
		"must contain a matching item",
	}
	if slices.Contains(fixed, m) {
		return true
	}
	prefixes := []string{
		"must be a valid ", "must be at least ", "must be at most ", "must have at least ",
		"must have at most ", "must be greater than ", "must be less than ",
		"must be a multiple of ", "must contain at least ", "must contain at most ", "must be ",
	}
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(m, p); ok {
			return len(rest) < 40 && rest == strings.ToLower(rest)
		}
	}
	return false
}

func checkViolation(t testing.TB, vi Violation) {
	t.Helper()
	if !knownMessage(vi.Message) {
		t.Errorf("violation %+v: message is not one of the package's texts", vi)
	}
	if vi.Keyword == "" {
		t.Errorf("violation %+v: empty keyword", vi)
	}
	if vi.Path != "" && !strings.HasPrefix(vi.Path, "/") {
		t.Errorf("violation %+v: path is not a JSON Pointer", vi)
	}
}

func TestValidateCases(t *testing.T) {
	v := mustNew(t)
	tests := []struct {
		name   string
		schema string
		doc    string
		want   []Violation
	}{
		{
			name:   "correction needs a member",
			schema: Correction,
			doc:    `{}`,
			want:   []Violation{{"", "minProperties", "must have at least 1 property"}},
		},
		{
			name:   "correction expected_version bounds",
			schema: Correction,
			doc:    `{"expected_version": 0, "value": null}`,
			want:   []Violation{{"/expected_version", "minimum", "must be at least 1"}},
		},
		{
			name:   "correction expected_version integer",
			schema: Correction,
			doc:    `{"expected_version": 1.5}`,
			want:   []Violation{{"/expected_version", "type", "must be an integer"}},
		},
		{
			name:   "correction cannot change key",
			schema: Correction,
			doc:    `{"key": "a.b"}`,
			want:   []Violation{{"/key", "additionalProperties", "is not allowed"}},
		},
		{
			name:   "grant missing everything",
			schema: Grant,
			doc:    `{}`,
			want: []Violation{
				{"/expires_at", "required", "is required"},
				{"/operations", "required", "is required"},
				{"/purpose", "required", "is required"},
				{"/recipient", "required", "is required"},
				{"/selectors", "required", "is required"},
			},
		},
		{
			name:   "grant field rules",
			schema: Grant,
			doc: `{"recipient": {"kind": "oidc", "id": "", "issuer": "not a uri", "x": 1},
				"purpose": " bad", "operations": ["read", "read", "admin"],
				"selectors": {"keys": ["a.*.b", "identity.*", "*"], "claims": ["clm_x"], "personas": ["Work"]},
				"expires_at": "2026-01-01", "usage": "twice", "route": "cloud"}`,
			want: []Violation{
				{"/expires_at", "format", "must be a valid date-time"},
				{"/operations", "uniqueItems", "must not contain duplicate items"},
				{"/operations/2", "enum", "must be one of the allowed values"},
				{"/purpose", "pattern", "must match the required pattern"},
				{"/recipient/id", "minLength", "must be at least 1 character long"},
				{"/recipient/issuer", "format", "must be a valid uri"},
				{"/recipient/x", "additionalProperties", "is not allowed"},
				{"/route", "enum", "must be one of the allowed values"},
				{"/selectors/claims/0", "pattern", "must match the required pattern"},
				{"/selectors/keys/0", "pattern", "must match the required pattern"},
				{"/selectors/personas/0", "pattern", "must match the required pattern"},
				{"/usage", "enum", "must be one of the allowed values"},
			},
		},
		{
			name:   "grant oidc recipient needs issuer, selectors need a member",
			schema: Grant,
			doc:    `{"recipient": {"kind": "oidc", "id": "sub"}, "purpose": "p", "operations": [], "selectors": {}, "expires_at": "2026-01-01T00:00:00Z"}`,
			want: []Violation{
				{"/operations", "minItems", "must have at least 1 item"},
				{"/recipient/issuer", "required", "is required"},
				{"/selectors", "minProperties", "must have at least 1 property"},
			},
		},
		{
			name:   "persona",
			schema: Persona,
			doc:    `{"id": "work", "name": "", "preferences": [1], "guardrails": "none"}`,
			want: []Violation{
				{"/guardrails", "type", "must be an array"},
				{"/name", "minLength", "must be at least 1 character long"},
				{"/preferences/0", "type", "must be a string"},
			},
		},
		{
			name:   "claim",
			schema: Claim,
			doc: `{"id": "clm_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "version": 0, "key": "a", "value": 1, "subject": "self",
				"kind": "fact", "assertion": "reported", "confirmation": {"status": "maybe"},
				"producer": {"authenticated": {"kind": "robot", "id": "x"}, "reported": {"app": "a"}},
				"recorded_at": "2025-01-01T00:00:00Z", "sensitivity": "public", "status": "active",
				"personas": ["a", "a"], "revision": -1}`,
			want: []Violation{
				{"/confirmation/status", "enum", "must be one of the allowed values"},
				{"/personas", "uniqueItems", "must not contain duplicate items"},
				{"/producer/authenticated/kind", "enum", "must be one of the allowed values"},
				{"/revision", "minimum", "must be at least 0"},
				{"/version", "minimum", "must be at least 1"},
			},
		},
		{
			name:   "key of 256 characters is allowed, 257 is not",
			schema: Proposal,
			doc: `{"key": "` + strings.Repeat("a", 64) + "." + strings.Repeat("b", 64) + "." + strings.Repeat("c", 64) + "." + strings.Repeat("d", 61) +
				`", "value": 1, "kind": "fact", "assertion": "reported", "personas_hint": ["` + strings.Repeat("p", 65) + `"]}`,
			want: []Violation{{"/personas_hint/0", "pattern", "must match the required pattern"}},
		},
		{
			name:   "key longer than 256",
			schema: Proposal,
			doc: `{"key": "` + strings.Repeat("a", 64) + "." + strings.Repeat("b", 64) + "." + strings.Repeat("c", 64) + "." + strings.Repeat("d", 62) +
				`", "value": 1, "kind": "fact", "assertion": "reported"}`,
			want: []Violation{{"/key", "maxLength", "must be at most 256 characters long"}},
		},
		{
			name:   "unknown schema",
			schema: "bundle",
			doc:    `{}`,
			want:   []Violation{{"", "$schema", "unknown schema"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Decode([]byte(tt.doc), DefaultLimits())
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got := v.Validate(tt.schema, doc)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%s, %s) mismatch (-want +got):\n%s", tt.schema, tt.doc, diff)
			}
			for _, vi := range got {
				checkViolation(t, vi)
			}
		})
	}
}

func TestValidateCapsAndSorts(t *testing.T) {
	v := mustNew(t)
	var b strings.Builder
	b.WriteString(`{"key": "a", "value": 1, "kind": "fact", "assertion": "reported"`)
	for i := range 500 {
		b.WriteString(`, "u` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `": 1`)
	}
	b.WriteString(`}`)
	doc, err := Decode([]byte(b.String()), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := v.Validate(Proposal, doc)
	if len(got) != maxViolations {
		t.Fatalf("Validate returned %d violations; want %d", len(got), maxViolations)
	}
	if !slices.IsSortedFunc(got, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("Validate returned unsorted violations: %v", got)
	}
	if again := v.Validate(Proposal, doc); !slices.Equal(got, again) {
		t.Errorf("Validate is not deterministic")
	}
}

func TestValidateNonDecodedValues(t *testing.T) {
	v := mustNew(t)
	// Values not produced by Decode still validate without panicking.
	doc := map[string]any{"key": "a", "value": struct{}{}, "kind": "fact", "assertion": "reported", "note": 3.5}
	got := v.Validate(Proposal, doc)
	want := []Violation{
		{"/note", "type", "must be a string"},
		{"/value", "type", "must be a json value"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeValid(t *testing.T) {
	v := mustNew(t)
	if _, _, err := v.DecodeValid("nope", []byte(`{}`), Limits{}); err == nil {
		t.Errorf("DecodeValid(unknown schema) = nil error; want an error")
	}
	if _, vs, err := v.DecodeValid(Proposal, []byte(`{"key": "a"`), Limits{}); vs != nil || !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("DecodeValid(truncated) = _, %v, %v; want ErrInvalidJSON", vs, err)
	}
	if _, vs, err := v.DecodeValid(Proposal, []byte(`{}`), Limits{MaxBytes: 1}); vs != nil || !errors.Is(err, ErrTooLarge) {
		t.Errorf("DecodeValid(too large) = _, %v, %v; want ErrTooLarge", vs, err)
	}
}

func TestValidatorConcurrentUse(t *testing.T) {
	v := mustNew(t)
	docs := map[string][]byte{}
	for _, f := range testFiles(t, "bad/proposal") {
		docs[f] = readFile(t, f)
	}
	want := map[string][]Violation{}
	for f, raw := range docs {
		_, want[f], _ = v.DecodeValid(Proposal, raw, Limits{})
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for f, raw := range docs {
				_, got, err := v.DecodeValid(Proposal, raw, Limits{})
				if err != nil || !slices.Equal(got, want[f]) {
					t.Errorf("concurrent DecodeValid(%s) = %v, %v; want %v", f, got, err, want[f])
				}
			}
		})
	}
	wg.Wait()
}

func TestLoaderRefusesOtherURLs(t *testing.T) {
	c, err := newCompiler()
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"https://example.com/x.json", "file:///etc/passwd", "https://phc.local/schema/0.1/missing.json"} {
		url := "https://phc.local/test/" + strconv.Itoa(len(ref)) + ".json"
		if err := c.AddResource(url, map[string]any{"$ref": ref}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(url); err == nil {
			t.Errorf("Compile of a schema referring to %s succeeded; want the loader to refuse", ref)
		}
	}
}

func TestEmbeddedSchemasAreStrictJSON(t *testing.T) {
	entries, err := files.ReadDir(filesDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"bundle_manifest.json", "bundle_payload.json", "bundle_records.json", "claim.json", "common.json", "correction.json",
		"grant.json", "held.json", "persona.json", "persona_update.json", "proposal.json"}
	if !slices.Equal(names, want) {
		t.Errorf("embedded schema files = %v; want %v", names, want)
	}
}
