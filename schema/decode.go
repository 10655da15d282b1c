package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Fixed bounds on number literals. They are not part of [Limits] because no
// JSON document of this binding needs larger numbers, and larger ones are
// expensive for the validator, which parses numbers as exact rationals.
const (
	maxNumberBytes = 128 // length of a number literal
	maxExponent    = 999 // magnitude of a number's decimal exponent
)

// Decode parses one JSON value from raw, refusing anything ambiguous or
// outside lim. Objects decode as map[string]any, arrays as []any, numbers as
// [json.Number] (so large integers keep every digit), strings as string,
// and true, false and null as bool and nil.
//
// Decode refuses, with an error wrapping [ErrInvalidJSON]:
//   - empty input (nothing but white space);
//   - invalid UTF-8 anywhere in the input;
//   - a \u escape that is a lone surrogate (an unpaired U+D800–U+DFFF);
//   - nesting deeper than lim.MaxDepth, detected by a byte scan before any
//     value is built, so a very deep document is cheap to refuse;
//   - a string or member name longer than lim.MaxStringBytes;
//   - more than lim.MaxMembers object members and array elements in total;
//   - a number literal longer than 128 bytes or with an exponent beyond ±999;
//   - the same member name twice in one object (compared after unescaping),
//     at any depth;
//   - data other than white space after the value;
//   - any other syntax error, including a leading byte order mark.
//
// Input longer than lim.MaxBytes fails with an error wrapping [ErrTooLarge]
// instead. Error texts give offsets and limits, never input bytes.
func Decode(raw []byte, lim Limits) (any, error) {
	lim = lim.orDefault()
	if len(raw) > lim.MaxBytes {
		return nil, tooLarge(len(raw), lim.MaxBytes)
	}
	if err := prescan(raw, lim); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	p := parser{dec: dec, lim: lim}
	tok, err := dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	v, err := p.value(tok)
	if err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidf("trailing data after the value at offset %d", off)
	}
	return v, nil
}

func tooLarge(n, limit int) error {
	return fmt.Errorf("%w: %d bytes exceeds the limit of %d", ErrTooLarge, n, limit)
}

// prescan checks, in one pass over the bytes, what the token decoder would
// either miss or only find after building a large value: emptiness, UTF-8
// validity, lone surrogates, nesting depth and number literals. Syntax
// errors it does not need to understand are left to the token decoder.
func prescan(raw []byte, lim Limits) error {
	if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
		return invalidf("empty input")
	}
	if !utf8.Valid(raw) {
		return invalidf("invalid utf-8 at offset %d", firstInvalidUTF8(raw))
	}
	depth := 0
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			next, err := scanString(raw, i)
			if err != nil {
				return err
			}
			i = next
			continue
		case c == '[' || c == '{':
			depth++
			if depth > lim.MaxDepth {
				return invalidf("nesting deeper than %d at offset %d", lim.MaxDepth, i)
			}
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == '-' || ('0' <= c && c <= '9'):
			next, err := scanNumber(raw, i)
			if err != nil {
				return err
			}
			i = next
			continue
		}
		i++
	}
	return nil
}

func firstInvalidUTF8(raw []byte) int {
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(raw)
}

// scanString scans the string starting with the quote at raw[start] and
// returns the offset just after its closing quote (or len(raw) if it is
// unterminated, which the token decoder reports). It refuses lone
// surrogates in \u escapes.
func scanString(raw []byte, start int) (int, error) {
	for i := start + 1; i < len(raw); {
		switch raw[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(raw) && raw[i+1] == 'u' {
				r, ok := hex4(raw, i+2)
				if !ok {
					i += 2 // malformed escape: a syntax error for the decoder
					continue
				}
				switch {
				case 0xD800 <= r && r <= 0xDBFF:
					if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
						if lo, ok := hex4(raw, i+8); ok && 0xDC00 <= lo && lo <= 0xDFFF {
							i += 12
							continue
						}
					}
					return 0, invalidf("lone surrogate escape at offset %d", i)
				case 0xDC00 <= r && r <= 0xDFFF:
					return 0, invalidf("lone surrogate escape at offset %d", i)
				}
				i += 6
				continue
			}
			i += 2
		default:
			i++
		}
	}
	return len(raw), nil
}

// hex4 decodes the four hex digits at raw[at:at+4].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// scanNumber scans the run of number characters starting at raw[start] and
// returns the offset after it. It refuses overlong literals and huge
// exponents; malformed literals are left to the token decoder.
func scanNumber(raw []byte, start int) (int, error) {
	end := start
	for end < len(raw) && isNumberByte(raw[end]) {
		end++
	}
	lit := raw[start:end]
	if len(lit) > maxNumberBytes {
		return 0, invalidf("number longer than %d bytes at offset %d", maxNumberBytes, start)
	}
	if e := bytes.IndexAny(lit, "eE"); e >= 0 {
		exp := bytes.TrimLeft(lit[e+1:], "+-")
		exp = bytes.TrimLeft(exp, "0")
		n := 0
		for _, c := range exp {
			if c < '0' || c > '9' {
				return end, nil // malformed: a syntax error for the decoder
			}
			n = n*10 + int(c-'0')
			if n > maxExponent {
				return 0, invalidf("number exponent beyond %d at offset %d", maxExponent, start)
			}
		}
	}
	return end, nil
}

func isNumberByte(c byte) bool {
	return ('0' <= c && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// parser builds the value from the tokens of a json.Decoder, which checks
// the grammar, while it enforces what the grammar allows but we do not.
type parser struct {
	dec     *json.Decoder
	lim     Limits
	members int
}

func (p *parser) value(tok json.Token) (any, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return p.object()
		case '[':
			return p.array()
		}
		return nil, invalidf("syntax error at offset %d", p.dec.InputOffset())
	case string:
		if len(t) > p.lim.MaxStringBytes {
			return nil, invalidf("string longer than %d bytes before offset %d", p.lim.MaxStringBytes, p.dec.InputOffset())
		}
		return t, nil
	case json.Number, bool, nil:
		return t, nil
	}
	// Unreachable with UseNumber; refuse rather than guess.
	return nil, invalidf("unexpected token before offset %d", p.dec.InputOffset())
}

func (p *parser) object() (any, error) {
	m := make(map[string]any)
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		if tok == json.Delim('}') {
			return m, nil
		}
		name, ok := tok.(string)
		if !ok {
			return nil, invalidf("syntax error at offset %d", p.dec.InputOffset())
		}
		if len(name) > p.lim.MaxStringBytes {
			return nil, invalidf("member name longer than %d bytes before offset %d", p.lim.MaxStringBytes, p.dec.InputOffset())
		}
		if _, dup := m[name]; dup {
			return nil, invalidf("duplicate member name before offset %d", p.dec.InputOffset())
		}
		if err := p.count(); err != nil {
			return nil, err
		}
		tok, err = p.dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		v, err := p.value(tok)
		if err != nil {
			return nil, err
		}
		m[name] = v
	}
}

func (p *parser) array() (any, error) {
	a := []any{}
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		if tok == json.Delim(']') {
			return a, nil
		}
		if err := p.count(); err != nil {
			return nil, err
		}
		v, err := p.value(tok)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}

func (p *parser) count() error {
	p.members++
	if p.members > p.lim.MaxMembers {
		return invalidf("more than %d members and elements before offset %d", p.lim.MaxMembers, p.dec.InputOffset())
	}
	return nil
}

// syntaxError converts a decoder error into one that carries an offset but
// none of the decoder's text, which may quote input characters. The offset
// is where the token or value that failed starts: the decoder's own
// offsets are relative to that point for values.
func (p *parser) syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalidf("unexpected end of input")
	}
	return invalidf("syntax error at offset %d", p.dec.InputOffset())
}
