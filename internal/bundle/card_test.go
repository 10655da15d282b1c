package bundle_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/x25519"

	"github.com/phc-project/phc/internal/bundle"
)

func newCard(t testing.TB) (keys, card []byte, id string) {
	t.Helper()
	var c bundle.Codec
	keys, err := c.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	cd, err := c.Card(keys, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	card, err = json.Marshal(cd)
	if err != nil {
		t.Fatal(err)
	}
	return keys, card, cd.CustodianID
}

// TestCardRoundTrip: a card made from new keys parses back to the same id,
// carries two public keys with their uses, and differs between vaults.
func TestCardRoundTrip(t *testing.T) {
	keys, card, id := newCard(t)
	if !strings.HasPrefix(id, "cus_") || len(id) != 4+43 {
		t.Fatalf("custodian_id %q: want cus_ and a base64url SHA-256 thumbprint", id)
	}
	got, err := bundle.Codec{}.ParseCard(card)
	if err != nil || got.CustodianID != id {
		t.Fatalf("ParseCard(own card) = %+v, %v", got, err)
	}
	set, err := jwk.Parse(got.JWKS)
	if err != nil || set.Len() != 2 {
		t.Fatalf("card keys: %v, %v", set, err)
	}
	uses := map[string]bool{}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		uses[k.KeyUsage()] = true
		if k.KeyID() == "" {
			t.Errorf("key %d has no kid", i)
		}
	}
	if !uses["sig"] || !uses["enc"] {
		t.Fatalf("uses = %v, want sig and enc", uses)
	}
	if strings.Contains(string(card), `"d"`) || !strings.Contains(string(keys), `"d"`) {
		t.Fatalf("the card must hold no private part, the keys must")
	}
	if _, _, other := newCard(t); other == id {
		t.Fatal("two vaults got the same custodian id")
	}
}

// TestParseCardRefuses lists what a pinned card may not be.
func TestParseCardRefuses(t *testing.T) {
	keys, card, id := newCard(t)
	var m map[string]json.RawMessage
	json.Unmarshal(card, &m)
	with := func(k string, v any) []byte {
		c := map[string]json.RawMessage{}
		for kk, vv := range m {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			raw, _ := json.Marshal(v)
			c[k] = raw
		}
		out, _ := json.Marshal(c)
		return out
	}
	privSet, _ := jwk.Parse(keys)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaJWK, _ := jwk.FromRaw(rsaKey.Public())
	rsaJWK.Set(jwk.KeyUsageKey, "enc")
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384, _ := jwk.FromRaw(ecKey.Public())
	p384.Set(jwk.KeyUsageKey, "enc")
	pubSet, _ := jwk.Parse(m["jwks"])
	sigKey, _ := pubSet.Key(0)
	if sigKey.KeyUsage() != "sig" {
		sigKey, _ = pubSet.Key(1)
	}
	set := func(ks ...jwk.Key) jwk.Set {
		s := jwk.NewSet()
		for _, k := range ks {
			s.AddKey(k)
		}
		return s
	}
	threeKeys := set(sigKey, p384, rsaJWK)
	_, otherX, _ := x25519.GenerateKey(rand.Reader)
	swapped, _ := jwk.FromRaw(otherX.Public())
	swapped.Set(jwk.KeyUsageKey, "enc")
	shortSig, _ := jwk.FromRaw(ed25519.PublicKey([]byte{1}))
	shortSig.Set(jwk.KeyUsageKey, "sig")
	var encKey jwk.Key
	for i := 0; i < pubSet.Len(); i++ {
		if k, _ := pubSet.Key(i); k.KeyUsage() == "enc" {
			encKey = k
		}
	}
	for name, raw := range map[string][]byte{
		"private keys":          with("jwks", privSet),
		"forged id":             with("custodian_id", "cus_"+strings.Repeat("A", 43)),
		"no id":                 with("custodian_id", nil),
		"no created_at":         with("created_at", nil),
		"no jwks":               with("jwks", nil),
		"unknown member":        with("grants", []string{"x"}),
		"RSA agreement key":     with("jwks", set(sigKey, rsaJWK)),
		"P-384 agreement":       with("jwks", set(sigKey, p384)),
		"three keys":            with("jwks", threeKeys),
		"one key":               with("jwks", set(sigKey)),
		"not JSON":              []byte("{"),
		"trailing data":         append(append([]byte{}, card...), []byte(" {}")...),
		"too large":             with("custodian_id", id+strings.Repeat(" ", bundle.MaxCardBytes)),
		"jwks not a set":        with("jwks", "keys"),
		"id of another key":     with("custodian_id", "cus_"+rsaJWK.KeyID()),
		"an array":              []byte(`[]`),
		"swapped agreement key": with("jwks", set(sigKey, swapped)),
		"1-byte signing key":    with("jwks", set(shortSig, encKey)),
		"created in year 0":     with("created_at", "0000-01-01T00:00:00+14:00"),
		"trailing brace":        append(append([]byte{}, card...), '}'),
		"null":                  []byte(`null`),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := (bundle.Codec{}).ParseCard(raw); !errors.Is(err, bundle.ErrCard) {
				t.Fatalf("ParseCard = %v, want ErrCard", err)
			}
		})
	}
}

// FuzzParseCard: nothing a card file holds makes ParseCard panic, and what
// it accepts parses again to the same card.
func FuzzParseCard(f *testing.F) {
	_, card, _ := newCard(f)
	f.Add(card)
	f.Add([]byte(`{"custodian_id":"cus_x","jwks":{"keys":[]},"created_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := bundle.Codec{}.ParseCard(raw)
		if err != nil {
			return
		}
		again, _ := json.Marshal(c)
		c2, err := bundle.Codec{}.ParseCard(again)
		if err != nil || c2.CustodianID != c.CustodianID {
			t.Fatalf("an accepted card does not parse again: %v", err)
		}
	})
}

// TestParseCardKeepsOnlyPublicValues: members beyond the key values (x5u,
// jku, key_ops, another alg) do not survive a pin.
func TestParseCardKeepsOnlyPublicValues(t *testing.T) {
	_, card, _ := newCard(t)
	var m map[string]any
	json.Unmarshal(card, &m)
	keys := m["jwks"].(map[string]any)["keys"].([]any)
	for _, k := range keys {
		km := k.(map[string]any)
		km["x5u"] = "https://attacker.example/x5u"
		km["jku"] = "https://attacker.example/jku"
		km["key_ops"] = []string{"deriveKey"}
	}
	raw, _ := json.Marshal(m)
	c, err := bundle.Codec{}.ParseCard(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"x5u", "jku", "key_ops", "attacker"} {
		if strings.Contains(string(c.JWKS), bad) {
			t.Fatalf("the pinned card keeps %q: %s", bad, c.JWKS)
		}
	}
}
