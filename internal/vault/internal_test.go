package vault

import (
	"bytes"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatSecretKey(t *testing.T) {
	tests := []struct {
		name string
		key  [SecretKeySize]byte
	}{
		{"zero", [SecretKeySize]byte{}},
		{"ones", [SecretKeySize]byte{0: 0xff, 15: 0xff}},
		{"counting", [SecretKeySize]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := formatSecretKey(&tt.key)
			groups := strings.Split(text, "-")
			if len(groups) != 6 || groups[0] != "PHC1" {
				t.Fatalf("formatSecretKey = %q; want PHC1 and five groups", text)
			}
			for i, g := range groups[1:] {
				want := 6
				if i == 4 {
					want = 5
				}
				if len(g) != want {
					t.Errorf("formatSecretKey = %q: group %d has %d characters; want %d", text, i+1, len(g), want)
				}
			}
			got, err := ParseSecretKey(text)
			if err != nil || got != tt.key {
				t.Errorf("ParseSecretKey(formatSecretKey(%x)) = %x, %v; want %x, nil", tt.key, got, err, tt.key)
			}
		})
	}
}

func FuzzParseSecretKey(f *testing.F) {
	var key [SecretKeySize]byte
	rand.Read(key[:])
	good := formatSecretKey(&key)
	for _, s := range []string{
		good,
		strings.ToLower(good),
		strings.ReplaceAll(good, "-", ""),
		"  " + good + "\n",
		"PHC1-AAAAAA-AAAAAA-AAAAAA-AAAAAA-AAAAA",
		"PHC1-",
		"",
		"phc1" + strings.Repeat("-", 100),
		formatSecretKey(&[SecretKeySize]byte{}),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := ParseSecretKey(s)
		if err != nil {
			if err != ErrMalformedSecretKey {
				t.Fatalf("ParseSecretKey(%q) = %v; want ErrMalformedSecretKey", s, err)
			}
			return
		}
		canon := formatSecretKey(&key)
		again, err := ParseSecretKey(canon)
		if err != nil || again != key {
			t.Fatalf("ParseSecretKey(formatSecretKey(ParseSecretKey(%q))) = %x, %v; want %x, nil", s, again, err, key)
		}
		// The input differs from the canonical text only in what parsing
		// ignores.
		norm := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
		if want := strings.ReplaceAll(canon, "-", ""); norm != want {
			t.Fatalf("ParseSecretKey accepted %q, which normalises to %q; want %q", s, norm, want)
		}
	})
}

// TestLockZeroises checks that Lock leaves no key bytes in the vault's key
// memory and drops the cached AEADs.
func TestLockZeroises(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	sk, err := Create(dir, []byte("pw"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := v.Unlock([]byte("pw"), sk); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if _, err := v.Seal("claims", nil, []byte("x")); err != nil {
		t.Fatalf("Seal: %v", err)
	}

	mem := v.mem.b
	zero := make([]byte, len(mem))
	if bytes.Equal(mem[:keySize], zero[:keySize]) {
		t.Fatal("context key is all zero while unlocked")
	}
	if !bytes.Equal(mem[keySize:], zero[keySize:]) {
		t.Error("Unlock left data in its scratch space")
	}
	if len(v.aeads) != 1 {
		t.Errorf("len(aeads) = %d after one Seal; want 1", len(v.aeads))
	}

	v.Lock()
	if !bytes.Equal(mem, zero) {
		t.Errorf("key memory after Lock = %x; want all zero", mem)
	}
	if v.aeads != nil {
		t.Errorf("aeads after Lock = %v; want nil", v.aeads)
	}

	// A failed Unlock leaves nothing behind either.
	if err := v.Unlock([]byte("wrong"), sk); err != ErrBadCredentials {
		t.Fatalf("Unlock(wrong) = %v; want ErrBadCredentials", err)
	}
	if !bytes.Equal(mem, zero) {
		t.Errorf("key memory after failed Unlock = %x; want all zero", mem)
	}
}
