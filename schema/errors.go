package schema

import (
	"errors"
	"fmt"
)

// Sentinel errors returned (wrapped) by [Decode], [DecodeInto] and
// [Validator.DecodeValid]. Callers branch on them with [errors.Is]; the
// wrapping error says what is wrong in lower-case words and never quotes the
// input.
var (
	// ErrInvalidJSON reports input that is not acceptable JSON under this
	// binding: a syntax error, invalid UTF-8, a lone surrogate escape, a
	// duplicate member name, trailing data, nesting, strings, numbers or
	// member counts beyond [Limits], or (for [DecodeInto]) an unknown field
	// or a value of the wrong type.
	ErrInvalidJSON = errors.New("invalid json")

	// ErrTooLarge reports input longer than [Limits.MaxBytes]. It is
	// distinct from ErrInvalidJSON so that an HTTP adapter can answer 413.
	ErrTooLarge = errors.New("input too large")
)

// invalidf returns an error wrapping ErrInvalidJSON. The format arguments
// must never include input bytes: only offsets, counts and limits.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidJSON}, args...)...)
}
