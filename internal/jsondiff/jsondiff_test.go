package jsondiff_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/internal/jsondiff"
)

func TestValues(t *testing.T) {
	raw := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	change := func(path, from, to string) jsondiff.Change {
		return jsondiff.Change{Path: path, From: raw(from), To: raw(to)}
	}
	wide := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%03d":%d`, i, i)
		}
		return b.String() + "}"
	}
	for _, tc := range []struct {
		name, a, b string
		want       []jsondiff.Change
	}{
		{"equal scalars", `"vim"`, `"vim"`, nil},
		{"equal objects, members reordered", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, nil},
		{"a scalar changed", `"emacs"`, `"vim"`, []jsondiff.Change{change("", `"emacs"`, `"vim"`)}},
		{"numbers as written", `1.0`, `1`, []jsondiff.Change{change("", `1.0`, `1`)}},
		{"members added, removed, changed", `{"a":1,"b":2,"c":{"d":1}}`, `{"b":3,"c":{"d":1,"e":"x"},"f":null}`, []jsondiff.Change{
			change("/a", `1`, ""), change("/b", `2`, `3`), change("/c/e", "", `"x"`), change("/f", "", `null`)}},
		{"pointer escapes", `{"a/b":1,"m~n":1}`, `{"a/b":2,"m~n":2}`, []jsondiff.Change{change("/a~1b", `1`, `2`), change("/m~0n", `1`, `2`)}},
		{"arrays whole", `[1,2]`, `[2,1]`, []jsondiff.Change{change("", `[1,2]`, `[2,1]`)}},
		{"object against scalar", `{"a":1}`, `"a"`, []jsondiff.Change{change("", `{"a":1}`, `"a"`)}},
		{"not JSON", `{`, `"x"`, []jsondiff.Change{change("", `{`, `"x"`)}},
		{"too many changes: the whole value", wide(0), wide(jsondiff.Max + 1), []jsondiff.Change{change("", wide(0), wide(jsondiff.Max+1))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jsondiff.Values(raw(tc.a), raw(tc.b))); diff != "" {
				t.Errorf("Values(%s, %s) (-want +got):\n%s", tc.a, tc.b, diff)
			}
		})
	}
}

// FuzzValues: any two inputs give an answer, nil only for equal JSON, and
// never more than Max changes.
func FuzzValues(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte(`{"a":2,"b":[1]}`))
	f.Add([]byte(`"x"`), []byte(`{`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		out := jsondiff.Values(a, b)
		if len(out) > jsondiff.Max {
			t.Fatalf("%d changes", len(out))
		}
		if out == nil && json.Valid(a) != json.Valid(b) {
			t.Fatalf("no change between %q and %q", a, b)
		}
	})
}
