package vault

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SecretKeySize is the size in bytes of a Secret Key.
const SecretKeySize = 16

const (
	secretKeyPrefix   = "PHC1"
	secretKeyChecksum = 2
	secretKeyRaw      = SecretKeySize + secretKeyChecksum // 18 bytes
	secretKeyBody     = (secretKeyRaw*8 + 4) / 5          // 29 base32 characters
	secretKeyGroup    = 6
	// maxSecretKeyText bounds the input ParseSecretKey will look at, so that
	// a huge paste costs nothing. It leaves room for generous extra dashes.
	maxSecretKeyText = 256
	// maxSecretKeyFile bounds how much of secret.key is read.
	maxSecretKeyFile = 4 << 10
)

// base32NoPad is RFC 4648 base32 without padding.
var base32NoPad = base32.StdEncoding.WithPadding(base32.NoPadding)

// ParseSecretKey parses Secret Key text (see the package doc) and returns the
// key bytes. It ignores surrounding white space, letter case and dashes. Any
// other deviation (wrong prefix, length or alphabet, non-canonical encoding,
// or a checksum mismatch) returns [ErrMalformedSecretKey]. The error never
// includes the input.
func ParseSecretKey(s string) ([SecretKeySize]byte, error) {
	var key [SecretKeySize]byte
	s = strings.TrimSpace(s)
	if len(s) > maxSecretKeyText {
		return key, ErrMalformedSecretKey
	}

	// Normalise: drop dashes, upper-case ASCII letters. Only ASCII is
	// case-folded, so no non-ASCII letter can fold into the alphabet.
	var buf [maxSecretKeyText]byte
	norm := buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-':
			continue
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		norm = append(norm, c)
	}
	defer clear(buf[:])

	if len(norm) != len(secretKeyPrefix)+secretKeyBody || string(norm[:len(secretKeyPrefix)]) != secretKeyPrefix {
		return key, ErrMalformedSecretKey
	}
	body := norm[len(secretKeyPrefix):]
	for _, c := range body {
		if !isBase32(c) {
			return key, ErrMalformedSecretKey
		}
	}

	var raw [secretKeyRaw]byte
	defer clear(raw[:])
	if n, err := base32NoPad.Decode(raw[:], body); err != nil || n != secretKeyRaw {
		return key, ErrMalformedSecretKey
	}
	// The last character carries 4 bits of data and 1 padding bit; reject a
	// set padding bit so that each key has exactly one spelling.
	var canon [secretKeyBody]byte
	base32NoPad.Encode(canon[:], raw[:])
	defer clear(canon[:])
	if string(canon[:]) != string(body) {
		return key, ErrMalformedSecretKey
	}

	sum := sha256.Sum256(raw[:SecretKeySize])
	if sum[0] != raw[SecretKeySize] || sum[1] != raw[SecretKeySize+1] {
		return key, ErrMalformedSecretKey
	}
	copy(key[:], raw[:SecretKeySize])
	return key, nil
}

// secretKeyDigestLabel separates SecretKeyDigest's hash from any other.
const secretKeyDigestLabel = "phc/v1/secret-key-digest\x00"

// SecretKeyDigest returns a digest of the Secret Key that text spells (as
// [ParseSecretKey] reads it), by which a caller can recognise the key
// again without keeping it: SHA-256 of a label and the key. The key is 128
// random bits, so the digest gives nothing to guess it from; it is not
// stored in the header, which keeps no fingerprint of the key. A malformed
// text returns [ErrMalformedSecretKey].
func SecretKeyDigest(text string) ([32]byte, error) {
	key, err := ParseSecretKey(text)
	defer clear(key[:])
	if err != nil {
		return [32]byte{}, err
	}
	var buf [len(secretKeyDigestLabel) + SecretKeySize]byte
	defer clear(buf[:])
	copy(buf[copy(buf[:], secretKeyDigestLabel):], key[:])
	return sha256.Sum256(buf[:]), nil
}

// formatSecretKey returns the canonical Secret Key text for key.
func formatSecretKey(key *[SecretKeySize]byte) string {
	var raw [secretKeyRaw]byte
	defer clear(raw[:])
	copy(raw[:], key[:])
	sum := sha256.Sum256(key[:])
	copy(raw[SecretKeySize:], sum[:secretKeyChecksum])

	var body [secretKeyBody]byte
	defer clear(body[:])
	base32NoPad.Encode(body[:], raw[:])

	var b strings.Builder
	b.Grow(len(secretKeyPrefix) + secretKeyBody + secretKeyBody/secretKeyGroup + 1)
	b.WriteString(secretKeyPrefix)
	for i := 0; i < secretKeyBody; i += secretKeyGroup {
		b.WriteByte('-')
		b.Write(body[i:min(i+secretKeyGroup, secretKeyBody)])
	}
	return b.String()
}

func isBase32(c byte) bool {
	return ('A' <= c && c <= 'Z') || ('2' <= c && c <= '7')
}

// ReadSecretKeyFile reads DIR/secret.key and returns its Secret Key text in
// canonical form. A missing file gives an error matching [io/fs.ErrNotExist];
// content that does not parse gives [ErrMalformedSecretKey].
func ReadSecretKeyFile(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, secretKeyFile))
	if err != nil {
		return "", fmt.Errorf("vault: read secret key: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretKeyFile+1))
	defer clear(data)
	if err != nil {
		return "", fmt.Errorf("vault: read secret key: %w", err)
	}
	if len(data) > maxSecretKeyFile {
		return "", ErrMalformedSecretKey
	}
	key, err := ParseSecretKey(string(data))
	defer clear(key[:])
	if err != nil {
		return "", err
	}
	return formatSecretKey(&key), nil
}

// CanonicalSecretKey parses Secret Key text as [ParseSecretKey] does (so
// white space, letter case and dashes do not matter) and returns it in
// canonical form.
func CanonicalSecretKey(s string) (string, error) {
	key, err := ParseSecretKey(s)
	defer clear(key[:])
	if err != nil {
		return "", err
	}
	return formatSecretKey(&key), nil
}

// WriteSecretKeyFile stores Secret Key text in DIR/secret.key, in canonical
// form, mode 0600 (replacing the file atomically if there is one).
func WriteSecretKeyFile(dir, text string) error {
	canon, err := CanonicalSecretKey(text)
	if err != nil {
		return err
	}
	return writeFileAtomic(dir, secretKeyFile, []byte(canon+"\n"))
}
