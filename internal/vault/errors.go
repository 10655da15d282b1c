package vault

import "errors"

// Errors returned by this package. Callers compare with [errors.Is].
var (
	// ErrExists is returned by [Create] when the directory already holds a
	// vault.
	ErrExists = errors.New("vault: a vault already exists")

	// ErrNoVault is returned by [Open] when the directory holds no vault.
	ErrNoVault = errors.New("vault: no vault")

	// ErrCorrupt is returned by [Open] when vault.json is present but is not
	// a well-formed "phc-vault/1" header with the fixed parameters.
	ErrCorrupt = errors.New("vault: malformed or unsupported vault header")

	// ErrLocked is returned by [Vault.Seal], [Vault.Open] and
	// [Vault.DeriveKey] while the vault is locked.
	ErrLocked = errors.New("vault: locked")

	// ErrBadCredentials is returned by [Vault.Unlock] when the password or
	// the (well-formed) Secret Key is wrong. It deliberately does not say
	// which.
	ErrBadCredentials = errors.New("vault: wrong password or Secret Key")

	// ErrMalformedSecretKey is returned when Secret Key text is not in the
	// Secret Key format or its checksum does not match.
	ErrMalformedSecretKey = errors.New("vault: malformed Secret Key")

	// ErrAlreadyUnlocked is returned by [Vault.Unlock] on an unlocked vault.
	ErrAlreadyUnlocked = errors.New("vault: already unlocked")

	// ErrDecrypt is returned by [Vault.Open] when a ciphertext fails to
	// authenticate: it was tampered with, truncated, or sealed under another
	// key, category or aad. It never wraps a cause.
	ErrDecrypt = errors.New("vault: decryption failed")
)
