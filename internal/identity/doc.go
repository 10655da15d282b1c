// Package identity makes and checks the custodian's bearer tokens, stored
// secret hashes and record identifiers.
//
// # Tokens
//
// [NewToken] returns an opaque bearer token: a prefix ([OwnerPrefix] for an
// owner session, [ServicePrefix] for a service) followed by 256 random bits in
// unpadded base64url. Store only [HashToken] of a token. [LooksLikeToken] is
// a cheap syntax check to run before a lookup.
//
// # Secrets
//
// [HashSecret] hashes a consumer secret with Argon2id (OWASP parameters
// m=19456 KiB, t=2, p=1, 16-byte salt, 32-byte hash) and encodes it in the PHC
// string format:
//
//	$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>
//
// where salt and hash are unpadded standard base64. [VerifySecret] checks a
// secret against such a string. It accepts other parameters within fixed
// bounds, so stored hashes survive a parameter change, and rejects anything
// beyond them, so a hostile stored string cannot make it spend unbounded
// time or memory.
//
// # Identifiers
//
// [NewID] returns a prefix (such as "clm_") followed by 128 random bits in 26
// characters of unpadded upper-case RFC 4648 base32; [ValidID] checks the
// syntax.
//
// A prefix is 1 to 16 lower-case ASCII letters or digits followed by "_".
//
// All randomness comes from crypto/rand.
package identity
