package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// Token prefixes.
const (
	// OwnerPrefix starts an owner session token.
	OwnerPrefix = "ctx_"
	// ServicePrefix starts a service (consumer) token.
	ServicePrefix = "ctxs_"
)

const (
	tokenBytes   = 32
	tokenEncoded = (tokenBytes*8 + 5) / 6 // 43 base64url characters
	maxPrefix    = 17                     // 16 characters and "_"
)

var errBadPrefix = errors.New("identity: invalid prefix")

// NewToken returns prefix followed by the unpadded base64url encoding of 32
// bytes from crypto/rand. It returns an error only if prefix is not a valid
// prefix (see the package doc).
func NewToken(prefix string) (string, error) {
	if !validPrefix(prefix) {
		return "", errBadPrefix
	}
	var b [tokenBytes]byte
	rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashToken returns the SHA-256 of the whole token string, prefix included.
// Store this, never the token.
func HashToken(token string) [32]byte {
	return sha256.Sum256([]byte(token))
}

// LooksLikeToken reports whether s has the shape of a token made by
// [NewToken] with prefix: the prefix, then 43 base64url characters. It says
// nothing about whether the token is valid.
func LooksLikeToken(s, prefix string) bool {
	if !validPrefix(prefix) || len(s) != len(prefix)+tokenEncoded || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return false
		}
	}
	return true
}

// LooksLikeTokenPrefix reports whether s could be the beginning of a token
// with the given prefix: the prefix, then at most a whole token's worth of
// base64url characters.
func LooksLikeTokenPrefix(s, prefix string) bool {
	if !validPrefix(prefix) || len(s) < len(prefix) || len(s) > len(prefix)+tokenEncoded || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return false
		}
	}
	return true
}

// validPrefix reports whether p is 1 to 16 lower-case ASCII letters or
// digits followed by "_".
func validPrefix(p string) bool {
	if len(p) < 2 || len(p) > maxPrefix || p[len(p)-1] != '_' {
		return false
	}
	for i := 0; i < len(p)-1; i++ {
		if c := p[i]; !('a' <= c && c <= 'z') && !('0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isBase64URL(c byte) bool {
	return ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-' || c == '_'
}
