package valueref

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/phc-project/phc/schema"
)

// Reference brackets and the mask of a display.
const (
	Open  = "⟦"
	Close = "⟧"
	mask  = "•••"
)

// keyPattern is the grammar of the keys a custodian mints. Any other key
// is in the client's range (one a vault made itself).
var keyPattern = regexp.MustCompile(`^[A-Z][A-Z_]{0,31}_[1-9][0-9]{0,5}$`)

// ValidKey reports whether key is of the form a custodian mints: TYPE_N,
// TYPE upper-case letters and "_", N from 1 to 999999.
func ValidKey(key string) bool { return keyPattern.MatchString(key) }

// Pattern matches a reference ⟦TYPE_N:display⟧ or ⟦TYPE_N⟧; its first
// group is the key.
var Pattern = regexp.MustCompile(`⟦([A-Z][A-Z_]{0,31}_[1-9][0-9]{0,5})(?::[^⟦⟧]*)?⟧`)

// Keys returns the keys of every reference in s, in order of appearance.
func Keys(s string) []string {
	var out []string
	for _, m := range Pattern.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// Display returns the display part of the reference ref (⟦KEY:display⟧),
// or "" when it has none.
func Display(ref string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(ref, Open), Close)
	_, d, _ := strings.Cut(inner, ":")
	return d
}

// types maps the last segment of a well-known key to its reference type
// where the plain rule reads badly.
var types = map[string]string{
	"passport_number": "PASSPORT", "passport": "PASSPORT", "passport_no": "PASSPORT",
	"bank_account_number": "BANK_ACCOUNT", "bank_routing": "ROUTING", "dob": "BIRTH_DATE",
}

// Type is the TYPE of a reference to a value of the claim key claimKey:
// upper-case letters and "_", from the key's last segment
// (identity.passport_number → PASSPORT, contact.email → EMAIL), never
// from the value.
func Type(claimKey string) string {
	seg := claimKey[strings.LastIndexByte(claimKey, '.')+1:]
	if t, ok := types[seg]; ok {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(seg) && b.Len() < 32; i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case c == '_' || c == '-':
			if s := b.String(); s != "" && !strings.HasSuffix(s, "_") {
				b.WriteByte('_')
			}
		}
	}
	t := strings.TrimSuffix(strings.TrimSuffix(b.String(), "_"), "_NUMBER")
	if t == "" {
		return "VALUE"
	}
	return t
}

// Value is the text a reference resolves to: a string value itself, any
// other JSON value in its compact JSON form.
func Value(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}

// Text is the reference of key for the value v of the claim key
// claimKey: ⟦KEY:display⟧, or ⟦KEY⟧ for a secret or a value without
// display.
func Text(key, claimKey string, v json.RawMessage) string {
	d := ""
	if t := bytes.TrimSpace(v); !Secret(claimKey) && len(t) > 0 && t[0] != '{' && t[0] != '[' {
		// An object or array has no display: a hint of its JSON text
		// would show its other members.
		d = Mask(Value(v))
	}
	if d == "" {
		return Open + key + Close
	}
	return Open + key + ":" + d + Close
}

// Secret reports whether the values of claimKey are secrets, whose
// references show no display at all: credentials and keys naming a
// password, PIN, secret or token.
func Secret(claimKey string) bool {
	if claimKey == "credentials" || strings.HasPrefix(claimKey, "credentials.") {
		return true
	}
	seg := claimKey[strings.LastIndexByte(claimKey, '.')+1:]
	for _, w := range []string{"password", "passphrase", "pin", "secret", "token", "api_key", "private_key", "cvv", "cvc"} {
		if seg == w || strings.HasPrefix(seg, w+"_") || strings.HasSuffix(seg, "_"+w) {
			return true
		}
	}
	return false
}

// emailAddress is what the display treats as an address, whose domain it
// shows: a plain local part and a host name, nothing else (a value that
// merely contains an @ is masked like any other).
var emailAddress = regexp.MustCompile(`^[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)+$`)

// Mask is the display of the value s: a hint that hides at least three of
// its characters behind •••, after dropping every character [Hidden]
// names: an address keeps two characters of its local part and its
// domain (ma•••@example.com), anything else its first and last two
// characters when it has seven or more (X1•••89), one of each with five
// or six, none below.
func Mask(s string) string {
	s = strings.Map(func(r rune) rune {
		if Hidden(r) {
			return -1
		}
		return r
	}, s)
	if local, domain, ok := strings.Cut(s, "@"); ok && emailAddress.MatchString(s) {
		if n := utf8.RuneCountInString(local); n >= 3 {
			keep := min(2, n-3)
			return string([]rune(local)[:keep]) + mask + "@" + domain
		}
	}
	rs := []rune(s)
	keep := 0
	switch n := len(rs); {
	case n >= 7:
		keep = 2
	case n >= 5:
		keep = 1
	}
	if keep == 0 {
		return mask
	}
	return string(rs[:keep]) + mask + string(rs[len(rs)-keep:])
}

// Hidden reports whether a display leaves r out: the reference brackets,
// or a character that disguises what is shown (schema.Disguises).
func Hidden(r rune) bool {
	return r == '⟦' || r == '⟧' || schema.Disguises(r)
}
