package custodian

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/phc-project/phc/custodian/internal/model"
)

// diffValues lists how value b differs from value a: member by member
// through objects, whole for arrays and scalars. Nil when they are equal.
func diffValues(a, b json.RawMessage) []ValueChange {
	va, erra := model.DecodeAny(a)
	vb, errb := model.DecodeAny(b)
	if erra != nil || errb != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []ValueChange{{Path: "", From: a, To: b}}
	}
	var out []ValueChange
	diffAny("", va, vb, &out)
	if len(out) > model.MaxChanges {
		out = []ValueChange{{Path: "", From: a, To: b}}
	}
	return out
}

func diffAny(path string, a, b any, out *[]ValueChange) {
	if len(*out) > model.MaxChanges {
		return
	}
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if !aObj || !bObj {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, ValueChange{Path: path, From: model.EncodeAny(a), To: model.EncodeAny(b)})
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
			*out = append(*out, ValueChange{Path: p, To: model.EncodeAny(vb)})
		case !inB:
			*out = append(*out, ValueChange{Path: p, From: model.EncodeAny(va)})
		default:
			diffAny(p, va, vb, out)
		}
	}
}
