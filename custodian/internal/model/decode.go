package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/schema"
)

// Limits bounds every document the core decodes.
var limits = schema.DefaultLimits()

// An Input is the typed body of a request: one of this package's input
// types (ProposalInput, ConfirmInput, GrantInput, …), each given to the
// method it names. Only this package's types are Inputs.
//
// A core method validates the input it is given exactly as it validated
// the same body as raw JSON: an input [Service.Decode] accepted, and not
// changed since, passes as it is; an input built or changed by hand is
// encoded and decoded again as a body would be (the JSON Schema of the PHC
// binding, or the strict decoder's checks), so no Go caller skips a check
// the wire has; an input Decode refused answers Decode's error, after the
// method's own checks of the caller, in the order they always ran.
//
// A few inputs are not Inputs, on purpose, each for a reason its doc
// gives: what they carry is not a JSON body to decode, or its refusal is
// not the strict decoder's. ImportBundleInput is a sealed bundle, opened
// only by the codec; DECDocumentInput is a DEC document, whose report is
// about its bytes; ResolveInput is a Client-Vault body, whose protocol
// answers its size first and its faults only once the key is known;
// ExchangeInput is an RFC 8693 form, read by oidcrecipient.ParseForm and
// checked by Request.Check; and CardInput is another custodian's signed
// card, read by the card codec as it came.
type Input interface {
	spec() inputSpec
	decodedState() *decoded
}

// inputSpec says how an input type is decoded.
type inputSpec struct {
	// schema names the binding's JSON Schema the body must match, or is
	// "" for a body of fixed Go shape (the strict decoder).
	schema string
	// optional lets an empty body stand for the zero input; blank lets
	// a body of white space only stand for it too.
	optional, blank bool
	// utf8 refuses an input built or changed by hand with a string that
	// is not UTF-8, as its body is refused, where encoding would mend it
	// (see decoded): the DEC inputs, whose methods always refused one.
	utf8 bool
	// limits bound a fixed-shape body in place of the core's (nil: the
	// core's): an import's, whose archive is far larger.
	limits *schema.Limits
	// digest, when set, stands for a fixed-shape input's encoding in the
	// check of accept (see decoded): for an input that carries a large
	// document whose JSON encoding would cost more than hashing it, and
	// whose fields always encode (no time, no number to range-check).
	digest func(Input) [sha256.Size]byte
}

// within returns the limits a fixed-shape body of sp is decoded within.
func (sp inputSpec) within() schema.Limits {
	if sp.limits != nil {
		return *sp.limits
	}
	return limits
}

// decoded is what every input type embeds: the record of its decoding.
// It has no exported field, so it is not part of the JSON.
//
// An input type embeds decoded, says in a spec method how it is decoded,
// and the method that takes it checks it with accept where it decoded its
// body: before anything reads it, after the checks of the caller that
// came before the decoding.
//
// The check compares encodings: an input Decode accepted passes if it
// still encodes as it did; any other is decoded from its encoding, and
// the method goes on with what that decodes to. Inputs that encode alike
// differ only in what no method reads: a time's zone name beside its
// offset, white space in a JSON value, a list nil or empty where the
// method reads only its length (a list whose nil and empty mean
// different things is omitzero, not omitempty, so that they encode
// differently). A string changed to invalid UTF-8 encodes as the escape
// \ufffd, which no string Decode accepted encodes as (it writes U+FFFD
// itself), so it is decoded again, as U+FFFD — or, for an input whose
// spec says utf8, refused as its body would be.
//
// An input whose spec gives a digest (an import: an archive of up to
// 64 MiB) is compared by that digest instead: its encoding is neither held
// twice nor made twice.
type decoded struct {
	enc string            // the input's encoding when Decode accepted it
	sum [sha256.Size]byte // or its digest, if its spec gives one
	ok  bool              // Decode accepted the input
	err error             // Decode's refusal, answered by the method given the input
}

func (d *decoded) decodedState() *decoded { return d }

// DecodeInput is [Service.Decode] with the binding's validator sv.
func DecodeInput(sv *schema.Validator, op string, raw []byte, in Input) error {
	if in == nil || reflect.ValueOf(in).IsNil() {
		return Fail(op, KindInternal, "no input to decode into")
	}
	reflect.ValueOf(in).Elem().SetZero()
	d := in.decodedState()
	sp := in.spec()
	if sp.optional && (len(raw) == 0 || sp.blank && len(bytes.TrimSpace(raw)) == 0) {
		return nil // the zero input, checked by its method
	}
	var (
		enc []byte
		err error
	)
	if sp.schema != "" {
		enc, err = decodeDocEnc(sv, op, sp.schema, raw, in)
	} else if err = decodeStrictWithin(op, raw, sp.within(), in); err == nil && sp.digest == nil {
		enc, err = encodeDecoded(op, in)
	}
	if err != nil {
		reflect.ValueOf(in).Elem().SetZero()
		d.err = err
		return err
	}
	if sp.digest != nil {
		d.sum = sp.digest(in)
	} else {
		d.enc = string(enc)
	}
	d.ok = true
	return nil
}

// AcceptInput is accept with the binding's validator sv.
func AcceptInput(sv *schema.Validator, op string, in Input) error {
	d := in.decodedState()
	if d.err != nil {
		if e, ok := errors.AsType[*Error](d.err); ok {
			c := *e
			c.Op = op
			return &c
		}
		return d.err
	}
	sp := in.spec()
	if d.ok && sp.digest != nil && sp.digest(in) == d.sum {
		return nil
	}
	enc, err := encodeDecoded(op, in)
	if err != nil {
		return err
	}
	if d.ok && sp.digest == nil && string(enc) == d.enc {
		return nil
	}
	// Built or changed by hand: decoded as the same body would be.
	if sp.utf8 && !validUTF8(reflect.ValueOf(in).Elem()) {
		return decodeError(op, errors.New("a string is not UTF-8"))
	}
	return DecodeInput(sv, op, enc, in)
}

// validUTF8 reports whether every string in v — its exported fields,
// elements, map keys and values — is UTF-8. Bytes are not looked at: what
// of them is JSON, decoding checks.
func validUTF8(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || validUTF8(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && !validUTF8(v.Field(i)) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return true
		}
		for i := range v.Len() {
			if !validUTF8(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !validUTF8(it.Key()) || !validUTF8(it.Value()) {
				return false
			}
		}
	}
	return true
}

// encodeDecoded encodes v, just decoded. What decodes must encode again: a
// date-time whose offset carries it past year 9999, say, would otherwise
// fail only when it is stored. An input built by hand may also carry, as
// is, JSON that is not JSON (a claim's value, a key set): refused as its
// body would be.
func encodeDecoded(op string, v any) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		if e, ok := errors.AsType[*json.MarshalerError](err); ok && e.Type != timeType && e.Type != reflect.PointerTo(timeType) {
			return nil, decodeError(op, err)
		}
		return nil, &Error{Op: op, Kind: KindInvalid, Public: "the document has a value out of range (a date-time beyond year 9999?)", Err: err}
	}
	return enc, nil
}

var timeType = reflect.TypeFor[time.Time]()

// DecodeDoc validates raw against the named schema of the PHC JSON binding
// and decodes it into v. A malformed document is KindInvalid, an oversized
// one KindTooLarge, a schema failure KindSchema with its violations.
func DecodeDoc(sv *schema.Validator, op, name string, raw []byte, v any) error {
	_, err := decodeDocEnc(sv, op, name, raw, v)
	return err
}

// decodeDocEnc is decodeDoc, and returns v's encoding.
func decodeDocEnc(sv *schema.Validator, op, name string, raw []byte, v any) ([]byte, error) {
	doc, violations, err := sv.DecodeValid(name, raw, limits)
	if err != nil {
		return nil, decodeError(op, err)
	}
	if len(violations) > 0 {
		return nil, &Error{Op: op, Kind: KindSchema, Subject: name, Violations: violations}
	}
	// The document is valid; re-encode it into the typed form.
	norm, err := json.Marshal(doc)
	if err != nil {
		return nil, Wrap(op, KindInternal, err)
	}
	if err := json.Unmarshal(norm, v); err != nil {
		return nil, &Error{Op: op, Kind: KindInvalid, Public: "the document has a value of the wrong form", Err: err}
	}
	return encodeDecoded(op, v)
}

// DecodeStrict decodes raw into v with the trust-boundary checks but no
// schema (small request bodies with a fixed Go shape).
func DecodeStrict(op string, raw []byte, v any) error {
	return decodeStrictWithin(op, raw, limits, v)
}

// decodeStrictWithin is decodeStrict within lim.
func decodeStrictWithin(op string, raw []byte, lim schema.Limits, v any) error {
	if err := schema.DecodeInto(raw, lim, v); err != nil {
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

// UnlockInput is the body of an unlock: the password and the Secret Key
// (see [Service.Unlock]).
type UnlockInput struct {
	Password  string `json:"password"`
	SecretKey string `json:"secret_key"`
	decoded
}

func (*UnlockInput) spec() inputSpec { return inputSpec{} }

// QuarantineRejectInput names the quarantined records to reject, or all
// of them (see [Service.RejectQuarantined]).
type QuarantineRejectInput struct {
	IDs []string `json:"ids"`
	All bool     `json:"all"`
	decoded
}

func (*QuarantineRejectInput) spec() inputSpec { return inputSpec{} }
