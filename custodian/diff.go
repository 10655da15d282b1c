package custodian

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// ValueChange is one difference between two JSON values: the JSON Pointer
// (RFC 6901) of the member that differs, its value before (absent when it
// was added) and after (absent when it was removed).
type ValueChange struct {
	Path string          `json:"path"`
	From json.RawMessage `json:"from,omitempty"`
	To   json.RawMessage `json:"to,omitempty"`
}

// maxChanges bounds a diff: past it, the last change is the whole value.
const maxChanges = 64

// diffValues lists how value b differs from value a: member by member
// through objects, whole for arrays and scalars. Nil when they are equal.
func diffValues(a, b json.RawMessage) []ValueChange {
	va, erra := decodeAny(a)
	vb, errb := decodeAny(b)
	if erra != nil || errb != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []ValueChange{{Path: "", From: a, To: b}}
	}
	var out []ValueChange
	diffAny("", va, vb, &out)
	if len(out) > maxChanges {
		out = []ValueChange{{Path: "", From: a, To: b}}
	}
	return out
}

func decodeAny(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func diffAny(path string, a, b any, out *[]ValueChange) {
	if len(*out) > maxChanges {
		return
	}
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if !aObj || !bObj {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, ValueChange{Path: path, From: encodeAny(a), To: encodeAny(b)})
		}
		return
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
		va, inA := ma[k]
		vb, inB := mb[k]
		switch {
		case !inA:
			*out = append(*out, ValueChange{Path: p, To: encodeAny(vb)})
		case !inB:
			*out = append(*out, ValueChange{Path: p, From: encodeAny(va)})
		default:
			diffAny(p, va, vb, out)
		}
	}
}

func encodeAny(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}
