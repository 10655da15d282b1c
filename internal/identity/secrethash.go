package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Parameters used by HashSecret (OWASP's first Argon2id recommendation).
const (
	hashMemoryKiB = 19456
	hashTime      = 2
	hashThreads   = 1
	hashSaltSize  = 16
	hashKeySize   = 32
)

// Bounds VerifySecret accepts in a stored hash. They allow stronger settings
// than ours, up to about 3.4 times our cost, and nothing that could tie up a
// request for long.
const (
	maxMemoryKiB = 64 * 1024
	maxTime      = 10
	maxThreads   = 4
	maxCost      = 128 * 1024 // memory (KiB) × time
	minSaltSize  = 8
	maxSaltSize  = 64
	minKeySize   = 16
	maxKeySize   = 64
	maxEncoded   = 256
)

// ErrMalformedHash is returned by [VerifySecret] when the encoded hash is not
// an Argon2id PHC string within the accepted bounds.
var ErrMalformedHash = errors.New("identity: malformed secret hash")

var errEmptySecret = errors.New("identity: empty secret")

// HashSecret hashes secret with Argon2id and a fresh 16-byte random salt and
// returns the PHC string (see the package doc). It refuses an empty secret.
// It does not retain or modify secret.
func HashSecret(secret []byte) (string, error) {
	if len(secret) == 0 {
		return "", errEmptySecret
	}
	salt := make([]byte, hashSaltSize)
	rand.Read(salt)
	memory, time := hashCost()
	key := argon2.IDKey(secret, salt, time, memory, hashThreads, hashKeySize)
	return "$argon2id$v=19$m=" + strconv.Itoa(int(memory)) +
		",t=" + strconv.Itoa(int(time)) +
		",p=" + strconv.Itoa(hashThreads) +
		"$" + base64.RawStdEncoding.EncodeToString(salt) +
		"$" + base64.RawStdEncoding.EncodeToString(key), nil
}

// VerifySecret reports whether secret matches encoded, a PHC string as made
// by [HashSecret]. It returns (false, nil) for a wrong secret and
// [ErrMalformedHash] when encoded is not "$argon2id$v=19$m=M,t=T,p=P$salt$hash"
// with canonical decimal numbers, unpadded canonical base64, and parameters
// within bounds (m ≤ 64 MiB, t ≤ 10, p ≤ 4, m×t ≤ 128 MiB, salt 8–64
// bytes, hash 16–64 bytes). It never panics, and the comparison is constant
// time. The error does not include encoded.
func VerifySecret(encoded string, secret []byte) (bool, error) {
	p, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey(secret, p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(got, p.key) == 1, nil
}

type hashParams struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func parseHash(encoded string) (hashParams, error) {
	var p hashParams
	if len(encoded) > maxEncoded {
		return p, ErrMalformedHash
	}
	// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, hash
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return p, ErrMalformedHash
	}
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return p, ErrMalformedHash
	}
	m, okM := param(params[0], "m=")
	t, okT := param(params[1], "t=")
	th, okP := param(params[2], "p=")
	if !okM || !okT || !okP ||
		th < 1 || th > maxThreads ||
		t < 1 || t > maxTime ||
		m < 8*th || m > maxMemoryKiB || m*t > maxCost {
		return p, ErrMalformedHash
	}
	p.memory, p.time, p.threads = uint32(m), uint32(t), uint8(th)

	var ok bool
	if p.salt, ok = decodeB64(parts[4], minSaltSize, maxSaltSize); !ok {
		return p, ErrMalformedHash
	}
	if p.key, ok = decodeB64(parts[5], minKeySize, maxKeySize); !ok {
		return p, ErrMalformedHash
	}
	return p, nil
}

// param parses name followed by a canonical decimal number (no sign, no
// leading zero) of at most 9 digits.
func param(s, name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(s, name)
	if !ok || len(digits) == 0 || len(digits) > 9 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// decodeB64 decodes canonical unpadded standard base64 of lo to hi bytes.
func decodeB64(s string, lo, hi int) ([]byte, bool) {
	b, err := base64.RawStdEncoding.Strict().DecodeString(s)
	// The decoder skips CR and LF; re-encoding rejects them.
	if err != nil || len(b) < lo || len(b) > hi || base64.RawStdEncoding.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}
