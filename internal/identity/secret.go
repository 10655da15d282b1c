package identity

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

const redacted = "REDACTED"

// Secret carries a sensitive value, such as a password, a Secret Key or a
// token, through code without printing it. Its String, Format and GoString
// methods give "REDACTED" for every verb, it logs as "REDACTED" through
// [slog.LogValuer], and marshalling it to JSON or text fails. Only
// [Secret.Reveal] returns the value.
//
// The value sits behind a pointer, so even reflection-based printing of a
// struct holding a Secret in an unexported field shows an address, not the
// value. Copies of a Secret share the value. The zero Secret is empty.
type Secret struct {
	p *[]byte
}

// NewSecret returns a Secret holding a copy of b.
func NewSecret(b []byte) Secret {
	c := append([]byte(nil), b...)
	return Secret{p: &c}
}

// Reveal returns the value. The slice is shared with the Secret (and its
// copies): do not modify it, and do not use it after [Secret.Wipe].
func (s Secret) Reveal() []byte {
	if s.p == nil {
		return nil
	}
	return *s.p
}

// Len returns the length of the value.
func (s Secret) Len() int { return len(s.Reveal()) }

// Wipe zeroes the value and empties the Secret and its copies.
func (s Secret) Wipe() {
	if s.p != nil {
		clear(*s.p)
		*s.p = nil
	}
}

// String returns "REDACTED".
func (s Secret) String() string { return redacted }

// GoString returns "REDACTED".
func (s Secret) GoString() string { return redacted }

// Format writes "REDACTED" for every verb and flag.
func (s Secret) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, redacted) }

// LogValue returns "REDACTED".
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

var errMarshalSecret = errors.New("identity: refusing to marshal a Secret")

// MarshalJSON fails: a Secret must be revealed explicitly to be sent.
func (s Secret) MarshalJSON() ([]byte, error) { return nil, errMarshalSecret }

// MarshalText fails: a Secret must be revealed explicitly to be sent.
func (s Secret) MarshalText() ([]byte, error) { return nil, errMarshalSecret }

// UnmarshalText sets s to a copy of text, so a Secret can be decoded from
// JSON strings and other text formats.
func (s *Secret) UnmarshalText(text []byte) error {
	*s = NewSecret(text)
	return nil
}

var (
	_ fmt.Stringer   = Secret{}
	_ fmt.GoStringer = Secret{}
	_ fmt.Formatter  = Secret{}
	_ slog.LogValuer = Secret{}
)
