package pcp

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"
)

// Version is the Personal Context Protocol version phc's /context facade
// speaks.
const Version = "0.1.0"

// Field is a PCP field: the current active claim about the owner (subject
// self) for a key. Its id is the key in dot notation; its category is the
// key's first segment and its field name the rest.
type Field struct {
	ID          string          `json:"id"`
	Category    string          `json:"category"`
	FieldName   string          `json:"field_name"`
	Value       json.RawMessage `json:"value,omitempty"`
	Sensitivity string          `json:"sensitivity"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Version     int             `json:"version"`
	WrittenBy   string          `json:"written_by"`
	ClaimID     string          `json:"claim_id"`
	// Status is "disputed" when the owner disputes the field's claim, and
	// absent otherwise.
	Status string `json:"status,omitempty"`

	raw json.RawMessage // the field's JSON (CacheJSON)
}

// CacheJSON keeps f's JSON encoding, which a [ContextBundle] is encoded
// from; a field whose value changes must cache it again.
func (f *Field) CacheJSON() error {
	f.raw = nil
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	f.raw = raw
	return nil
}

// ContextBundle is every field, with values, grouped by category.
type ContextBundle struct {
	ContextVersion string             `json:"context_version"`
	Categories     map[string][]Field `json:"categories"`
	Revision       uint64             `json:"revision"`
	Warnings       []string           `json:"warnings,omitempty"`
}

// ByCategory groups fields, in key order, by category: a category's
// fields are one run of them, so each category is a subslice, not a copy.
func ByCategory(fs []Field) map[string][]Field {
	out := map[string][]Field{}
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j].Category == fs[i].Category {
			j++
		}
		cat := fs[i].Category
		if prev := out[cat]; prev != nil {
			out[cat] = append(prev, fs[i:j]...)
		} else {
			out[cat] = fs[i:j:j]
		}
		i = j
	}
	return out
}

// MarshalJSON encodes b from its fields' cached encodings, as encoding/json
// would encode it, without encoding them again.
func (b ContextBundle) MarshalJSON() ([]byte, error) {
	type plain ContextBundle
	cats := make([]string, 0, len(b.Categories))
	n := 128
	for cat, fs := range b.Categories {
		cats = append(cats, cat)
		for _, f := range fs {
			if f.raw == nil {
				return json.Marshal(plain(b))
			}
			n += len(f.raw) + 1
		}
	}
	sort.Strings(cats)
	out := make([]byte, 0, n)
	version, err := json.Marshal(b.ContextVersion)
	if err != nil {
		return nil, err
	}
	out = append(append(out, `{"context_version":`...), version...)
	out = append(out, `,"categories":{`...)
	for i, cat := range cats {
		if i > 0 {
			out = append(out, ',')
		}
		key, err := json.Marshal(cat)
		if err != nil {
			return nil, err
		}
		out = append(append(out, key...), ':', '[')
		for j, f := range b.Categories[cat] {
			if j > 0 {
				out = append(out, ',')
			}
			out = append(out, f.raw...)
		}
		out = append(out, ']')
	}
	out = append(out, `},"revision":`...)
	out = strconv.AppendUint(out, b.Revision, 10)
	if len(b.Warnings) > 0 {
		w, err := json.Marshal(b.Warnings)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"warnings":`...), w...)
	}
	return append(out, '}'), nil
}
