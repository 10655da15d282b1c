package identity

import (
	"crypto/rand"
	"encoding/base32"
	"time"
)

const (
	idBytes   = 16
	idEncoded = (idBytes*8 + 4) / 5 // 26 base32 characters
)

// NewID returns prefix followed by the unpadded upper-case RFC 4648 base32
// encoding of 16 bytes from crypto/rand, 26 characters. It returns an error
// only if prefix is not a valid prefix (see the package doc).
func NewID(prefix string) (string, error) {
	if !validPrefix(prefix) {
		return "", errBadPrefix
	}
	var b [idBytes]byte
	rand.Read(b[:])
	return prefix + idEncoding.EncodeToString(b[:]), nil
}

// idEncoding writes an ID's random bytes: RFC 4648 base32, unpadded.
var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// sortedDigits are the characters of an ID in byte order, so that a number
// written with them sorts as the number does.
const sortedDigits = "234567ABCDEFGHIJKLMNOPQRSTUVWXYZ"

const (
	timeChars   = 10 // 50 bits of Unix milliseconds
	randomBytes = 10 // 80 bits from crypto/rand, 16 characters
)

// NewOrderedID returns an ID that sorts after the IDs made before t's
// millisecond: prefix, t in Unix milliseconds as 10 characters whose byte
// order is the number's, then 80 bits from crypto/rand as 16 base32
// characters. It is a valid ID (see [ValidID]) like any other. Records made
// in volume (claims, proposals) use it so that the store, whose keys are
// IDs, puts the records written together in the same pages: with random
// IDs each new record of a large store lands on a page of its own, which
// the store's flush writes back to disk at a random place.
//
// Whoever holds such an ID learns when it was made, to the millisecond;
// the records made this way carry their creation time anyway. 80 random
// bits keep it unguessable.
func NewOrderedID(prefix string, t time.Time) (string, error) {
	if !validPrefix(prefix) {
		return "", errBadPrefix
	}
	ms := max(t.UnixMilli(), 0)
	var id [timeChars + (randomBytes*8)/5]byte
	for i := timeChars - 1; i >= 0; i-- {
		id[i] = sortedDigits[ms&31]
		ms >>= 5
	}
	var b [randomBytes]byte
	rand.Read(b[:])
	idEncoding.Encode(id[timeChars:], b[:])
	return prefix + string(id[:]), nil
}

// ValidID reports whether s is exactly prefix followed by 26 characters of
// [A-Z2-7].
func ValidID(s, prefix string) bool {
	if !validPrefix(prefix) || len(s) != len(prefix)+idEncoded || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z') && !('2' <= c && c <= '7') {
			return false
		}
	}
	return true
}
