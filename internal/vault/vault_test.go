package vault_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phc-project/phc/internal/vault"
)

var testPassword = []byte("correct horse battery staple")

// mustCreate creates a vault in a fresh directory and returns the directory
// and the Secret Key text.
func mustCreate(t testing.TB) (dir, secretKey string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	sk, err := vault.Create(dir, testPassword)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return dir, sk
}

// mustUnlocked creates, opens and unlocks a vault.
func mustUnlocked(t testing.TB) *vault.Vault {
	t.Helper()
	dir, sk := mustCreate(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := v.Unlock(testPassword, sk); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	return v
}

func TestCreateOpenUnlockLock(t *testing.T) {
	dir, sk := mustCreate(t)

	if !vault.Exists(dir) {
		t.Fatalf("Exists(%q) = false after Create; want true", dir)
	}
	if _, err := vault.Create(dir, testPassword); !errors.Is(err, vault.ErrExists) {
		t.Errorf("second Create = %v; want ErrExists", err)
	}
	got, err := vault.ReadSecretKeyFile(dir)
	if err != nil {
		t.Fatalf("ReadSecretKeyFile: %v", err)
	}
	if got != sk {
		t.Errorf("ReadSecretKeyFile = %q; want the text Create returned, %q", got, sk)
	}

	v, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if !v.Locked() {
		t.Fatal("Locked() = false after Open; want true")
	}
	if err := v.Unlock(testPassword, sk); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if v.Locked() {
		t.Fatal("Locked() = true after Unlock; want false")
	}
	if err := v.Unlock(testPassword, sk); !errors.Is(err, vault.ErrAlreadyUnlocked) {
		t.Errorf("second Unlock = %v; want ErrAlreadyUnlocked", err)
	}
	ct, err := v.Seal("claims", []byte("clm_1"), []byte("hello"))
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	v.Lock()
	v.Lock() // idempotent
	if !v.Locked() {
		t.Fatal("Locked() = false after Lock; want true")
	}

	// A second Vault on the same directory opens what the first sealed.
	v2, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := v2.Unlock(testPassword, sk); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	pt, err := v2.Open("claims", []byte("clm_1"), ct)
	if err != nil || string(pt) != "hello" {
		t.Errorf("Open after reopen = %q, %v; want %q, nil", pt, err, "hello")
	}
}

func TestCreateRefusesEmptyPassword(t *testing.T) {
	dir := t.TempDir()
	for _, pw := range [][]byte{nil, {}} {
		if _, err := vault.Create(dir, pw); err == nil {
			t.Errorf("Create(%q) succeeded; want an error", pw)
		}
	}
	if vault.Exists(dir) {
		t.Error("Exists = true after refused Create; want false")
	}
}

func TestUnlockCredentials(t *testing.T) {
	dir, sk := mustCreate(t)
	_, otherSK := mustCreate(t)

	tests := []struct {
		name     string
		password []byte
		key      string
		want     error
	}{
		{"good", testPassword, sk, nil},
		{"lower case without dashes", testPassword, strings.ToLower(strings.ReplaceAll(sk, "-", "")), nil},
		{"wrong password", []byte("correct horse battery stapler"), sk, vault.ErrBadCredentials},
		{"empty password", nil, sk, vault.ErrBadCredentials},
		{"wrong secret key", testPassword, otherSK, vault.ErrBadCredentials},
		{"malformed secret key", testPassword, sk[:len(sk)-1], vault.ErrMalformedSecretKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := vault.Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			err = v.Unlock(tt.password, tt.key)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Unlock = %v; want %v", err, tt.want)
			}
			if got := v.Locked(); got != (tt.want != nil) {
				t.Errorf("Locked() = %v after Unlock error %v", got, err)
			}
			if err != nil && strings.Contains(err.Error(), string(tt.password)) && len(tt.password) > 0 {
				t.Errorf("Unlock error %q contains the password", err)
			}
		})
	}
}

func TestParseSecretKey(t *testing.T) {
	dir, sk := mustCreate(t)
	locked, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	want, err := vault.ParseSecretKey(sk)
	if err != nil {
		t.Fatalf("ParseSecretKey(%q): %v", sk, err)
	}
	if len(sk) != len("PHC1-XXXXXX-XXXXXX-XXXXXX-XXXXXX-XXXXX") || !strings.HasPrefix(sk, "PHC1-") {
		t.Errorf("Create returned %q; want the form PHC1-XXXXXX-XXXXXX-XXXXXX-XXXXXX-XXXXX", sk)
	}
	body := strings.ReplaceAll(strings.TrimPrefix(sk, "PHC1-"), "-", "")

	good := map[string]string{
		"canonical":            sk,
		"surrounding space":    " \t\n" + sk + "\r\n",
		"lower case":           strings.ToLower(sk),
		"no dashes":            strings.ReplaceAll(sk, "-", ""),
		"extra dashes":         "--" + strings.ReplaceAll(sk, "-", "--") + "-",
		"regrouped":            "PHC1-" + body[:4] + "-" + body[4:20] + "-" + body[20:],
		"mixed case no dashes": "phc1" + strings.ToLower(body[:10]) + body[10:],
	}
	for name, in := range good {
		t.Run("good/"+name, func(t *testing.T) {
			got, err := vault.ParseSecretKey(in)
			if err != nil {
				t.Fatalf("ParseSecretKey(%q) = %v; want nil", in, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseSecretKey(%q) mismatch (-want +got):\n%s", in, diff)
			}
		})
	}

	flip := func(s string, i int) string { // swap one body character for another valid one
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	bad := map[string]string{
		"empty":              "",
		"prefix only":        "PHC1-",
		"wrong prefix":       "PHC2" + sk[4:],
		"no prefix":          body,
		"one char short":     sk[:len(sk)-1],
		"one char long":      sk + "A",
		"bad alphabet 0":     "PHC1-" + "0" + body[1:],
		"bad alphabet 1":     "PHC1-" + body[:5] + "1" + body[6:],
		"inner space":        "PHC1-" + body[:6] + " " + body[6:],
		"bad checksum":       flip(sk, 6),
		"padding":            sk + "===",
		"non-ascii letter":   "PHC1-" + "ı" + body[1:],
		"inner newline":      "PHC1-" + body[:6] + "\n" + body[6:],
		"very long":          strings.Repeat(sk, 20),
		"non-canonical tail": "PHC1-" + body[:len(body)-1] + nextPadBit(body[len(body)-1]),
	}
	for name, in := range bad {
		t.Run("bad/"+name, func(t *testing.T) {
			_, err := vault.ParseSecretKey(in)
			if !errors.Is(err, vault.ErrMalformedSecretKey) {
				t.Fatalf("ParseSecretKey(%q) = %v; want ErrMalformedSecretKey", in, err)
			}
			if len(in) > 0 && strings.Contains(err.Error(), in) {
				t.Errorf("ParseSecretKey error %q contains its input", err)
			}
			if err := locked.Unlock(testPassword, in); !errors.Is(err, vault.ErrMalformedSecretKey) {
				t.Errorf("Unlock(%q) = %v; want ErrMalformedSecretKey", in, err)
			}
		})
	}
}

// nextPadBit returns c with its lowest base32 bit flipped. In the Secret Key
// body the last character's lowest bit is padding and must be zero.
func nextPadBit(c byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	i := strings.IndexByte(alphabet, c)
	return string(alphabet[i^1])
}

func TestSealOpen(t *testing.T) {
	v := mustUnlocked(t)

	values := []struct {
		name      string
		category  string
		aad       []byte
		plaintext []byte
	}{
		{"empty plaintext", "claims", []byte("clm_1/v1/value"), nil},
		{"nil aad", "claims", nil, []byte("x")},
		{"200 bytes", "claims", []byte("clm_2/v3/value"), bytes.Repeat([]byte{0xA5}, 200)},
		{"1 MiB", "blobs", []byte("b"), bytes.Repeat([]byte("phc"), 1<<20/3)},
		{"unicode category", "café/ç", []byte("a"), []byte("b")},
	}
	for _, tt := range values {
		t.Run(tt.name, func(t *testing.T) {
			ct, err := v.Seal(tt.category, tt.aad, tt.plaintext)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			if got, want := len(ct), len(tt.plaintext)+29; got != want {
				t.Errorf("len(Seal(...)) = %d; want %d", got, want)
			}
			if ct[0] != 0x01 {
				t.Errorf("Seal(...)[0] = %#x; want 0x01", ct[0])
			}
			if len(tt.plaintext) > 8 && bytes.Contains(ct, tt.plaintext[:8]) {
				t.Error("ciphertext contains the plaintext")
			}
			got, err := v.Open(tt.category, tt.aad, ct)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(got, tt.plaintext) {
				t.Errorf("Open(Seal(%q)) = %q", tt.plaintext, got)
			}
			again, err := v.Seal(tt.category, tt.aad, tt.plaintext)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			if bytes.Equal(again, ct) {
				t.Error("two Seals of one value gave the same ciphertext; want fresh nonces")
			}
		})
	}

	aad := []byte("clm_1/v1/value")
	ct, err := v.Seal("claims", aad, []byte("a sealed value"))
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	flipped := func(i int) []byte {
		c := bytes.Clone(ct)
		c[i] ^= 0x01
		return c
	}
	tampered := []struct {
		name       string
		category   string
		aad        []byte
		ciphertext []byte
	}{
		{"other aad", "claims", []byte("clm_2/v1/value"), ct},
		{"nil aad", "claims", nil, ct},
		{"other category", "personas", aad, ct},
		{"flipped version", "claims", aad, flipped(0)},
		{"flipped nonce", "claims", aad, flipped(5)},
		{"flipped body", "claims", aad, flipped(14)},
		{"flipped tag", "claims", aad, flipped(len(ct) - 1)},
		{"truncated", "claims", aad, ct[:len(ct)-1]},
		{"extended", "claims", aad, append(bytes.Clone(ct), 0)},
		{"too short", "claims", aad, ct[:28]},
		{"empty", "claims", aad, nil},
	}
	for _, tt := range tampered {
		t.Run("tampered/"+tt.name, func(t *testing.T) {
			pt, err := v.Open(tt.category, tt.aad, tt.ciphertext)
			if err != vault.ErrDecrypt {
				t.Fatalf("Open = %q, %v; want exactly ErrDecrypt", pt, err)
			}
		})
	}

	// Every single-bit flip fails.
	for i := range len(ct) * 8 {
		c := bytes.Clone(ct)
		c[i/8] ^= 1 << (i % 8)
		if _, err := v.Open("claims", aad, c); err != vault.ErrDecrypt {
			t.Fatalf("Open with bit %d flipped = %v; want ErrDecrypt", i, err)
		}
	}
}

func TestInvalidCategory(t *testing.T) {
	v := mustUnlocked(t)
	for name, category := range map[string]string{
		"empty":    "",
		"nul":      "a\x00b",
		"too long": strings.Repeat("c", 256),
		"not utf8": "\xff",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := v.Seal(category, nil, nil); err == nil {
				t.Error("Seal succeeded; want an error")
			}
			if _, err := v.Open(category, nil, make([]byte, 40)); err == nil || errors.Is(err, vault.ErrDecrypt) {
				t.Errorf("Open = %v; want an invalid-category error", err)
			}
			if _, err := v.DeriveKey(category); err == nil {
				t.Error("DeriveKey succeeded; want an error")
			}
		})
	}
}

func TestDeriveKey(t *testing.T) {
	v := mustUnlocked(t)
	k1, err := v.DeriveKey("blind-index")
	if err != nil {
		t.Fatalf("DeriveKey: %v", err)
	}
	if len(k1) != 32 {
		t.Fatalf("len(DeriveKey) = %d; want 32", len(k1))
	}
	k2, _ := v.DeriveKey("blind-index")
	if !bytes.Equal(k1, k2) {
		t.Error("DeriveKey is not deterministic")
	}
	k2[0] ^= 0xff // the caller owns its copy
	k3, _ := v.DeriveKey("blind-index")
	if !bytes.Equal(k1, k3) {
		t.Error("modifying a returned key changed the next one")
	}
	other, _ := v.DeriveKey("other")
	if bytes.Equal(k1, other) {
		t.Error("DeriveKey gave the same key for two categories")
	}
}

func TestLockedRefuses(t *testing.T) {
	dir, _ := mustCreate(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := v.Seal("claims", nil, []byte("x")); !errors.Is(err, vault.ErrLocked) {
		t.Errorf("Seal on locked vault = %v; want ErrLocked", err)
	}
	if _, err := v.Open("claims", nil, make([]byte, 40)); !errors.Is(err, vault.ErrLocked) {
		t.Errorf("Open on locked vault = %v; want ErrLocked", err)
	}
	if _, err := v.DeriveKey("claims"); !errors.Is(err, vault.ErrLocked) {
		t.Errorf("DeriveKey on locked vault = %v; want ErrLocked", err)
	}
}

func TestLockWhileInUse(t *testing.T) {
	v := mustUnlocked(t)
	ct, err := v.Seal("claims", nil, []byte("v"))
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			category := []string{"claims", "personas"}[i%2]
			for range 2000 {
				_, err := v.Seal(category, nil, []byte("value"))
				if err == nil {
					_, err = v.Open("claims", nil, ct)
				}
				if errors.Is(err, vault.ErrLocked) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	v.Lock()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Seal/Open during Lock = %v; want nil or ErrLocked", err)
	}
	if _, err := v.Seal("claims", nil, nil); !errors.Is(err, vault.ErrLocked) {
		t.Errorf("Seal after Lock = %v; want ErrLocked", err)
	}
}

func TestFilesAndModes(t *testing.T) {
	dir, sk := mustCreate(t)

	modes := []struct {
		path string
		want fs.FileMode
	}{
		{dir, fs.ModeDir | 0o700},
		{filepath.Join(dir, "vault.json"), 0o600},
		{filepath.Join(dir, "secret.key"), 0o600},
	}
	for _, tt := range modes {
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Fatalf("Stat: %v", err)
		}
		if got := fi.Mode(); got != tt.want {
			t.Errorf("mode of %s = %v; want %v", filepath.Base(tt.path), got, tt.want)
		}
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"secret.key", "vault.json"}, names); diff != "" {
		t.Errorf("files in data dir mismatch (-want +got):\n%s", diff)
	}

	keyFile, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(keyFile), sk+"\n"; got != want {
		t.Errorf("secret.key = %q; want %q", got, want)
	}

	hdr, err := os.ReadFile(filepath.Join(dir, "vault.json"))
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hdr, &h); err != nil {
		t.Fatalf("vault.json is not JSON: %v", err)
	}
	wantKDF := map[string]any{"alg": "argon2id", "time": 3.0, "memory_kib": 65536.0, "threads": 4.0}
	if diff := cmp.Diff(wantKDF, h["kdf"]); diff != "" {
		t.Errorf("vault.json kdf mismatch (-want +got):\n%s", diff)
	}
	if h["format"] != "phc-vault/1" {
		t.Errorf("vault.json format = %v; want phc-vault/1", h["format"])
	}

	skRaw, _ := vault.ParseSecretKey(sk)
	secrets := map[string][]byte{
		"password":             testPassword,
		"password hex":         []byte(hex.EncodeToString(testPassword)),
		"password base64":      []byte(base64.StdEncoding.EncodeToString(testPassword)),
		"secret key text":      []byte(strings.TrimPrefix(sk, "PHC1-")[:6]),
		"secret key hex":       []byte(hex.EncodeToString(skRaw[:])),
		"secret key base64":    []byte(base64.StdEncoding.EncodeToString(skRaw[:])[:12]),
		"secret key raw bytes": skRaw[:8],
	}
	for name, secret := range secrets {
		if bytes.Contains(hdr, secret) {
			t.Errorf("vault.json contains the %s", name)
		}
		if strings.HasPrefix(name, "password") && bytes.Contains(keyFile, secret) {
			t.Errorf("secret.key contains the %s", name)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := vault.Open(t.TempDir()); !errors.Is(err, vault.ErrNoVault) {
		t.Errorf("Open(empty dir) = %v; want ErrNoVault", err)
	}
	if vault.Exists(t.TempDir()) {
		t.Error("Exists(empty dir) = true; want false")
	}

	dir, _ := mustCreate(t)
	good, err := os.ReadFile(filepath.Join(dir, "vault.json"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(h map[string]any)) string {
		var h map[string]any
		if err := json.Unmarshal(good, &h); err != nil {
			t.Fatal(err)
		}
		f(h)
		b, _ := json.Marshal(h)
		return string(b)
	}
	corrupt := map[string]string{
		"not json":      "{",
		"empty":         "",
		"trailing data": string(good) + "{}",
		"wrong format":  edit(func(h map[string]any) { h["format"] = "phc-vault/2" }),
		"huge memory":   edit(func(h map[string]any) { h["kdf"].(map[string]any)["memory_kib"] = 1 << 30 }),
		"fewer passes":  edit(func(h map[string]any) { h["kdf"].(map[string]any)["time"] = 1 }),
		"other alg":     edit(func(h map[string]any) { h["kdf"].(map[string]any)["alg"] = "scrypt" }),
		"short salt":    edit(func(h map[string]any) { h["salt"] = "AAAA" }),
		"no check":      edit(func(h map[string]any) { delete(h, "check") }),
		"short check":   edit(func(h map[string]any) { h["check"] = "AQID" }),
	}
	for name, content := range corrupt {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "vault.json"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := vault.Open(d); !errors.Is(err, vault.ErrCorrupt) {
				t.Errorf("Open = %v; want ErrCorrupt", err)
			}
		})
	}
}

func TestReadSecretKeyFile(t *testing.T) {
	if _, err := vault.ReadSecretKeyFile(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadSecretKeyFile(empty dir) = %v; want fs.ErrNotExist", err)
	}
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "secret.key"), []byte("PHC1-not-a-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := vault.ReadSecretKeyFile(d); !errors.Is(err, vault.ErrMalformedSecretKey) {
		t.Errorf("ReadSecretKeyFile(garbage) = %v; want ErrMalformedSecretKey", err)
	}
}

func benchmarkVault(b *testing.B) *vault.Vault {
	b.Helper()
	return mustUnlocked(b)
}

func BenchmarkSeal(b *testing.B) {
	v := benchmarkVault(b)
	aad := []byte("clm_01HZX3J5K7M9P1Q3R5S7T9V1W3/v1/value")
	value := bytes.Repeat([]byte{'v'}, 200)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Seal("claims", aad, value); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	v := benchmarkVault(b)
	aad := []byte("clm_01HZX3J5K7M9P1Q3R5S7T9V1W3/v1/value")
	value := bytes.Repeat([]byte{'v'}, 200)
	ct, err := v.Seal("claims", aad, value)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Open("claims", aad, ct); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenParallel(b *testing.B) {
	v := benchmarkVault(b)
	aad := []byte("clm_01HZX3J5K7M9P1Q3R5S7T9V1W3/v1/value")
	ct, err := v.Seal("claims", aad, bytes.Repeat([]byte{'v'}, 200))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Open("claims", aad, ct); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
