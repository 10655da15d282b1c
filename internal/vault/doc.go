// Package vault holds the custodian's key hierarchy: it turns the owner's
// password and 128-bit Secret Key into a context key, derives one subkey per
// category from it, and seals and opens values with AES-256-GCM.
//
// # Use
//
// [Create] makes a new vault in a data directory and returns the Secret Key
// text, which the caller shows to the owner once (the emergency kit). [Open]
// reads an existing vault and returns it locked; [Vault.Unlock] derives the
// keys from the password and Secret Key, and [Vault.Lock] zeroises them.
// While unlocked, [Vault.Seal] and [Vault.Open] encrypt and decrypt values for
// a category, and [Vault.DeriveKey] hands out a separate 32-byte key for other
// purposes such as an HMAC blind index. Call [HardenProcess] once at daemon
// start to disable core dumps.
//
// # Files
//
// A vault lives in a data directory DIR (mode 0700) as two files, each mode
// 0600 and written atomically (temporary file, fsync, rename, fsync of DIR):
//
//   - DIR/secret.key: the Secret Key text followed by a newline.
//   - DIR/vault.json: the header, holding the format name "phc-vault/1", a
//     random 16-byte salt, the Argon2id parameters, and "check", a known
//     plaintext sealed under the check key. Neither the password nor any key
//     is stored in it.
//
// The header's Argon2id parameters are fixed by the format (t=3, m=64 MiB,
// p=4); a header naming any others is rejected with [ErrCorrupt], so a
// tampered header cannot make Unlock spend unbounded time or memory. The
// header carries no Secret Key fingerprint: a wrong password and a wrong
// Secret Key must look the same ([ErrBadCredentials]).
//
// # Secret Key text
//
// The Secret Key is written "PHC1-" followed by the RFC 4648 base32 encoding
// (upper case, no padding) of the 16 key bytes and a 2-byte checksum (the
// first two bytes of their SHA-256), split by "-" into groups of six:
//
//	PHC1-XXXXXX-XXXXXX-XXXXXX-XXXXXX-XXXXX
//
// [ParseSecretKey] accepts surrounding white space, lower case and missing
// or extra dashes, and nothing else.
//
// # Key hierarchy
//
//	master      = Argon2id(password, salt, t=3, m=64 MiB, p=4, 32 bytes)
//	context key = HKDF-SHA256(ikm = master ‖ secret key, salt, "phc/v1/context-key")
//	check key   = HKDF-SHA256(context key, nil, "phc/v1/check")
//	category    = HKDF-SHA256(context key, nil, "phc/v1/category/" + category)
//	derived     = HKDF-SHA256(context key, nil, "phc/v1/derive/" + category)
//
// All keys are 32 bytes. Keys handed out by [Vault.DeriveKey] use their own
// label, so they never equal the key that [Vault.Seal] uses for the same
// category name.
//
// # Ciphertext format
//
// A sealed value is
//
//	0x01 ‖ nonce (12 random bytes) ‖ AES-256-GCM ciphertext and 16-byte tag
//
// and the GCM additional data is
//
//	0x01 ‖ category ‖ 0x00 ‖ aad
//
// so a ciphertext cannot be opened under another category or another aad.
// The caller chooses aad to bind a value to its place (for a record: its id,
// version and field). Every failure to open, whatever its cause, is
// [ErrDecrypt].
//
// # Concurrency
//
// A [Vault] is safe for concurrent use. The AEAD for each category is built
// once per unlock and cached, so Seal and Open run no key derivation on the
// hot path. Lock waits for Seal and Open calls in flight; calls that start
// after it return [ErrLocked].
//
// # Caveats
//
//   - The context key lives in a memory page of its own, outside the Go heap,
//     mlocked where the system allows, excluded from core dumps on Linux, and
//     zeroed by Lock. The AES key schedules inside the cached AEADs are on the
//     Go heap and cannot be overwritten: Lock drops every reference to them,
//     and they remain in memory until the garbage collector reuses it.
//     Short-lived copies made inside Argon2id, HKDF and HMAC are likewise out
//     of reach. Disable core dumps with [HardenProcess].
//   - The Secret Key text is a Go string, which cannot be zeroed.
//   - Nonces are random, so one category key must not seal more than 2^32
//     values. Categories are meant to be a small fixed set of names (one AEAD
//     is cached per name until Lock), not one per record: bind records through
//     aad instead.
//
// # Compatibility
//
// The file formats, labels and ciphertext layout above are persistent: a
// change to any of them needs a new format name and version byte.
package vault
