package clientvault

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/dunglas/httpsfv"
)

// specKid is a kid as the protocol's example writes it: standard base64
// of SHA-256(K), with padding.
var specKid = Kid(bytes.Repeat([]byte{7}, 32))

// FuzzClientVaultHeader: no header makes ParseHeader panic, and one it
// accepts names a kid of 32 bytes that the header it would write again
// carries unchanged.
func FuzzClientVaultHeader(f *testing.F) {
	for _, seed := range []string{
		"v=1, kid=:" + specKid + ":", // the protocol's form
		"v=1,kid=:" + specKid + ":",
		"kid=:" + specKid + ":, v=1",
		"v=1, kid=:" + specKid + ":, ext=?1",
		"v=2, kid=:" + specKid + ":",
		"v=1, kid=:AAAA:",
		"v=1, kid=\"" + specKid + "\"",
		"v=1;x=1, kid=:" + specKid + ":;p",
		"v=(1 2), kid=:" + specKid + ":",
		"", ",", "v", "v=1, kid=:", "v=1, kid=::", "v=1, v=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		kid, err := ParseHeader([]string{h})
		if err != nil {
			return
		}
		raw, derr := base64.StdEncoding.DecodeString(kid)
		if derr != nil || len(raw) != 32 {
			t.Fatalf("ParseHeader(%q) = %q, not 32 bytes in base64", h, kid)
		}
		d := httpsfv.NewDictionary()
		d.Add("v", httpsfv.NewItem(int64(1)))
		d.Add("kid", httpsfv.NewItem(raw))
		again, merr := httpsfv.Marshal(d)
		if merr != nil {
			t.Fatal(merr)
		}
		if k2, err := ParseHeader([]string{again}); err != nil || k2 != kid {
			t.Fatalf("re-encoded %q parses to %q, %v; want %q", again, k2, err, kid)
		}
	})
}
