package identity

import (
	"crypto/rand"
	"encoding/base32"
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
	return prefix + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]), nil
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
