package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"object", `{"a": [1, "x", true, false, null], "b": {}}`,
			map[string]any{"a": []any{json.Number("1"), "x", true, false, nil}, "b": map[string]any{}}},
		{"large integer kept exactly", `12345678901234567890`, json.Number("12345678901234567890")},
		{"number spelling kept", `[1.0, -0, 1e3, 2E-7]`,
			[]any{json.Number("1.0"), json.Number("-0"), json.Number("1e3"), json.Number("2E-7")}},
		{"exponent 999", `1e-999`, json.Number("1e-999")},
		{"leading zeros of exponent", `1e0000000000000000000002`, json.Number("1e0000000000000000000002")},
		{"surrounding white space", " \t\r\n\"s\" \n", "s"},
		{"escapes and surrogate pair", `"\u00e9\ud83d\ude00\n\"\/"`, "é😀\n\"/"},
		{"utf-8 member name", `{"café": 1}`, map[string]any{"café": json.Number("1")}},
		{"same name in different objects", `[{"a": 1}, {"a": 2, "b": {"a": 3}}]`,
			[]any{map[string]any{"a": json.Number("1")}, map[string]any{"a": json.Number("2"), "b": map[string]any{"a": json.Number("3")}}}},
		{"empty array", `[]`, []any{}},
		{"depth 32", strings.Repeat("[", 32) + strings.Repeat("]", 32), nest(32)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.in), DefaultLimits())
			if err != nil {
				t.Fatalf("Decode(%q) error: %v", tt.in, err)
			}
			// reflect.DeepEqual first: cmp.Diff is slow on deep nesting.
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("Decode(%q) mismatch (-want +got):\n%s", tt.in, cmp.Diff(tt.want, got))
			}
		})
	}
}

func nest(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

func TestDecodeRefuses(t *testing.T) {
	small := Limits{MaxBytes: 64, MaxDepth: 3, MaxStringBytes: 8, MaxMembers: 4}
	tests := []struct {
		name    string
		in      string
		lim     Limits
		want    error
		message string // the error's text after the sentinel's
	}{
		{"empty", ``, Limits{}, ErrInvalidJSON, "empty input"},
		{"only white space", " \n\t ", Limits{}, ErrInvalidJSON, "empty input"},
		{"invalid utf-8 in a string", "{\"a\": \"ok\xffSECRET\"}", Limits{}, ErrInvalidJSON, "invalid utf-8 at offset 9"},
		{"invalid utf-8 in a member name", "{\"k\xc3\x28\": 1}", Limits{}, ErrInvalidJSON, "invalid utf-8 at offset 3"},
		{"overlong utf-8 encoding", "\"\xc0\xaf\"", Limits{}, ErrInvalidJSON, "invalid utf-8 at offset 1"},
		{"utf-8 encoded surrogate", "\"\xed\xa0\x80\"", Limits{}, ErrInvalidJSON, "invalid utf-8 at offset 1"},
		{"lone high surrogate", `"a\ud800"`, Limits{}, ErrInvalidJSON, "lone surrogate escape at offset 2"},
		{"high surrogate then non-surrogate", `"\ud800\u0041"`, Limits{}, ErrInvalidJSON, "lone surrogate escape at offset 1"},
		{"lone low surrogate", `{"\udc00": 1}`, Limits{}, ErrInvalidJSON, "lone surrogate escape at offset 2"},
		{"too deep arrays", "[[[[]]]]", small, ErrInvalidJSON, "nesting deeper than 3 at offset 3"},
		{"too deep objects", `{"a":{"a":{"a":{}}}}`, small, ErrInvalidJSON, "nesting deeper than 3 at offset 15"},
		{"brackets inside strings do not count", `["[[[[[[", "{{{{{{"]`, Limits{MaxDepth: 1}, nil, ""},
		{"duplicate member", `{"a": 1, "a": 2}`, Limits{}, ErrInvalidJSON, "duplicate member name before offset 12"},
		{"duplicate member after unescaping", `{"a": 1, "\u0061": 2}`, Limits{}, ErrInvalidJSON, "duplicate member name before offset 17"},
		{"duplicate null member", `{"a": null, "a": null}`, Limits{}, ErrInvalidJSON, "duplicate member name before offset 15"},
		{"nested duplicate member", `{"a": [{"b": {"c": 1, "c": 1}}]}`, Limits{}, ErrInvalidJSON, "duplicate member name before offset 25"},
		{"trailing garbage", `{"a": 1} SECRET`, Limits{}, ErrInvalidJSON, "trailing data after the value at offset 8"},
		{"second value", `{} {}`, Limits{}, ErrInvalidJSON, "trailing data after the value at offset 2"},
		{"trailing garbage after number", `1x`, Limits{}, ErrInvalidJSON, "trailing data after the value at offset 1"},
		{"syntax error", `{"a": SECRET}`, Limits{}, ErrInvalidJSON, "syntax error at offset 6"},
		{"missing comma", `{"a": 1 "b": 2}`, Limits{}, ErrInvalidJSON, "syntax error at offset 8"},
		{"trailing comma", `[1,]`, Limits{}, ErrInvalidJSON, "syntax error at offset 3"},
		{"single quotes", `{'a': 1}`, Limits{}, ErrInvalidJSON, "syntax error at offset 1"},
		{"truncated", `{"a": [1, 2`, Limits{}, ErrInvalidJSON, "unexpected end of input"},
		{"unterminated string", `"SECRET`, Limits{}, ErrInvalidJSON, "unexpected end of input"},
		{"byte order mark", "\ufeff{}", Limits{}, ErrInvalidJSON, "syntax error at offset 0"},
		{"control character in string", "\"a\tb\"", Limits{}, ErrInvalidJSON, "syntax error at offset 0"},
		{"bad escape", `"\x41"`, Limits{}, ErrInvalidJSON, "syntax error at offset 0"},
		{"leading zero", `01`, Limits{}, ErrInvalidJSON, "trailing data after the value at offset 1"},
		{"NaN", `NaN`, Limits{}, ErrInvalidJSON, "syntax error at offset 0"},
		{"number too long", "1" + strings.Repeat("0", 128), Limits{}, ErrInvalidJSON, "number longer than 128 bytes at offset 0"},
		{"exponent too large", `[1e1000]`, Limits{}, ErrInvalidJSON, "number exponent beyond 999 at offset 1"},
		{"negative exponent too large", `-1.5E-999999999`, Limits{}, ErrInvalidJSON, "number exponent beyond 999 at offset 0"},
		{"too large", `["` + strings.Repeat("a", 61) + `"]`, small, ErrTooLarge, "65 bytes exceeds the limit of 64"},
		{"string too long", `"123456789"`, small, ErrInvalidJSON, "string longer than 8 bytes before offset 11"},
		{"string too long after unescaping", `"\u00e9\u00e9\u00e9\u00e9\u00e9"`, small, ErrInvalidJSON, "string longer than 8 bytes before offset 32"},
		{"string at the limit", `"12345678"`, small, nil, ""},
		{"escaped string within the limit", `"\u0041\u0041\u0041"`, small, nil, ""},
		{"member name too long", `{"123456789": 1}`, small, ErrInvalidJSON, "member name longer than 8 bytes before offset 12"},
		{"too many elements", `[1, 2, 3, 4, 5]`, small, ErrInvalidJSON, "more than 4 members and elements before offset 14"},
		{"too many members and elements together", `{"a": [1, 2], "b": [3]}`, small, ErrInvalidJSON, "more than 4 members and elements before offset 21"},
		{"members at the limit", `{"a": [1, 2], "b": 3}`, small, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in), tt.lim)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Decode(%q) error: %v; want none", tt.in, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode(%q) = %v; want an error wrapping %v", tt.in, err, tt.want)
			}
			if tt.want == ErrTooLarge && errors.Is(err, ErrInvalidJSON) {
				t.Errorf("Decode(%q) = %v; ErrTooLarge must be distinct from ErrInvalidJSON", tt.in, err)
			}
			if want := tt.want.Error() + ": " + tt.message; err.Error() != want {
				t.Errorf("Decode(%q) = %q; want %q", tt.in, err, want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("Decode(%q) = %q echoes the input", tt.in, err)
			}
		})
	}
}

func TestDecodeDeepInputIsCheap(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000),
		strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000),
		strings.Repeat("[", 1<<20), // the largest default input, never closed
	} {
		start := time.Now()
		_, err := Decode([]byte(in), DefaultLimits())
		if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "nesting deeper than 32") {
			t.Errorf("Decode(%d bytes of nesting) = %v; want nesting refused", len(in), err)
		}
		// Not a benchmark: a generous bound that only a recursive parse of
		// the whole input, or a quadratic scan, would exceed.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Decode(%d bytes of nesting) took %v", len(in), d)
		}
	}
}

func TestDecodeHugeStrings(t *testing.T) {
	huge := `"` + strings.Repeat("a", 100_000) + `"`
	if _, err := Decode([]byte(huge), DefaultLimits()); !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "string longer than 65536 bytes") {
		t.Errorf("Decode(100 KB string) = %v; want string limit", err)
	}
	if _, err := Decode([]byte(huge), Limits{MaxStringBytes: 200_000}); err != nil {
		t.Errorf("Decode(100 KB string, larger limit) = %v", err)
	}
	tooBig := `"` + strings.Repeat("a", 1<<20) + `"`
	if _, err := Decode([]byte(tooBig), DefaultLimits()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode(1 MiB string) = %v; want ErrTooLarge", err)
	}
}

func TestDefaultLimits(t *testing.T) {
	want := Limits{MaxBytes: 1 << 20, MaxDepth: 32, MaxStringBytes: 64 << 10, MaxMembers: 10_000}
	if got := DefaultLimits(); got != want {
		t.Errorf("DefaultLimits() = %+v; want %+v", got, want)
	}
	if got := (Limits{MaxDepth: 5, MaxMembers: -1}).orDefault(); got != (Limits{MaxBytes: 1 << 20, MaxDepth: 5, MaxStringBytes: 64 << 10, MaxMembers: 10_000}) {
		t.Errorf("Limits{MaxDepth: 5, MaxMembers: -1}.orDefault() = %+v", got)
	}
}

// Types for DecodeInto.
type (
	testProposal struct {
		Key      string         `json:"key"`
		Value    any            `json:"value"`
		Evidence []testEvidence `json:"evidence,omitempty"`
		Labels   map[string]testLabel
		When     *time.Time `json:"when,omitempty"`
		testEmbedded
		Ignored string `json:"-"`
	}
	testEvidence struct {
		Ref    string `json:"ref"`
		Digest string `json:"digest,omitempty"`
	}
	testLabel struct {
		Text string `json:"text"`
	}
	testEmbedded struct {
		Note string `json:"note"`
	}
)

func TestDecodeInto(t *testing.T) {
	var got testProposal
	in := `{"key": "a.b", "value": {"n": 12345678901234567890}, "evidence": [{"ref": "r"}], "Labels": {"x": {"text": "t"}}, "note": "n", "when": "2025-01-01T00:00:00Z"}`
	if err := DecodeInto([]byte(in), Limits{}, &got); err != nil {
		t.Fatalf("DecodeInto(%s) error: %v", in, err)
	}
	when := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	want := testProposal{
		Key:          "a.b",
		Value:        map[string]any{"n": json.Number("12345678901234567890")},
		Evidence:     []testEvidence{{Ref: "r"}},
		Labels:       map[string]testLabel{"x": {Text: "t"}},
		When:         &when,
		testEmbedded: testEmbedded{Note: "n"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(testProposal{})); diff != "" {
		t.Errorf("DecodeInto mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeIntoRefuses(t *testing.T) {
	long := strings.Repeat("n", 100)
	tests := []struct {
		name    string
		in      string
		message string
	}{
		{"unknown field", `{"key": "a", "foo": "SECRET"}`, `unknown field "/foo"`},
		{"unknown nested field", `{"evidence": [{"ref": "r"}, {"ref": "r", "url": "SECRET"}]}`, `unknown field "/evidence/1/url"`},
		{"unknown field in map value", `{"Labels": {"a/b": {"text": "t", "colour": "SECRET"}}}`, `unknown field "/Labels/a~1b/colour"`},
		{"name differing only in case", `{"KEY": "SECRET"}`, `unknown field "/KEY"`},
		{"ignored field", `{"Ignored": "SECRET"}`, `unknown field "/Ignored"`},
		{"long unknown name is cut", `{"` + long + `": 1}`, `unknown field "/` + long[:64] + `…"`},
		{"wrong type", `{"key": 12345}`, `wrong type for field "/key"`},
		{"wrong nested type", `{"evidence": [{"ref": ["SECRET"]}]}`, `wrong type for field "/evidence/ref"`},
		{"invalid value for a field's own decoder", `{"when": "SECRET-not-a-time"}`, `value does not fit the expected structure`},
		{"decode checks apply", `{"key": "a", "key": "b"}`, `duplicate member name before offset 18`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got testProposal
			err := DecodeInto([]byte(tt.in), Limits{}, &got)
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("DecodeInto(%s) = %v; want an error wrapping ErrInvalidJSON", tt.in, err)
			}
			if want := "invalid json: " + tt.message; err.Error() != want {
				t.Errorf("DecodeInto(%s) = %q; want %q", tt.in, err, want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("DecodeInto(%s) = %q echoes the input", tt.in, err)
			}
		})
	}
	var notPointer testProposal
	if err := DecodeInto([]byte(`{}`), Limits{}, notPointer); err == nil || errors.Is(err, ErrInvalidJSON) {
		t.Errorf("DecodeInto(non-pointer) = %v; want a usage error", err)
	}
	if err := DecodeInto([]byte(`{}`), Limits{MaxBytes: 1}, &notPointer); !errors.Is(err, ErrTooLarge) {
		t.Errorf("DecodeInto(too large) = %v; want ErrTooLarge", err)
	}
}
