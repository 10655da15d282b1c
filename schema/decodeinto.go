package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNameBytes bounds how much of an untrusted member name an error message
// or a violation path repeats.
const maxNameBytes = 64

// DecodeInto applies every check of [Decode] to raw and then decodes it into
// v, which must be a non-nil pointer, as [json.Decoder] does with
// UseNumber (an any field receives a [json.Number]) and
// DisallowUnknownFields.
//
// Member names must match a field's JSON name exactly: encoding/json would
// also accept a name that differs only in case, so that {"key":…,"KEY":…}
// would silently fill one field twice. Such a name is reported as unknown.
//
// An unknown member fails with an error wrapping [ErrInvalidJSON] that names
// it by JSON Pointer, quoted with %q, each member name in the pointer cut to
// 64 bytes (for example: unknown field "/evidence/0/url"). A value of the
// wrong type fails likewise, naming the field but never the value. Any
// other failure, including one from a field's own UnmarshalJSON, is
// reported without its text, which could quote the input.
func DecodeInto(raw []byte, lim Limits, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("schema: DecodeInto needs a non-nil pointer, got %T", v)
	}
	doc, err := Decode(raw, lim)
	if err != nil {
		return err
	}
	if doc == nil {
		// encoding/json reads a top-level null as "leave v as it is",
		// which would turn a null body into an empty request.
		return invalidf("the document is null")
	}
	if path, ok := findUnknown(doc, rv.Type(), nil); ok {
		return invalidf("unknown field %q", pointer(path))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			var path []string
			if te.Field != "" {
				path = strings.Split(te.Field, ".")
			}
			return invalidf("wrong type for field %q", pointer(path))
		}
		return invalidf("value does not fit the expected structure")
	}
	return nil
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// findUnknown walks the decoded document alongside the Go type it is about
// to be decoded into and returns the path of the first member (in sorted
// order, depth first) that no field takes. Where the document and the type
// disagree in shape it stops: encoding/json reports those as type errors.
func findUnknown(doc any, t reflect.Type, path []string) ([]string, bool) {
	for t.Kind() == reflect.Pointer {
		if t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) {
			return nil, false
		}
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		fields := structFields(t)
		for _, name := range sortedKeys(obj) {
			ft, known := fields[name]
			if !known {
				return append(path, name), true
			}
			if p, ok := findUnknown(obj[name], ft, append(path, name)); ok {
				return p, true
			}
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		for _, name := range sortedKeys(obj) {
			if p, ok := findUnknown(obj[name], t.Elem(), append(path, name)); ok {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := doc.([]any)
		if !ok {
			return nil, false
		}
		for i, e := range arr {
			if p, ok := findUnknown(e, t.Elem(), append(path, strconv.Itoa(i))); ok {
				return p, true
			}
		}
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// structFields returns the JSON names of t's fields, including those
// promoted from embedded structs, with their types. It follows
// encoding/json's rules closely enough to name an unknown member; the
// decoder itself remains the authority on what is accepted.
func structFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type)
	depthOf := make(map[string]int)
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, depth+1, seen)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if d, ok := depthOf[name]; ok && d <= depth {
				continue
			}
			fields[name] = ft
			depthOf[name] = depth
		}
	}
	walk(t, 0, make(map[reflect.Type]bool))
	return fields
}

// pointer renders path as a JSON Pointer, cutting each token to
// maxNameBytes.
func pointer(path []string) string {
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		tok = truncate(tok, maxNameBytes)
		tok = strings.ReplaceAll(tok, "~", "~0")
		tok = strings.ReplaceAll(tok, "/", "~1")
		b.WriteString(tok)
	}
	return b.String()
}

// truncate cuts s to at most n bytes on a rune boundary and marks the cut
// with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
