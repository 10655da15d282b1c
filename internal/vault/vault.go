package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

const (
	headerFile    = "vault.json"
	secretKeyFile = "secret.key"
	formatV1      = "phc-vault/1"
	maxHeaderSize = 64 << 10

	saltSize = 16
	keySize  = 32

	// Argon2id parameters, fixed by the format.
	kdfAlg       = "argon2id"
	kdfTime      = 3
	kdfMemoryKiB = 64 * 1024
	kdfThreads   = 4

	// HKDF labels.
	infoContextKey = "phc/v1/context-key"
	infoCheck      = "phc/v1/check"
	infoCategory   = "phc/v1/category/"
	infoDerive     = "phc/v1/derive/"

	// The check blob seals checkPlaintext under the check key, with
	// checkLabel in place of a category.
	checkPlaintext = "phc-vault/1 check"
	checkLabel     = "phc/v1/check"

	// Ciphertext layout.
	ctVersion  byte = 0x01
	nonceSize       = 12
	tagSize         = 16
	ctOverhead      = 1 + nonceSize + tagSize

	maxCategory   = 255
	checkBlobSize = ctOverhead + len(checkPlaintext)
	ikmSize       = keySize + SecretKeySize
	keyMemSize    = keySize + ikmSize // context key, then ikm scratch
)

// header is the content of vault.json.
type header struct {
	Format string    `json:"format"`
	Salt   []byte    `json:"salt"`
	KDF    kdfParams `json:"kdf"`
	Check  []byte    `json:"check"`
}

type kdfParams struct {
	Alg       string `json:"alg"`
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
}

var fixedKDF = kdfParams{Alg: kdfAlg, Time: kdfTime, MemoryKiB: kdfMemoryKiB, Threads: kdfThreads}

// Vault is a vault opened from a data directory. It starts locked. Obtain
// one with [Open]; the zero value is not usable. A Vault is safe for
// concurrent use.
type Vault struct {
	salt  []byte    // immutable after Open
	check []byte    // immutable after Open
	kdf   kdfParams // immutable after Open

	// unlockMu serialises Unlock, so that one key derivation runs at a time
	// and the scratch part of mem has one user.
	unlockMu sync.Mutex

	mu       sync.RWMutex
	unlocked bool
	// mem holds the context key in mem.b[:keySize] while unlocked; the rest
	// is scratch for Unlock. Unlock writes it only while locked, Lock zeroes
	// it only while unlocked, and both flip unlocked under mu.
	mem   *keyMem
	aeads map[string]cipher.AEAD // per category; nil while locked
}

// Create makes a new vault in dir: it creates dir if needed, sets its mode to
// 0700, generates a salt and a Secret Key, writes DIR/secret.key and then
// DIR/vault.json, and returns the Secret Key text, which the caller must show
// to the owner. Create leaves nothing unlocked: call [Open] and
// [Vault.Unlock] to use the vault. Create fails with [ErrExists] if dir already holds
// vault.json, and refuses an empty password. The password is not retained or
// modified.
func Create(dir string, password []byte) (secretKeyText string, err error) {
	if len(password) == 0 {
		return "", errors.New("vault: create: empty password")
	}
	if err := ensureDir(dir); err != nil {
		return "", err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if Exists(dir) {
		return "", ErrExists
	}

	var sk [SecretKeySize]byte
	defer clear(sk[:])
	rand.Read(sk[:])
	salt := make([]byte, saltSize)
	rand.Read(salt)

	kdf := createKDF()
	mem := newKeyMem(keyMemSize)
	defer mem.free()
	mem.lock()
	ctxKey := mem.b[:keySize]
	if err := deriveContextKey(ctxKey, mem.b[keySize:], kdf, password, sk[:], salt); err != nil {
		return "", err
	}
	checkAEAD, err := newAEAD(ctxKey, infoCheck)
	if err != nil {
		return "", err
	}
	check := seal(checkAEAD, checkLabel, nil, []byte(checkPlaintext))

	hdr, err := json.MarshalIndent(header{Format: formatV1, Salt: salt, KDF: kdf, Check: check}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("vault: create: %w", err)
	}
	text := formatSecretKey(&sk)
	// secret.key first: vault.json is the commit point, and a vault whose
	// key file was never written would be unusable.
	if err := writeFileAtomic(dir, secretKeyFile, []byte(text+"\n")); err != nil {
		return "", err
	}
	if err := writeFileAtomic(dir, headerFile, append(hdr, '\n')); err != nil {
		return "", err
	}
	return text, nil
}

// Exists reports whether dir holds a vault, that is, a regular vault.json.
func Exists(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, headerFile))
	return err == nil && fi.Mode().IsRegular()
}

// Open reads the vault header in dir and returns the vault, locked. It fails
// with [ErrNoVault] if dir has no vault.json and with [ErrCorrupt] if the
// header is malformed or names parameters other than the fixed ones (or,
// in a test binary that called [UseTestKDF], the test cost).
func Open(dir string) (*Vault, error) {
	f, err := os.Open(filepath.Join(dir, headerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vault: open %s: %w", dir, ErrNoVault)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: open: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHeaderSize+1))
	if err != nil {
		return nil, fmt.Errorf("vault: open: %w", err)
	}
	if len(data) > maxHeaderSize {
		return nil, fmt.Errorf("vault: open %s: header too large: %w", dir, ErrCorrupt)
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("vault: open %s: %w", dir, ErrCorrupt)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("vault: open %s: trailing data: %w", dir, ErrCorrupt)
	}
	switch {
	case h.Format != formatV1:
		return nil, fmt.Errorf("vault: open %s: unknown format: %w", dir, ErrCorrupt)
	case !acceptKDF(h.KDF):
		return nil, fmt.Errorf("vault: open %s: unsupported kdf parameters: %w", dir, ErrCorrupt)
	case len(h.Salt) != saltSize:
		return nil, fmt.Errorf("vault: open %s: bad salt: %w", dir, ErrCorrupt)
	case len(h.Check) != checkBlobSize || h.Check[0] != ctVersion:
		return nil, fmt.Errorf("vault: open %s: bad check: %w", dir, ErrCorrupt)
	}
	return &Vault{salt: h.Salt, check: h.Check, kdf: h.KDF, mem: newKeyMem(keyMemSize)}, nil
}

// Unlock derives the vault keys from password and the Secret Key text and
// verifies them against the header. It returns [ErrMalformedSecretKey] if
// secretKeyText does not parse (without running the key derivation),
// [ErrBadCredentials] if the password or Secret Key is wrong, and
// [ErrAlreadyUnlocked] if the vault is unlocked. Unlock takes about as long
// as one Argon2id run (a few hundred milliseconds) and does not block Seal
// and Open meanwhile; they return [ErrLocked] until it succeeds. The password
// is not retained or modified.
func (v *Vault) Unlock(password []byte, secretKeyText string) error {
	sk, err := ParseSecretKey(secretKeyText)
	defer clear(sk[:])
	if err != nil {
		return err
	}

	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	if !v.Locked() {
		return ErrAlreadyUnlocked
	}

	v.mem.lock()
	ctxKey := v.mem.b[:keySize]
	if err := deriveContextKey(ctxKey, v.mem.b[keySize:], v.kdf, password, sk[:], v.salt); err != nil {
		v.mem.wipe()
		return err
	}
	checkAEAD, err := newAEAD(ctxKey, infoCheck)
	if err != nil {
		v.mem.wipe()
		return err
	}
	if pt, err := open(checkAEAD, checkLabel, nil, v.check); err != nil || string(pt) != checkPlaintext {
		v.mem.wipe()
		return ErrBadCredentials
	}

	v.mu.Lock()
	v.unlocked = true
	v.aeads = make(map[string]cipher.AEAD)
	v.mu.Unlock()
	return nil
}

// Lock forgets the vault keys: it zeroes and unpins the context key and drops
// every cached category AEAD. It waits for Seal, Open and DeriveKey calls in
// flight; later calls return [ErrLocked]. Lock is idempotent. It does not
// cancel an Unlock in progress, which may still succeed after Lock returns.
func (v *Vault) Lock() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.unlocked {
		return
	}
	v.unlocked = false
	clear(v.aeads)
	v.aeads = nil
	v.mem.wipe()
}

// Locked reports whether the vault is locked.
func (v *Vault) Locked() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return !v.unlocked
}

// Seal encrypts plaintext for category, binding category and aad, and
// returns a new slice in the format of the package doc (29 bytes longer than
// plaintext). The same category and aad are needed to open it. category must
// be 1 to 255 bytes of valid UTF-8 without NUL; it is a name from a small
// fixed set, not a per-record value. Seal returns [ErrLocked] while the vault
// is locked. It does not retain or modify aad or plaintext.
func (v *Vault) Seal(category string, aad, plaintext []byte) ([]byte, error) {
	if err := checkCategory(category); err != nil {
		return nil, err
	}
	a, exclusive, err := v.acquire(category)
	if err != nil {
		return nil, err
	}
	defer v.release(exclusive)
	return seal(a, category, aad, plaintext), nil
}

// Open authenticates and decrypts a ciphertext made by [Vault.Seal] with the
// same category and aad, and returns the plaintext in a new slice. It returns
// [ErrLocked] while the vault is locked and [ErrDecrypt] for any ciphertext
// that does not authenticate, with no further detail. It does not retain or
// modify aad or ciphertext.
func (v *Vault) Open(category string, aad, ciphertext []byte) ([]byte, error) {
	if err := checkCategory(category); err != nil {
		return nil, err
	}
	a, exclusive, err := v.acquire(category)
	if err != nil {
		return nil, err
	}
	defer v.release(exclusive)
	return open(a, category, aad, ciphertext)
}

// DeriveKey returns a new 32-byte key for category, for uses other than
// Seal and Open (for example an HMAC blind index). It is derived under its
// own label, so it differs from the key Seal uses for the same category. The
// caller owns the slice and should clear it when done. category follows the
// rules of [Vault.Seal]. DeriveKey returns [ErrLocked] while the vault is
// locked.
func (v *Vault) DeriveKey(category string) ([]byte, error) {
	if err := checkCategory(category); err != nil {
		return nil, err
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.unlocked {
		return nil, ErrLocked
	}
	return hkdf.Key(sha256.New, v.mem.b[:keySize], nil, infoDerive+category, keySize)
}

// acquire returns the AEAD for category with mu held: shared on a cache hit,
// exclusive on a miss. The caller passes exclusive to release when done.
func (v *Vault) acquire(category string) (a cipher.AEAD, exclusive bool, err error) {
	v.mu.RLock()
	if !v.unlocked {
		v.mu.RUnlock()
		return nil, false, ErrLocked
	}
	if a := v.aeads[category]; a != nil {
		return a, false, nil
	}
	v.mu.RUnlock()

	v.mu.Lock()
	if !v.unlocked {
		v.mu.Unlock()
		return nil, false, ErrLocked
	}
	if a := v.aeads[category]; a != nil {
		return a, true, nil
	}
	a, err = newAEAD(v.mem.b[:keySize], infoCategory+category)
	if err != nil {
		v.mu.Unlock()
		return nil, false, err
	}
	v.aeads[category] = a
	return a, true, nil
}

func (v *Vault) release(exclusive bool) {
	if exclusive {
		v.mu.Unlock()
	} else {
		v.mu.RUnlock()
	}
}

// deriveContextKey writes the context key for password, sk and salt under
// the Argon2id cost p to dst, using scratch (at least ikmSize bytes) for the HKDF input and zeroing it
// afterwards.
func deriveContextKey(dst, scratch []byte, p kdfParams, password, sk, salt []byte) error {
	ikm := scratch[:ikmSize]
	defer clear(ikm)
	master := argon2.IDKey(password, salt, p.Time, p.MemoryKiB, p.Threads, keySize)
	copy(ikm, master)
	clear(master)
	copy(ikm[keySize:], sk)
	k, err := hkdf.Key(sha256.New, ikm, salt, infoContextKey, keySize)
	if err != nil {
		return fmt.Errorf("vault: derive: %w", err)
	}
	copy(dst, k)
	clear(k)
	return nil
}

// newAEAD returns AES-256-GCM under HKDF-SHA256(key, nil, info).
func newAEAD(key []byte, info string) (cipher.AEAD, error) {
	sub, err := hkdf.Key(sha256.New, key, nil, info, keySize)
	if err != nil {
		return nil, fmt.Errorf("vault: derive: %w", err)
	}
	defer clear(sub)
	block, err := aes.NewCipher(sub)
	if err != nil {
		return nil, fmt.Errorf("vault: derive: %w", err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault: derive: %w", err)
	}
	return a, nil
}

// additionalData returns version ‖ category ‖ 0x00 ‖ aad.
func additionalData(category string, aad []byte) []byte {
	ad := make([]byte, 0, 1+len(category)+1+len(aad))
	ad = append(ad, ctVersion)
	ad = append(ad, category...)
	ad = append(ad, 0)
	return append(ad, aad...)
}

func seal(a cipher.AEAD, category string, aad, plaintext []byte) []byte {
	out := make([]byte, 1+nonceSize, ctOverhead+len(plaintext))
	out[0] = ctVersion
	nonce := out[1 : 1+nonceSize]
	rand.Read(nonce)
	return a.Seal(out, nonce, plaintext, additionalData(category, aad))
}

func open(a cipher.AEAD, category string, aad, ciphertext []byte) ([]byte, error) {
	if len(ciphertext) < ctOverhead || ciphertext[0] != ctVersion {
		return nil, ErrDecrypt
	}
	nonce := ciphertext[1 : 1+nonceSize]
	pt, err := a.Open(nil, nonce, ciphertext[1+nonceSize:], additionalData(category, aad))
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

func checkCategory(category string) error {
	if len(category) == 0 || len(category) > maxCategory ||
		strings.IndexByte(category, 0) >= 0 || !utf8.ValidString(category) {
		return errors.New("vault: invalid category")
	}
	return nil
}
