package valueref_test

import (
	"testing"

	"github.com/phc-project/phc/internal/valueref"
)

// FuzzResolveBody: no body makes the resolve body's parser panic; one
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
		req, err := valueref.ParseRequest(body)
		if err != nil {
			switch e, _ := err.(*valueref.Error); {
			case e != nil && (e.Code == valueref.CodeBadRequest || e.Code == valueref.CodeTooManyRefs):
			default:
				t.Fatalf("ParseRequest(%q) = %v; want bad_request or too_many_refs", body, err)
			}
			return
		}
		if err := req.Check(); err != nil {
			t.Fatalf("ParseRequest(%q) accepted a request Check refuses: %v", body, err)
		}
		keys := req.Keys()
		if len(keys) > valueref.MaxRefs {
			t.Fatalf("%d keys accepted", len(keys))
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if !valueref.ValidKey(k) || seen[k] {
				t.Fatalf("accepted key %q (repeated: %v)", k, seen[k])
			}
			seen[k] = true
		}
	})
}
