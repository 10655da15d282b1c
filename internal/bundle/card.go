package bundle

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/x25519"

	"github.com/phc-project/phc/custodian"
)

var _ custodian.CardCodec = Codec{}

// MaxCardBytes bounds a card received from elsewhere.
const MaxCardBytes = 16 << 10

// Codec implements [custodian.CardCodec].
type Codec struct{}

// ErrCard is wrapped by every error of ParseCard: the card is not one this
// custodian can pin. The error's text says why, in terms of the card's
// structure, never quoting its contents.
var ErrCard = errors.New("not a valid custodian card")

func cardErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCard, fmt.Sprintf(format, args...))
}

// NewKeys makes a signing and a key-agreement key, returned as a private
// JWK set (JSON) for the caller to keep secret.
func (Codec) NewKeys() ([]byte, error) {
	_, sigPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	encPriv, err := x25519Of(sigPriv) // bound to the signing key (see bind.go)
	if err != nil {
		return nil, err
	}
	sig, err := keyOf(sigPriv, jwk.ForSignature, jwa.EdDSA.String())
	if err != nil {
		return nil, err
	}
	enc, err := keyOf(encPriv, jwk.ForEncryption, jwa.ECDH_ES_A256KW.String())
	if err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(sig); err != nil {
		return nil, err
	}
	if err := set.AddKey(enc); err != nil {
		return nil, err
	}
	return json.Marshal(set)
}

// keyOf wraps raw as a JWK with its use, alg and its thumbprint as kid.
func keyOf(raw any, use jwk.KeyUsageType, alg string) (jwk.Key, error) {
	k, err := jwk.FromRaw(raw)
	if err != nil {
		return nil, err
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	for name, v := range map[string]any{jwk.KeyUsageKey: use, jwk.AlgorithmKey: alg, jwk.KeyIDKey: b64(tp)} {
		if err := k.Set(name, v); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Card returns the public card of the private keys made by NewKeys.
func (Codec) Card(keys []byte, created time.Time) (custodian.Card, error) {
	set, err := jwk.Parse(keys)
	if err != nil {
		return custodian.Card{}, fmt.Errorf("bundle: the vault's keys: %w", err)
	}
	pub, err := jwk.PublicSetOf(set)
	if err != nil {
		return custodian.Card{}, fmt.Errorf("bundle: the vault's keys: %w", err)
	}
	sig, _, err := cardKeys(pub)
	if err != nil {
		return custodian.Card{}, fmt.Errorf("bundle: the vault's keys: %w", err)
	}
	id, err := custodianID(sig)
	if err != nil {
		return custodian.Card{}, err
	}
	raw, err := json.Marshal(pub)
	if err != nil {
		return custodian.Card{}, err
	}
	return custodian.Card{CustodianID: id, JWKS: raw, CreatedAt: created.UTC().Truncate(time.Second)}, nil
}

func custodianID(sig jwk.Key) (string, error) {
	tp, err := sig.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return "cus_" + b64(tp), nil
}

// ParseCard checks a card received from elsewhere and returns it with its
// key set re-encoded (public parts only).
func (Codec) ParseCard(raw []byte) (custodian.Card, error) {
	if len(raw) > MaxCardBytes {
		return custodian.Card{}, cardErr("larger than %d bytes", MaxCardBytes)
	}
	var in struct {
		CustodianID string          `json:"custodian_id"`
		JWKS        json.RawMessage `json:"jwks"`
		CreatedAt   *time.Time      `json:"created_at"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return custodian.Card{}, cardErr("malformed JSON, or a member other than custodian_id, jwks and created_at")
	}
	if _, err := dec.Token(); err != io.EOF {
		return custodian.Card{}, cardErr("trailing data after the card")
	}
	if in.CreatedAt == nil || len(in.JWKS) == 0 || !strings.HasPrefix(in.CustodianID, "cus_") {
		return custodian.Card{}, cardErr("custodian_id (cus_…), jwks and created_at are required")
	}
	created := in.CreatedAt.UTC()
	if created.Year() < 2000 || created.Year() > 9999 {
		return custodian.Card{}, cardErr("created_at is not a plausible date")
	}
	set, err := jwk.Parse(in.JWKS)
	if err != nil {
		return custodian.Card{}, cardErr("jwks is not a JWK set")
	}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		if isPrivate(k) {
			return custodian.Card{}, cardErr("jwks holds a private key: a card carries public keys only (do not share this file)")
		}
	}
	sig, enc, err := cardKeys(set)
	if err != nil {
		return custodian.Card{}, cardErr("%v", err)
	}
	// Rebuilt from the public values alone: no member of the card's keys
	// (x5u, jku, key_ops, another kid or alg) is kept.
	clean, err := publicCard(sig, enc)
	if err != nil {
		return custodian.Card{}, cardErr("%v", err)
	}
	sig, _ = clean.Key(0)
	id, err := custodianID(sig)
	if err != nil || id != in.CustodianID {
		return custodian.Card{}, cardErr("custodian_id is not the signing key's thumbprint")
	}
	jwks, err := json.Marshal(clean)
	if err != nil {
		return custodian.Card{}, cardErr("jwks does not encode")
	}
	return custodian.Card{CustodianID: id, JWKS: jwks, CreatedAt: created}, nil
}

// publicCard rebuilds a card's key set from the raw public keys: the
// Ed25519 signing key (32 bytes) and the X25519 key-agreement key, which
// must be the signing key's X25519 form (see bind.go).
func publicCard(sig, enc jwk.Key) (jwk.Set, error) {
	var sigRaw ed25519.PublicKey
	if err := sig.Raw(&sigRaw); err != nil || len(sigRaw) != ed25519.PublicKeySize {
		return nil, errors.New("the signing key is not a 32-byte Ed25519 key")
	}
	var encRaw x25519.PublicKey
	if err := enc.Raw(&encRaw); err != nil || len(encRaw) != x25519.PublicKeySize {
		return nil, errors.New("the key-agreement key is not a 32-byte X25519 key")
	}
	want, err := montgomeryOf(sigRaw)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(want, encRaw) != 1 {
		return nil, errors.New("the key-agreement key is not bound to the signing key (phc cards derive it from the signing key)")
	}
	s, err := keyOf(sigRaw, jwk.ForSignature, jwa.EdDSA.String())
	if err != nil {
		return nil, err
	}
	e, err := keyOf(encRaw, jwk.ForEncryption, jwa.ECDH_ES_A256KW.String())
	if err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(s); err != nil {
		return nil, err
	}
	if err := set.AddKey(e); err != nil {
		return nil, err
	}
	return set, nil
}

// cardKeys returns a card's two keys: exactly one Ed25519 signing key and
// one X25519 key-agreement key (their values are checked by publicCard).
func cardKeys(set jwk.Set) (sig, enc jwk.Key, err error) {
	if set.Len() != 2 {
		return nil, nil, errors.New("jwks must hold exactly two keys: a signing and a key-agreement key")
	}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		switch use := k.KeyUsage(); {
		case use == string(jwk.ForSignature) && sig == nil:
			okp, ok := k.(jwk.OKPPublicKey)
			if !ok || okp.Crv() != jwa.Ed25519 {
				return nil, nil, errors.New("the signing key must be an Ed25519 OKP key")
			}
			sig = k
		case use == string(jwk.ForEncryption) && enc == nil:
			if okp, ok := k.(jwk.OKPPublicKey); !ok || okp.Crv() != jwa.X25519 {
				return nil, nil, errors.New("the key-agreement key must be an X25519 OKP key")
			}
			enc = k
		default:
			return nil, nil, errors.New(`each key needs "use": one "sig", one "enc"`)
		}
	}
	return sig, enc, nil
}

// isPrivate reports whether k holds a private key.
func isPrivate(k jwk.Key) bool {
	switch k.(type) {
	case jwk.OKPPrivateKey, jwk.ECDSAPrivateKey, jwk.RSAPrivateKey, jwk.SymmetricKey:
		return true
	}
	return false
}
