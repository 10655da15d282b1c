package vault

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Archives: a vault's owner exports its data as an archive sealed under a
// key derived from the vault keys. Opening one takes the exporting vault's
// password and Secret Key (the archive carries that vault's salt), so an
// archive can be imported into any vault, with any password, by someone
// who holds both.

const (
	archiveFormat = "phc-archive/1"
	archiveLabel  = "phc/v1/archive"
	infoArchive   = "phc/v1/archive-key"
)

type archiveFile struct {
	Format string `json:"format"`
	Salt   []byte `json:"salt"`
	// KDF is the exporting vault's Argon2id cost when it is not the fixed
	// one (only a test vault's is not); absent means the fixed cost.
	KDF    *kdfParams `json:"kdf,omitempty"`
	Sealed []byte     `json:"sealed"`
}

// SealArchive seals plaintext into an archive under this vault's keys. It
// returns [ErrLocked] while the vault is locked.
func (v *Vault) SealArchive(plaintext []byte) ([]byte, error) {
	v.mu.RLock()
	if !v.unlocked {
		v.mu.RUnlock()
		return nil, ErrLocked
	}
	a, err := newAEAD(v.mem.b[:keySize], infoArchive)
	v.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	f := archiveFile{Format: archiveFormat, Salt: v.salt, Sealed: seal(a, archiveLabel, nil, plaintext)}
	if v.kdf != fixedKDF {
		kdf := v.kdf
		f.KDF = &kdf
	}
	return json.Marshal(f)
}

// OpenArchive opens an archive made by [Vault.SealArchive] of the vault
// whose password and Secret Key are given. It fails with
// [ErrMalformedSecretKey] for a Secret Key not in the format, with
// [ErrBadCredentials] when the password or Secret Key is not the exporting
// vault's (or the archive was altered), and with [ErrCorrupt] for an
// archive that is not one. It runs one Argon2id derivation.
func OpenArchive(archive, password []byte, secretKeyText string) ([]byte, error) {
	var f archiveFile
	if err := json.Unmarshal(archive, &f); err != nil || f.Format != archiveFormat || len(f.Salt) != saltSize || len(f.Sealed) < ctOverhead {
		return nil, fmt.Errorf("%w: not a phc archive", ErrCorrupt)
	}
	kdf := fixedKDF
	if f.KDF != nil {
		if !acceptKDF(*f.KDF) {
			return nil, fmt.Errorf("%w: unsupported kdf parameters", ErrCorrupt)
		}
		kdf = *f.KDF
	}
	sk, err := ParseSecretKey(secretKeyText)
	defer clear(sk[:])
	if err != nil {
		return nil, err
	}
	mem := newKeyMem(keyMemSize)
	mem.lock()
	defer mem.free()
	ctxKey := mem.b[:keySize]
	if err := deriveContextKey(ctxKey, mem.b[keySize:], kdf, password, sk[:], f.Salt); err != nil {
		return nil, err
	}
	a, err := newAEAD(ctxKey, infoArchive)
	if err != nil {
		return nil, err
	}
	pt, err := open(a, archiveLabel, nil, f.Sealed)
	if errors.Is(err, ErrDecrypt) {
		return nil, ErrBadCredentials
	}
	return pt, err
}

// OpenArchive is [OpenArchive] as a method, so that a *Vault serves as an
// archiver wherever one is expected.
func (v *Vault) OpenArchive(archive, password []byte, secretKeyText string) ([]byte, error) {
	return OpenArchive(archive, password, secretKeyText)
}

// OwnArchive reports whether archive was sealed by this vault: whether it
// opens under this vault's own key (its salt alone proves nothing — every
// archive shows it). It returns false while the vault is locked.
func (v *Vault) OwnArchive(archive []byte) bool {
	var f archiveFile
	if json.Unmarshal(archive, &f) != nil || f.Format != archiveFormat || len(f.Sealed) < ctOverhead {
		return false
	}
	v.mu.RLock()
	if !v.unlocked {
		v.mu.RUnlock()
		return false
	}
	a, err := newAEAD(v.mem.b[:keySize], infoArchive)
	v.mu.RUnlock()
	if err != nil {
		return false
	}
	plain, err := open(a, archiveLabel, nil, f.Sealed)
	clear(plain)
	return err == nil
}
