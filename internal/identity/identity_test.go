package identity_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

func TestNewToken(t *testing.T) {
	for _, prefix := range []string{identity.OwnerPrefix, identity.ServicePrefix} {
		t.Run(prefix, func(t *testing.T) {
			tok, err := identity.NewToken(prefix)
			if err != nil {
				t.Fatalf("NewToken(%q): %v", prefix, err)
			}
			if !strings.HasPrefix(tok, prefix) || len(tok) != len(prefix)+43 {
				t.Errorf("NewToken(%q) = %q; want %q and 43 characters", prefix, tok, prefix)
			}
			if !identity.LooksLikeToken(tok, prefix) {
				t.Errorf("LooksLikeToken(NewToken(%q), %q) = false; want true", prefix, prefix)
			}
			other, _ := identity.NewToken(prefix)
			if other == tok {
				t.Errorf("two NewToken(%q) calls returned %q", prefix, tok)
			}
		})
	}
	for _, prefix := range []string{"", "_", "ctx", "CTX_", "c-x_", "ctx__", "abcdefghijklmnopq_", "ctx_\x00"} {
		if tok, err := identity.NewToken(prefix); err == nil {
			t.Errorf("NewToken(%q) = %q, nil; want an error", prefix, tok)
		}
	}
}

func TestLooksLikeToken(t *testing.T) {
	good, err := identity.NewToken(identity.OwnerPrefix)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(good, identity.OwnerPrefix)
	tests := []struct {
		name   string
		s      string
		prefix string
		want   bool
	}{
		{"good", good, identity.OwnerPrefix, true},
		{"all dashes and underscores", "ctx_" + strings.Repeat("-_", 21) + "A", identity.OwnerPrefix, true},
		{"owner token as service", good, identity.ServicePrefix, false},
		{"service token as owner", "ctxs_" + body, identity.OwnerPrefix, false},
		{"no prefix", body, identity.OwnerPrefix, false},
		{"short", good[:len(good)-1], identity.OwnerPrefix, false},
		{"long", good + "A", identity.OwnerPrefix, false},
		{"padding", good[:len(good)-1] + "=", identity.OwnerPrefix, false},
		{"std alphabet", good[:len(good)-1] + "+", identity.OwnerPrefix, false},
		{"space", good[:len(good)-1] + " ", identity.OwnerPrefix, false},
		{"upper-case prefix", "CTX_" + body, identity.OwnerPrefix, false},
		{"empty", "", identity.OwnerPrefix, false},
		{"bad prefix argument", good, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := identity.LooksLikeToken(tt.s, tt.prefix); got != tt.want {
				t.Errorf("LooksLikeToken(%q, %q) = %v; want %v", tt.s, tt.prefix, got, tt.want)
			}
		})
	}
}

func TestHashToken(t *testing.T) {
	a, _ := identity.NewToken(identity.OwnerPrefix)
	b, _ := identity.NewToken(identity.OwnerPrefix)
	tests := []struct {
		name string
		x, y string
		want bool
	}{
		{"same token", a, a, true},
		{"different tokens", a, b, false},
		{"prefix is hashed", a, "ctxs_" + strings.TrimPrefix(a, "ctx_"), false},
		{"empty", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := identity.HashToken(tt.x) == identity.HashToken(tt.y); got != tt.want {
				t.Errorf("HashToken(%q) == HashToken(%q) is %v; want %v", tt.x, tt.y, got, tt.want)
			}
		})
	}
	// SHA-256("") is a known value.
	h := identity.HashToken("")
	if got := fmt.Sprintf("%x", h[:4]); got != "e3b0c442" {
		t.Errorf("HashToken(\"\") starts %s; want e3b0c442", got)
	}
}

func TestNewID(t *testing.T) {
	for _, prefix := range []string{"clm_", "prp_", "grt_", "con_", "tok_", "rcp_"} {
		t.Run(prefix, func(t *testing.T) {
			id, err := identity.NewID(prefix)
			if err != nil {
				t.Fatalf("NewID(%q): %v", prefix, err)
			}
			if len(id) != len(prefix)+26 || !identity.ValidID(id, prefix) {
				t.Errorf("NewID(%q) = %q; want a valid ID", prefix, id)
			}
			if other, _ := identity.NewID(prefix); other == id {
				t.Errorf("two NewID(%q) calls returned %q", prefix, id)
			}
		})
	}
	if id, err := identity.NewID("Bad"); err == nil {
		t.Errorf("NewID(%q) = %q, nil; want an error", "Bad", id)
	}
}

func TestNewOrderedID(t *testing.T) {
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	times := []time.Time{
		time.Unix(0, 0), time.Unix(0, int64(time.Millisecond)), time.Unix(1, 0),
		base.Add(-time.Millisecond), base, base, base.Add(time.Millisecond), base.Add(31 * time.Millisecond),
		base.Add(32 * time.Millisecond), base.Add(time.Hour), base.AddDate(1000, 0, 0),
	}
	var prev string
	for i, at := range times {
		id, err := identity.NewOrderedID("clm_", at)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != len("clm_")+26 || !identity.ValidID(id, "clm_") {
			t.Errorf("NewOrderedID(%v) = %q; want a valid ID", at, id)
		}
		if i > 0 && id <= prev && !at.Equal(times[i-1]) {
			t.Errorf("NewOrderedID(%v) = %q sorts before or as %q, made a millisecond or more earlier", at, id, prev)
		}
		if id == prev {
			t.Errorf("two ids made in the same millisecond are both %q", id)
		}
		prev = id
	}
	// Before 1970 is 1970: still a valid ID.
	if id, err := identity.NewOrderedID("prp_", time.Unix(-5, 0)); err != nil || !identity.ValidID(id, "prp_") {
		t.Errorf("NewOrderedID(before 1970) = %q, %v; want a valid ID", id, err)
	}
	if id, err := identity.NewOrderedID("Bad", base); err == nil {
		t.Errorf("NewOrderedID(%q) = %q, nil; want an error", "Bad", id)
	}
}

func TestValidID(t *testing.T) {
	const body = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" // 26 characters
	tests := []struct {
		name   string
		s      string
		prefix string
		want   bool
	}{
		{"good", "clm_" + body, "clm_", true},
		{"digits", "clm_" + strings.Repeat("27", 13), "clm_", true},
		{"other prefix", "prp_" + body, "clm_", false},
		{"lower case", "clm_" + strings.ToLower(body), "clm_", false},
		{"digit 0", "clm_0" + body[1:], "clm_", false},
		{"digit 8", "clm_" + body[:25] + "8", "clm_", false},
		{"short", "clm_" + body[1:], "clm_", false},
		{"long", "clm_" + body + "A", "clm_", false},
		{"padding", "clm_" + body[:25] + "=", "clm_", false},
		{"no prefix", body, "clm_", false},
		{"empty", "", "clm_", false},
		{"non-ascii", "clm_" + body[:24] + "É", "clm_", false},
		{"empty prefix argument", body, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := identity.ValidID(tt.s, tt.prefix); got != tt.want {
				t.Errorf("ValidID(%q, %q) = %v; want %v", tt.s, tt.prefix, got, tt.want)
			}
		})
	}
}

func TestHashSecret(t *testing.T) {
	secret := []byte("s3cret consumer secret")
	enc, err := identity.HashSecret(secret)
	if err != nil {
		t.Fatalf("HashSecret: %v", err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("HashSecret = %q; want the OWASP argon2id PHC prefix", enc)
	}
	if strings.Contains(enc, string(secret)) {
		t.Errorf("HashSecret = %q contains the secret", enc)
	}
	if again, _ := identity.HashSecret(secret); again == enc {
		t.Error("two HashSecret calls gave the same string; want fresh salts")
	}
	if _, err := identity.HashSecret(nil); err == nil {
		t.Error("HashSecret(nil) succeeded; want an error")
	}

	tests := []struct {
		name   string
		secret []byte
		want   bool
	}{
		{"right", secret, true},
		{"wrong", []byte("s3cret consumer secreT"), false},
		{"prefix", secret[:len(secret)-1], false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := identity.VerifySecret(enc, tt.secret)
			if err != nil || got != tt.want {
				t.Errorf("VerifySecret(%q, %q) = %v, %v; want %v, nil", enc, tt.secret, got, err, tt.want)
			}
		})
	}
}

func TestVerifySecretKnownVector(t *testing.T) {
	// Reference CLI vector (argon2id, v=19, password "password", salt
	// "somesalt", t=1, m=64, p=1, 24-byte hash), as in x/crypto's tests.
	const enc = "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$ZVrRXqxlLcWfcXCnMyv0m4Rpvh/bnCi7"
	got, err := identity.VerifySecret(enc, []byte("password"))
	if err != nil || !got {
		t.Errorf("VerifySecret(reference vector) = %v, %v; want true, nil", got, err)
	}
}

func TestVerifySecretMalformed(t *testing.T) {
	good, err := identity.HashSecret([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, "$")
	salt, hash := parts[4], parts[5]
	with := func(params string) string { return "$argon2id$v=19$" + params + "$" + salt + "$" + hash }

	bad := map[string]string{
		"empty":             "",
		"garbage":           "not a hash",
		"argon2i":           strings.Replace(good, "argon2id", "argon2i", 1),
		"argon2d":           strings.Replace(good, "argon2id", "argon2d", 1),
		"bcrypt":            "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
		"old version":       strings.Replace(good, "v=19", "v=16", 1),
		"no version":        "$argon2id$m=19456,t=2,p=1$" + salt + "$" + hash,
		"extra field":       good + "$x",
		"missing hash":      "$argon2id$v=19$m=19456,t=2,p=1$" + salt,
		"leading text":      "x" + good,
		"params reordered":  with("t=2,m=19456,p=1"),
		"params spaced":     with("m=19456, t=2,p=1"),
		"extra param":       with("m=19456,t=2,p=1,keyid=x"),
		"leading zero":      with("m=019456,t=2,p=1"),
		"negative":          with("m=19456,t=-2,p=1"),
		"plus sign":         with("m=+19456,t=2,p=1"),
		"huge memory":       with("m=4194304,t=2,p=1"),
		"overflow memory":   with("m=99999999999999999999,t=2,p=1"),
		"memory too low":    with("m=7,t=1,p=1"),
		"cost too high":     with("m=65536,t=3,p=1"),
		"zero time":         with("m=19456,t=0,p=1"),
		"many passes":       with("m=8,t=11,p=1"),
		"zero threads":      with("m=19456,t=2,p=0"),
		"many threads":      with("m=19456,t=2,p=255"),
		"empty salt":        "$argon2id$v=19$m=19456,t=2,p=1$$" + hash,
		"short salt":        "$argon2id$v=19$m=19456,t=2,p=1$AAAA$" + hash,
		"padded salt":       "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "==$" + hash,
		"url alphabet":      "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + strings.Repeat("_", len(hash)),
		"newline in hash":   "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + hash[:10] + "\n" + hash[10:],
		"short hash":        "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$AAAAAAAA",
		"non-canonical end": "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + hash[:len(hash)-1] + "B",
		"very long":         good + strings.Repeat("A", 10000),
	}
	for name, enc := range bad {
		t.Run(name, func(t *testing.T) {
			ok, err := identity.VerifySecret(enc, []byte("x"))
			if !errors.Is(err, identity.ErrMalformedHash) || ok {
				t.Fatalf("VerifySecret(%q) = %v, %v; want false, ErrMalformedHash", enc, ok, err)
			}
			if len(enc) > 0 && strings.Contains(err.Error(), enc) {
				t.Errorf("error %q contains the encoded hash", err)
			}
		})
	}
}

func FuzzVerifySecret(f *testing.F) {
	good, err := identity.HashSecret([]byte("x"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		good,
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$ZVrRXqxlLcWfcXCnMyv0m4Rpvh/bnCi7",
		"$argon2id$v=19$m=8,t=1,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=4294967295,t=4294967295,p=255$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2i$v=19$m=8,t=1,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA",
		"",
		"$$$$$",
	} {
		f.Add(s, []byte("x"))
	}
	f.Fuzz(func(t *testing.T, encoded string, secret []byte) {
		ok, err := identity.VerifySecret(encoded, secret)
		if err != nil && (ok || !errors.Is(err, identity.ErrMalformedHash)) {
			t.Fatalf("VerifySecret(%q) = %v, %v; want false with ErrMalformedHash", encoded, ok, err)
		}
	})
}

func BenchmarkVerifySecret(b *testing.B) {
	secret := []byte("a consumer secret of ordinary length")
	enc, err := identity.HashSecret(secret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := identity.VerifySecret(enc, secret); !ok || err != nil {
			b.Fatalf("VerifySecret = %v, %v", ok, err)
		}
	}
}

func TestLooksLikeTokenPrefix(t *testing.T) {
	tok, err := identity.NewToken(identity.ServicePrefix)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s    string
		want bool
	}{
		{tok, true},
		{tok[:13], true},
		{"ctxs_", true},
		{"ctxs_abc-_", true},
		{"ctx_abc", false},
		{"ctxs_ab/c", false},
		{"ctxs_ab c", false},
		{tok + "A", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := identity.LooksLikeTokenPrefix(tt.s, identity.ServicePrefix); got != tt.want {
			t.Errorf("LooksLikeTokenPrefix(%q) = %v; want %v", tt.s, got, tt.want)
		}
	}
}
