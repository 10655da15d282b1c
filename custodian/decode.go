package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
)

// Decode decodes raw, a request body, into in, which it first resets. A
// body of the binding's schema is validated against it; any other gets the
// trust-boundary checks of package schema (strict UTF-8, bounded depth and
// size, no duplicate or unknown members, values of the right type). A
// malformed body is KindInvalid, an oversized one KindTooLarge, a schema
// failure KindSchema with its violations.
//
// in remembers the outcome. An adapter may return Decode's error at once,
// or give in to its method regardless: the method then answers the refusal
// where it would have decoded raw itself, after authorization and rate
// limits, as the core did when it took raw bodies.
func (s *Service) Decode(op string, raw []byte, in Input) error {
	return model.DecodeInput(s.schema, op, raw, in)
}

// accept checks in, given to the method op (see [Input]); it may replace
// in's contents with what their encoding decodes to.
func (s *Service) accept(op string, in Input) error { return model.AcceptInput(s.schema, op, in) }
