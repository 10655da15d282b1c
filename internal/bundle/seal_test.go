package bundle_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwe"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/bundle"
)

type party struct {
	keys []byte
	card custodian.Card
}

func newParty(t testing.TB) party {
	t.Helper()
	var c bundle.Codec
	keys, err := c.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Card(keys, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return party{keys, card}
}

func pinned(cards ...custodian.Card) func(string) (custodian.Card, bool) {
	return func(id string) (custodian.Card, bool) {
		for _, c := range cards {
			if c.CustodianID == id {
				return c, true
			}
		}
		return custodian.Card{}, false
	}
}

// TestSealOpen: a bundle A seals to B opens at B, with A pinned, to A's id
// and the payload; every other recipient, signer or damage is refused with
// ErrBundle.
func TestSealOpen(t *testing.T) {
	a, b, c := newParty(t), newParty(t), newParty(t)
	payload := []byte(`{"manifest":{"bundle_version":"0.1"},"records":[]}`)
	sealed, err := bundle.Codec{}.Seal(a.keys, b.card, payload)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("bundle_version")) {
		t.Fatal("the bundle shows its payload in clear")
	}
	src, got, err := bundle.Codec{}.Open(b.keys, sealed, pinned(a.card))
	if err != nil || src != a.card.CustodianID || !bytes.Equal(got, payload) {
		t.Fatalf("Open = %q, %s, %v", src, got, err)
	}

	// The inner signed payload, signed by a but with a damaged signature,
	// encrypted to b.
	inner, err := jwe.Decrypt(sealed, jwe.WithKey(jwa.ECDH_ES_A256KW, privateEnc(t, b.keys)))
	if err != nil {
		t.Fatal(err)
	}
	badSig := append([]byte{}, inner...)
	// Another base64url letter in the signature (not its last, whose low
	// bits may be padding): it still parses, and no longer verifies.
	if badSig[len(badSig)-5] == 'A' {
		badSig[len(badSig)-5] = 'B'
	} else {
		badSig[len(badSig)-5] = 'A'
	}
	reencrypt := func(signed []byte) []byte {
		set, _ := jwk.Parse(b.card.JWKS)
		var enc jwk.Key
		for i := 0; i < set.Len(); i++ {
			if k, _ := set.Key(i); k.KeyUsage() == "enc" {
				enc = k
			}
		}
		out, err := jwe.Encrypt(signed, jwe.WithKey(jwa.ECDH_ES_A256KW, enc), jwe.WithContentEncryption(jwa.A256GCM), jwe.WithCompact())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	flipped := append([]byte{}, sealed...)
	flipped[len(flipped)/2] ^= 1
	toC, _ := bundle.Codec{}.Seal(a.keys, c.card, payload)
	for name, tc := range map[string]struct {
		bundle []byte
		signer func(string) (custodian.Card, bool)
		why    string
	}{
		"made for another custodian": {toC, pinned(a.card), "another custodian"},
		"signer not pinned":          {sealed, pinned(c.card), "not pinned"},
		"a flipped byte":             {flipped, pinned(a.card), "another custodian"},
		"a damaged signature":        {reencrypt(badSig), pinned(a.card), "does not verify"},
		"unsigned content":           {reencrypt(payload), pinned(a.card), "not one signed payload"},
		"the id pinned to another key": {sealed, func(string) (custodian.Card, bool) {
			cc := c.card
			cc.CustodianID = a.card.CustodianID
			return cc, true
		}, "does not verify"},
		"empty":    {nil, pinned(a.card), "another custodian"},
		"not JOSE": {[]byte("{}"), pinned(a.card), "another custodian"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := bundle.Codec{}.Open(b.keys, tc.bundle, tc.signer)
			if !errors.Is(err, bundle.ErrBundle) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Open = %v, want ErrBundle saying %q", err, tc.why)
			}
		})
	}
}

func privateEnc(t *testing.T, keys []byte) jwk.Key {
	set, err := jwk.Parse(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < set.Len(); i++ {
		if k, _ := set.Key(i); k.KeyUsage() == "enc" {
			return k
		}
	}
	t.Fatal("no enc key")
	return nil
}

// FuzzBundle: nothing in a bundle's bytes makes Open panic, and only a
// bundle sealed to this custodian by a pinned one opens.
func FuzzBundle(f *testing.F) {
	a, b := newParty(f), newParty(f)
	sealed, err := bundle.Codec{}.Seal(a.keys, b.card, []byte(`{"records":[]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Add([]byte("a.b.c.d.e"))
	f.Add([]byte(`{"protected":"","ciphertext":""}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		src, payload, err := bundle.Codec{}.Open(b.keys, raw, pinned(a.card))
		if err == nil && (src != a.card.CustodianID || !json.Valid(payload)) {
			t.Fatalf("Open accepted a bundle as from %q with payload %q", src, payload)
		}
	})
}
