package conformance

import (
	"encoding/json"
	"testing"
)

func TestMatch(t *testing.T) {
	doc := `{"a": 1, "s": "clm_X", "arr": [{"id": "x", "n": 2, "tags": ["p"]}, {"id": "y"}], "obj": {"k": true}, "z": null}`
	for _, tc := range []struct {
		ptr, want string
		ok        bool
	}{
		{"/a", `1`, true},
		{"/a", `1.0`, true},
		{"/a", `2`, false},
		{"/a", `"1"`, false},
		{"/s", `{"$pattern": "^clm_"}`, true},
		{"/s", `{"$pattern": "^prp_"}`, false},
		{"/missing", `{"$exists": false}`, true},
		{"/a", `{"$exists": false}`, false},
		{"/missing", `{"$type": "string"}`, false},
		{"/z", `null`, true},
		{"/z", `{"$type": "null"}`, true},
		{"/a", `{"$type": "integer"}`, true},
		{"/a", `{"$type": "number"}`, true},
		{"/arr", `{"$len": 2}`, true},
		{"/arr", `{"$contains": {"id": "x"}}`, true},
		{"/arr", `{"$contains": {"id": "x", "tags": ["p"]}}`, true},
		{"/arr", `{"$contains": {"id": "z"}}`, false},
		{"/arr", `{"$none": {"id": "z"}}`, true},
		{"/arr", `{"$none": {"n": {"$exists": true}}}`, false},
		{"/arr/0", `{"id": "x", "n": 2, "tags": ["p"]}`, true},
		{"/arr/0", `{"id": "x"}`, false},
		{"/obj", `{"k": true}`, true},
		{"/a", `{"$gt": 0, "$lt": 2}`, true},
		{"/a", `{"$gte": 2}`, false},
		{"/a", `{"$ne": 2}`, true},
		{"/arr/01", `{"$exists": false}`, true},
		{"", `{"$type": "object"}`, true},
	} {
		d, err := decodeJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeJSON([]byte(tc.want))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkMatcher(json.RawMessage(tc.want)); err != nil {
			t.Fatalf("checkMatcher(%s): %v", tc.want, err)
		}
		v, present := resolve(d, tc.ptr)
		err = match(want, v, present, false)
		if (err == nil) != tc.ok {
			t.Errorf("match(%s at %q) = %v; want ok=%v", tc.want, tc.ptr, err, tc.ok)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vs := vars{"n": json.RawMessage(`42`), "s": json.RawMessage(`"abc"`)}
	v, err := vs.substituteRaw(json.RawMessage(`{"a": "${n}", "b": "x-${n}-${s}", "c": ["${s}"]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(v)
	if got, want := string(raw), `{"a":42,"b":"x-42-abc","c":["abc"]}`; got != want {
		t.Errorf("substitute = %s; want %s", got, want)
	}
	if _, err := vs.interpolate("${nope}"); err == nil {
		t.Error("interpolate of an unset variable succeeded")
	}
}
