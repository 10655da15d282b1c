package bundle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwe"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/phc-project/phc/custodian"
)

// ErrBundle is wrapped by every error of Open about the bundle itself (not
// about this custodian's own keys). Its text says what to do, never what
// the bundle holds.
var ErrBundle = errors.New("not a bundle this custodian can accept")

func bundleErr(msg string) error { return fmt.Errorf("%w: %s", ErrBundle, msg) }

// privateKeys returns the signing and key-agreement keys of a private set
// made by NewKeys.
func privateKeys(keys []byte) (sig, enc jwk.Key, err error) {
	set, err := jwk.Parse(keys)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle: the vault's keys: %w", err)
	}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		switch k.KeyUsage() {
		case string(jwk.ForSignature):
			sig = k
		case string(jwk.ForEncryption):
			enc = k
		}
	}
	if sig == nil || enc == nil || !isPrivate(sig) || !isPrivate(enc) {
		return nil, nil, errors.New("bundle: the vault's keys lack a private signing or key-agreement key")
	}
	return sig, enc, nil
}

// Seal signs payload (compact JWS, EdDSA, kid the signing key's thumbprint)
// with the signing key of keys, and encrypts that to the key-agreement key
// of the recipient's card (compact JWE, ECDH-ES+A256KW, A256GCM, kid the
// recipient's custodian_id).
func (Codec) Seal(keys []byte, to custodian.Card, payload []byte) ([]byte, error) {
	sig, _, err := privateKeys(keys)
	if err != nil {
		return nil, err
	}
	set, err := jwk.Parse(to.JWKS)
	if err != nil {
		return nil, fmt.Errorf("bundle: the recipient's card: %w", err)
	}
	_, enc, err := cardKeys(set)
	if err != nil {
		return nil, fmt.Errorf("bundle: the recipient's card: %w", err)
	}
	// jwx names the key in the header: its kid, the signing key's
	// thumbprint, which is the source's custodian_id after "cus_".
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.ContentTypeKey, "phc-bundle+json"); err != nil {
		return nil, err
	}
	signed, err := jws.Sign(payload, jws.WithKey(jwa.EdDSA, sig, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return nil, fmt.Errorf("bundle: sign: %w", err)
	}
	ehdr := jwe.NewHeaders()
	if err := ehdr.Set(jwe.KeyIDKey, to.CustodianID); err != nil {
		return nil, err
	}
	if err := ehdr.Set(jwe.ContentTypeKey, "JWS"); err != nil {
		return nil, err
	}
	out, err := jwe.Encrypt(signed,
		jwe.WithKey(jwa.ECDH_ES_A256KW, enc),
		jwe.WithContentEncryption(jwa.A256GCM),
		jwe.WithProtectedHeaders(ehdr),
		jwe.WithCompact())
	if err != nil {
		return nil, fmt.Errorf("bundle: encrypt: %w", err)
	}
	return out, nil
}

// Open decrypts a bundle with the key-agreement key of keys and verifies
// its signature with the signing key of the card signer returns for the
// custodian_id it names; it returns that id and the signed payload.
func (Codec) Open(keys []byte, bundle []byte, signer func(custodianID string) (custodian.Card, bool)) (string, []byte, error) {
	_, enc, err := privateKeys(keys)
	if err != nil {
		return "", nil, err
	}
	signed, err := jwe.Decrypt(bundle, jwe.WithKey(jwa.ECDH_ES_A256KW, enc))
	if err != nil {
		return "", nil, bundleErr("it does not decrypt with this custodian's key: it was made for another custodian (export it again to this custodian's card) or damaged")
	}
	msg, err := jws.Parse(signed)
	if err != nil || len(msg.Signatures()) != 1 {
		return "", nil, bundleErr("its content is not one signed payload")
	}
	kid := msg.Signatures()[0].ProtectedHeaders().KeyID()
	if kid == "" || strings.ContainsAny(kid, "./ ") || len(kid) > 64 {
		return "", nil, bundleErr("its signature names no signing key")
	}
	source := "cus_" + kid
	card, ok := signer(source)
	if !ok {
		return "", nil, bundleErr("it is signed by a custodian not pinned here: pin its card first (phc trust custodian CARD.json)")
	}
	set, err := jwk.Parse(card.JWKS)
	if err != nil {
		return "", nil, fmt.Errorf("bundle: the pinned card of %s: %w", card.CustodianID, err)
	}
	sig, _, err := cardKeys(set)
	if err != nil {
		return "", nil, fmt.Errorf("bundle: the pinned card of %s: %w", card.CustodianID, err)
	}
	payload, err := jws.Verify(signed, jws.WithKey(jwa.EdDSA, sig))
	if err != nil {
		return "", nil, bundleErr("its signature does not verify with the pinned card of the custodian it names: damaged or forged")
	}
	return source, payload, nil
}
