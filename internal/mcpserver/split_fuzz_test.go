package mcpserver

import (
	"encoding/json"
	"testing"
)

// FuzzSplitMember: what splitMember returns is always valid JSON — the
// value and an object — and nothing but the first "id" leaves the object.
func FuzzSplitMember(f *testing.F) {
	for _, s := range []string{`{"id":"a","value":1}`, `{"value":1,"value":2,"id":"x"}`, `{"id":"a","id":"b"}`, `{}`, `[]`, `{"id":`, `{"a":{"id":1},"id":"z"} {}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		val, rest, err := splitMember(json.RawMessage(raw), "id")
		if err != nil {
			return
		}
		if !json.Valid(val) || !json.Valid(rest) || rest[0] != '{' {
			t.Fatalf("splitMember(%q) = %q, %q", raw, val, rest)
		}
		var in, out map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &in) == nil && json.Unmarshal(rest, &out) == nil {
			if len(out) > len(in) {
				t.Fatalf("splitMember(%q) added members: %q", raw, rest)
			}
		}
	})
}
