package bundle

import (
	"crypto/ed25519"
	"crypto/sha512"
	"errors"
	"math/big"

	"github.com/lestrrat-go/jwx/v2/x25519"
)

// A card's key-agreement key is bound to its signing key, which alone
// names the custodian: it is the X25519 form of the Ed25519 key (the
// birational map libsodium's crypto_sign_ed25519_pk_to_curve25519 uses),
// so that no one handling a card can swap in a key of their own under the
// same custodian_id. phc makes only such cards, and accepts only such
// cards (docs/formats/bundle.md §1 allows any X25519 or P-256 key; this is stricter on
// purpose).

// p25519 is the field prime 2^255 - 19.
var p25519 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// montgomeryOf returns the X25519 public key of an Ed25519 public key:
// u = (1 + y) / (1 - y) mod p.
func montgomeryOf(pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("an Ed25519 public key is 32 bytes")
	}
	le := make([]byte, 32)
	copy(le, pub)
	le[31] &= 0x7f // the sign of x
	y := new(big.Int).SetBytes(reverse(le))
	if y.Cmp(p25519) >= 0 {
		return nil, errors.New("the Ed25519 key is not canonical")
	}
	one := big.NewInt(1)
	den := new(big.Int).Sub(one, y)
	den.Mod(den, p25519)
	if den.Sign() == 0 {
		return nil, errors.New("the Ed25519 key has no X25519 form")
	}
	num := new(big.Int).Add(one, y)
	u := num.Mul(num, den.ModInverse(den, p25519))
	u.Mod(u, p25519)
	out := make([]byte, 32)
	u.FillBytes(out)
	return reverse(out), nil
}

func reverse(b []byte) []byte {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return b
}

// x25519Of returns the X25519 private key of an Ed25519 private key: the
// clamped first half of SHA-512 of its seed (as crypto_sign_ed25519_sk_to_
// curve25519), whose public key is montgomeryOf the Ed25519 public key.
func x25519Of(priv ed25519.PrivateKey) (x25519.PrivateKey, error) {
	h := sha512.Sum512(priv.Seed())
	defer clear(h[:])
	s := h[:32]
	s[0] &= 248
	s[31] &= 127
	s[31] |= 64
	return x25519.NewKeyFromSeed(s)
}
