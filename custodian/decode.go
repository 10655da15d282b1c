package custodian

import (
	"encoding/json"
	"errors"

	"github.com/phc-project/phc/schema"
)

// Limits bounds every document the core decodes.
var limits = schema.DefaultLimits()

// decodeDoc validates raw against the named schema of the PHC JSON binding
// and decodes it into v. A malformed document is KindInvalid, an oversized
// one KindTooLarge, a schema failure KindSchema with its violations.
func (s *Service) decodeDoc(op, name string, raw []byte, v any) error {
	doc, violations, err := s.schema.DecodeValid(name, raw, limits)
	if err != nil {
		return decodeError(op, err)
	}
	if len(violations) > 0 {
		return &Error{Op: op, Kind: KindSchema, Subject: name, Violations: violations}
	}
	// The document is valid; re-encode it into the typed form.
	norm, err := json.Marshal(doc)
	if err != nil {
		return wrap(op, KindInternal, err)
	}
	if err := json.Unmarshal(norm, v); err != nil {
		return &Error{Op: op, Kind: KindInvalid, Public: "the document has a value of the wrong form", Err: err}
	}
	// What decodes must encode again: a date-time whose offset carries it
	// past year 9999, say, would otherwise fail only when it is stored.
	if _, err := json.Marshal(v); err != nil {
		return &Error{Op: op, Kind: KindInvalid, Public: "the document has a value out of range (a date-time beyond year 9999?)", Err: err}
	}
	return nil
}

// decodeStrict decodes raw into v with the trust-boundary checks but no
// schema (small request bodies with a fixed Go shape).
func decodeStrict(op string, raw []byte, v any) error {
	if err := schema.DecodeInto(raw, limits, v); err != nil {
		return decodeError(op, err)
	}
	return nil
}

func decodeError(op string, err error) error {
	if errors.Is(err, schema.ErrTooLarge) {
		return &Error{Op: op, Kind: KindTooLarge, Err: err}
	}
	// The decoder's own text goes to the log only: it may name a member
	// the client sent.
	return &Error{Op: op, Kind: KindInvalid, Public: "the body is not acceptable JSON: malformed, too deep, with duplicate or unknown members, or a value of the wrong type", Err: err}
}

// DecodeBody decodes a small request body of fixed Go shape into v with the
// trust-boundary checks of package schema (strict UTF-8, bounded depth and
// size, no duplicate or unknown members). Adapters use it for bodies that
// carry no claim data, such as unlock.
func DecodeBody(op string, raw []byte, v any) error { return decodeStrict(op, raw, v) }
