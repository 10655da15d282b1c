// Package bundle is the wire encoding of custodian-to-custodian migration
// (docs/formats/bundle.md) on github.com/lestrrat-go/jwx/v2: a custodian's
// keys and its public card, and the signed, encrypted bundle.
//
// # Keys and cards
//
// [Codec.NewKeys] makes a vault's long-term keys: an Ed25519 signing key
// (use "sig", alg EdDSA) and an X25519 key-agreement key (use "enc", alg
// ECDH-ES+A256KW), returned as a private JWK set for the vault to store
// encrypted. [Codec.Card] derives the public card from them:
//
//	{"custodian_id": "cus_…", "jwks": {"keys": [sig, enc]}, "created_at": "…"}
//
// where custodian_id is "cus_" and the base64url (unpadded) RFC 7638
// SHA-256 thumbprint of the signing key, and each key's kid is its own
// thumbprint. [Codec.ParseCard] checks a card received from elsewhere: at
// most [MaxCardBytes], exactly those two public keys (a private part is
// refused, so that a card pasted by mistake with its secrets is never
// stored), and a custodian_id that is the signing key's.
//
// # Bundles
//
// [Codec.Seal] signs a payload (compact JWS, EdDSA, kid the signing key's
// thumbprint, so the source's custodian_id is "cus_" and the kid) and
// encrypts the signed payload to the recipient card's key-agreement key
// (compact JWE, ECDH-ES+A256KW with A256GCM). [Codec.Open] decrypts with
// this custodian's key — a bundle made for another custodian does not
// decrypt — asks the caller for the pinned card of the custodian the
// signature names, and verifies with it. Every refusal wraps [ErrBundle]
// and says what to do (pin the card, export again to this card). What the
// payload holds (the manifest and records of docs/formats/bundle.md) is the core's.
package bundle
