// Package jsondiff says how one JSON value differs from another, member by
// member through objects, for the owner's review: a proposal against the
// claim it would supersede, a held claim against the claim its key holds.
package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Change is one difference between two JSON values: the JSON Pointer of
// the member that differs ("" for the whole value), what it was (absent:
// added) and what it is (absent: removed).
type Change struct {
	Path string          `json:"path"`
	From json.RawMessage `json:"from,omitempty"`
	To   json.RawMessage `json:"to,omitempty"`
}

// Max bounds a diff: past it, the one change is the whole value.
const Max = 64

// Values lists how value b differs from value a: member by member through
// objects, whole for arrays and scalars. Nil when they are equal.
func Values(a, b json.RawMessage) []Change {
	va, erra := decode(a)
	vb, errb := decode(b)
	if erra != nil || errb != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []Change{{Path: "", From: a, To: b}}
	}
	var out []Change
	diffAny("", va, vb, &out)
	if len(out) > Max {
		out = []Change{{Path: "", From: a, To: b}}
	}
	return out
}

func diffAny(path string, a, b any, out *[]Change) {
	if len(*out) > Max {
		return
	}
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if !aObj || !bObj {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, Change{Path: path, From: encode(a), To: encode(b)})
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
			*out = append(*out, Change{Path: p, To: encode(vb)})
		case !inB:
			*out = append(*out, Change{Path: p, From: encode(va)})
		default:
			diffAny(p, va, vb, out)
		}
	}
}

// decode reads one JSON value and nothing after it, numbers kept as
// written.
func decode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

func encode(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}
