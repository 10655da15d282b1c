package schema

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxViolations caps the violations returned for one document.
const maxViolations = 50

// A Violation is one way in which a document fails its schema.
//
// Message is a short lower-case text of this package that never contains
// any part of the document's values: it reads as a predicate of Path, as in
// "/key" "is required". Bounds named in messages come from the schema.
type Violation struct {
	// Path is a JSON Pointer (RFC 6901) to the offending value: "" for the
	// document itself, "/evidence/0/ref" for a member of an array item. For
	// "required" it points at the missing member, and for
	// "additionalProperties" at the member that is not allowed. A member
	// name longer than 64 bytes is cut on a rune boundary and ends in "…",
	// so such a Path no longer resolves.
	Path string `json:"path"`
	// Keyword is the failing JSON Schema keyword: "required", "type",
	// "enum", "const", "additionalProperties", "pattern", "format",
	// "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
	// "minProperties", "minimum", and so on.
	Keyword string `json:"keyword"`
	// Message says what is wrong, without quoting the document.
	Message string `json:"message"`
}

// violations flattens the library's tree of errors into its most specific
// ones, translates them, and returns them sorted, deduplicated and capped.
func violations(verr *jsonschema.ValidationError) []Violation {
	var out []Violation
	collect(verr, &out)
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(
			strings.Compare(a.Path, b.Path),
			strings.Compare(a.Keyword, b.Keyword),
			strings.Compare(a.Message, b.Message),
		)
	})
	out = slices.Compact(out)
	if len(out) > maxViolations {
		out = out[:maxViolations]
	}
	if len(out) == 0 {
		// A failure with no translatable cause; never report success.
		out = []Violation{{Path: "", Keyword: "$schema", Message: "is invalid"}}
	}
	return out
}

// collect appends the violations of e. Errors that only group others are
// descended into; anyOf, oneOf, not, contains and propertyNames are
// reported as themselves, since their causes describe alternatives rather
// than faults.
func collect(e *jsonschema.ValidationError, out *[]Violation) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				collect(c, out)
			}
			return
		}
	}
	*out = append(*out, leaf(e)...)
}

// leaf translates one error. It reads only the schema side of the error
// kind (wanted types, bounds, schema property names, keyword names) and the
// instance location, never the instance's values.
func leaf(e *jsonschema.ValidationError) []Violation {
	at := pointer(e.InstanceLocation)
	one := func(keyword, message string) []Violation {
		return []Violation{{Path: at, Keyword: keyword, Message: message}}
	}
	each := func(names []string, keyword, message string) []Violation {
		vs := make([]Violation, 0, len(names))
		for _, n := range names {
			vs = append(vs, Violation{Path: at + pointer([]string{n}), Keyword: keyword, Message: message})
		}
		return vs
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return one("type", "must be "+typeNames(k.Want))
	case *kind.Enum:
		return one("enum", "must be one of the allowed values")
	case *kind.Const:
		return one("const", "must be the allowed value")
	case *kind.Format:
		return one("format", "must be a valid "+k.Want)
	case *kind.Required:
		return each(k.Missing, "required", "is required")
	case *kind.DependentRequired:
		return each(k.Missing, "dependentRequired", "is required")
	case *kind.Dependency:
		return each(k.Missing, "dependencies", "is required")
	case *kind.AdditionalProperties:
		return each(k.Properties, "additionalProperties", "is not allowed")
	case *kind.PropertyNames:
		return each([]string{k.Property}, "propertyNames", "is not an allowed name")
	case *kind.MinLength:
		return one("minLength", fmt.Sprintf("must be at least %s long", plural(k.Want, "character")))
	case *kind.MaxLength:
		return one("maxLength", fmt.Sprintf("must be at most %s long", plural(k.Want, "character")))
	case *kind.Pattern:
		return one("pattern", "must match the required pattern")
	case *kind.MinItems:
		return one("minItems", "must have at least "+plural(k.Want, "item"))
	case *kind.MaxItems:
		return one("maxItems", "must have at most "+plural(k.Want, "item"))
	case *kind.AdditionalItems:
		return one("additionalItems", "has too many items")
	case *kind.UniqueItems:
		return one("uniqueItems", "must not contain duplicate items")
	case *kind.MinProperties:
		return one("minProperties", "must have at least "+pluralProperties(k.Want))
	case *kind.MaxProperties:
		return one("maxProperties", "must have at most "+pluralProperties(k.Want))
	case *kind.Minimum:
		return one("minimum", "must be at least "+k.Want.RatString())
	case *kind.Maximum:
		return one("maximum", "must be at most "+k.Want.RatString())
	case *kind.ExclusiveMinimum:
		return one("exclusiveMinimum", "must be greater than "+k.Want.RatString())
	case *kind.ExclusiveMaximum:
		return one("exclusiveMaximum", "must be less than "+k.Want.RatString())
	case *kind.MultipleOf:
		return one("multipleOf", "must be a multiple of "+k.Want.RatString())
	case *kind.Contains:
		return one("contains", "must contain a matching item")
	case *kind.MinContains:
		return one("minContains", "must contain at least "+plural(k.Want, "matching item"))
	case *kind.MaxContains:
		return one("maxContains", "must contain at most "+plural(k.Want, "matching item"))
	case *kind.AnyOf:
		return one("anyOf", "must match one of the allowed forms")
	case *kind.OneOf:
		return one("oneOf", "must match exactly one of the allowed forms")
	case *kind.Not:
		return one("not", "must not match the excluded form")
	case *kind.FalseSchema:
		return one("false", "is not allowed")
	case *kind.ContentEncoding:
		return one("contentEncoding", "must have valid content")
	case *kind.ContentMediaType:
		return one("contentMediaType", "must have valid content")
	case *kind.ContentSchema:
		return one("contentSchema", "must have valid content")
	case *kind.InvalidJsonValue:
		return one("type", "must be a json value")
	case *kind.RefCycle:
		return one("$ref", "cannot be validated")
	}
	// A kind this package does not know (a newer library, an extension):
	// its keyword path comes from the schema; its text may quote the value.
	keyword := "$schema"
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		keyword = kp[0]
	}
	return one(keyword, "is invalid")
}

// typeNames renders JSON types as "a string", "an object or null".
func typeNames(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "null":
			names[i] = "null"
		case "integer", "object", "array":
			names[i] = "an " + t
		default:
			names[i] = "a " + t
		}
	}
	return strings.Join(names, " or ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func pluralProperties(n int) string {
	if n == 1 {
		return "1 property"
	}
	return fmt.Sprintf("%d properties", n)
}
