package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// decodeJSON decodes raw with numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// resolve returns the value at JSON Pointer ptr (RFC 6901) inside doc.
func resolve(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(c) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = c[n]
		default:
			return nil, false
		}
	}
	return cur, true
}

// operators a matcher object may hold.
var operators = map[string]bool{
	"$exists": true, "$type": true, "$pattern": true, "$len": true,
	"$contains": true, "$none": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true, "$ne": true,
}

// isMatcher reports whether v is a matcher object: a non-empty object whose
// members are all operators.
func isMatcher(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, false
	}
	for k := range m {
		if !strings.HasPrefix(k, "$") {
			return nil, false
		}
	}
	return m, true
}

// checkMatcher checks the form of an expected value at load time.
func checkMatcher(raw json.RawMessage) error {
	v, err := decodeJSON(raw)
	if err != nil {
		return err
	}
	return checkValue(v)
}

func checkValue(v any) error {
	if m, ok := isMatcher(v); ok {
		for op, arg := range m {
			if !operators[op] {
				return fmt.Errorf("unknown operator %s", op)
			}
			switch op {
			case "$exists":
				if _, ok := arg.(bool); !ok {
					return fmt.Errorf("$exists takes true or false")
				}
			case "$type":
				switch arg {
				case "string", "number", "integer", "boolean", "null", "array", "object":
				default:
					return fmt.Errorf("$type %v", arg)
				}
			case "$pattern":
				s, ok := arg.(string)
				if !ok {
					return fmt.Errorf("$pattern takes a string")
				}
				if !strings.Contains(s, "${") {
					if _, err := regexp.Compile(s); err != nil {
						return err
					}
				}
			case "$len":
				if _, ok := arg.(json.Number); !ok {
					return fmt.Errorf("$len takes a number")
				}
			case "$contains", "$none", "$ne":
				if err := checkValue(arg); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch c := v.(type) {
	case map[string]any:
		for _, e := range c {
			if err := checkValue(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range c {
			if err := checkValue(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// match checks got (present says whether the pointer resolved) against
// want. With subset, an object in want matches an object holding at least
// its members; otherwise objects must have the same members.
func match(want, got any, present, subset bool) error {
	if m, ok := isMatcher(want); ok {
		return matchOps(m, got, present)
	}
	if !present {
		return fmt.Errorf("missing; want %s", show(want))
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("got %s; want an object", show(got))
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if err := match(w[k], gv, ok, subset); err != nil {
				return fmt.Errorf("/%s: %w", k, err)
			}
		}
		if !subset {
			for _, k := range sortedKeys(g) {
				if _, ok := w[k]; !ok {
					return fmt.Errorf("/%s: unexpected member", k)
				}
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %s; want %s", show(got), show(want))
		}
		for i := range w {
			if err := match(w[i], g[i], true, subset); err != nil {
				return fmt.Errorf("/%d: %w", i, err)
			}
		}
		return nil
	}
	if !equalScalar(want, got) {
		return fmt.Errorf("got %s; want %s", show(got), show(want))
	}
	return nil
}

func matchOps(m map[string]any, got any, present bool) error {
	if e, ok := m["$exists"]; ok {
		if e.(bool) != present {
			if present {
				return fmt.Errorf("got %s; want no such member", show(got))
			}
			return fmt.Errorf("missing; want a value")
		}
		if !present {
			return nil
		}
	}
	if !present {
		return fmt.Errorf("missing; want %s", show(m))
	}
	for _, op := range sortedKeys(m) {
		arg := m[op]
		switch op {
		case "$type":
			if t := typeOf(got); t != arg && !(arg == "number" && t == "integer") {
				return fmt.Errorf("got %s (%s); want a value of type %s", show(got), t, arg)
			}
		case "$pattern":
			s, ok := got.(string)
			re, err := regexp.Compile(arg.(string))
			if err != nil {
				return err
			}
			if !ok || !re.MatchString(s) {
				return fmt.Errorf("got %s; want a string matching %s", show(got), arg)
			}
		case "$len":
			n, _ := strconv.Atoi(string(arg.(json.Number)))
			l := -1
			switch g := got.(type) {
			case []any:
				l = len(g)
			case map[string]any:
				l = len(g)
			case string:
				l = len(g)
			}
			if l != n {
				return fmt.Errorf("got %s (length %d); want length %d", show(got), l, n)
			}
		case "$contains", "$none":
			arr, ok := got.([]any)
			if !ok {
				return fmt.Errorf("got %s; want an array", show(got))
			}
			found := slices.ContainsFunc(arr, func(e any) bool { return match(arg, e, true, true) == nil })
			if op == "$contains" && !found {
				return fmt.Errorf("got %s; want an element matching %s", show(got), show(arg))
			}
			if op == "$none" && found {
				return fmt.Errorf("got %s; want no element matching %s", show(got), show(arg))
			}
		case "$gt", "$gte", "$lt", "$lte":
			a, okA := number(got)
			b, okB := number(arg)
			if !okA || !okB {
				return fmt.Errorf("got %s; want a number %s %s", show(got), op[1:], show(arg))
			}
			c := a.Cmp(b)
			if (op == "$gt" && c <= 0) || (op == "$gte" && c < 0) || (op == "$lt" && c >= 0) || (op == "$lte" && c > 0) {
				return fmt.Errorf("got %s; want %s %s", show(got), op[1:], show(arg))
			}
		case "$ne":
			if match(arg, got, true, false) == nil {
				return fmt.Errorf("got %s; want anything else", show(got))
			}
		}
	}
	return nil
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func number(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func equalScalar(want, got any) bool {
	if wn, ok := want.(json.Number); ok {
		gn, ok := got.(json.Number)
		if !ok {
			return false
		}
		a, okA := number(wn)
		b, okB := number(gn)
		return okA && okB && a.Cmp(b) == 0
	}
	return want == got
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// show renders v as compact JSON, cut to a readable length.
func show(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	const max = 240
	if len(raw) > max {
		return string(raw[:max]) + "…"
	}
	return string(raw)
}

// vars holds a case's variables as raw JSON values.
type vars map[string]json.RawMessage

// text returns the string form of variable name: a JSON string's content,
// or any other value's JSON text.
func (vs vars) text(name string) (string, bool) {
	raw, ok := vs[name]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return string(raw), true
}

// interpolate replaces every ${name} in s with the variable's string form.
func (vs vars) interpolate(s string) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := vs.text(name)
		if !ok {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("variable ${%s} is not set", missing)
	}
	return out, nil
}

// substitute walks a decoded JSON value: a string that is exactly ${name}
// becomes the variable's JSON value (keeping its type); other strings, and
// member names, are interpolated.
func (vs vars) substitute(v any) (any, error) {
	switch x := v.(type) {
	case string:
		if m := varRef.FindStringSubmatch(x); m != nil && m[0] == x {
			raw, ok := vs[m[1]]
			if !ok {
				return nil, fmt.Errorf("variable ${%s} is not set", m[1])
			}
			return decodeJSON(raw)
		}
		return vs.interpolate(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk, err := vs.interpolate(k)
			if err != nil {
				return nil, err
			}
			ne, err := vs.substitute(e)
			if err != nil {
				return nil, err
			}
			out[nk] = ne
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ne, err := vs.substitute(e)
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return out, nil
	}
	return v, nil
}

// substituteRaw decodes raw, substitutes variables and returns the value.
func (vs vars) substituteRaw(raw json.RawMessage) (any, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return vs.substitute(v)
}
