package clientvault

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/dunglas/httpsfv"

	"github.com/phc-project/phc/custodian"
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

// FuzzResolveBody: no body makes the resolve endpoint's parser panic; one
// it accepts has at most 100 keys, each once and of the form this
// custodian mints, and any refusal is one of the protocol's codes.
func FuzzResolveBody(f *testing.F) {
	for _, seed := range []string{
		// The protocol's example, as written.
		`{"now": "2026-10-16T09:00:00Z",
 "refs": [{"key": "EMAIL_1", "seen_at": "2026-10-16T08:58:12Z"}]}`,
		`{"now": "2026-10-16T09:00:00Z", "refs": []}`,
		`{"now": "2026-10-16T09:00:00Z", "refs": [{"key": "email_1", "seen_at": "2026-10-16T08:58:12Z"}]}`,
		`{"now": "2026-10-16T09:00:00Z", "refs": [{"key": "EMAIL_1", "seen_at": "2026-10-16T08:58:12Z"}, {"key": "EMAIL_1", "seen_at": "2026-10-16T08:58:12Z"}]}`,
		`{"now": "yesterday", "refs": []}`, `{"refs": []}`, `{"now": "2026-10-16T09:00:00Z"}`, `[]`, `null`, ``, `{`,
		`{"now": "2026-10-16T09:00:00Z", "refs": [{"key": 1}]}`,
		`{"now": "2026-10-16T09:00:00Z", "refs": [null]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		keys, err := custodian.ParseResolveBody(body)
		if err != nil {
			switch w := custodian.Describe(err); w.Constraint {
			case "bad_request", "too_many_refs":
			default:
				t.Fatalf("ParseResolveBody(%q) = %v (%s); want bad_request or too_many_refs", body, err, w.Constraint)
			}
			return
		}
		if len(keys) > custodian.MaxResolveRefs {
			t.Fatalf("%d keys accepted", len(keys))
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if !custodian.ValidRefKey(k) || seen[k] {
				t.Fatalf("accepted key %q (repeated: %v)", k, seen[k])
			}
			seen[k] = true
		}
	})
}
