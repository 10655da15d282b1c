package custodian_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/valueref"
)

// TestResolveHoldsHandBuiltRequests: a resolve request built in Go gets
// exactly the refusal the same request gets as a body read from the
// wire (repeated keys, keys in the client's range, too many keys), and a
// refused body is answered only once K is known, as the protocol orders
// the checks.
func TestResolveHoldsHandBuiltRequests(t *testing.T) {
	ts := newTestService(t)
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read")
	if _, _, err := ts.PutSettings(t.Context(), ts.owner, input[custodian.SettingsInput](ts, `{"local_vaults": true}`)); err != nil {
		t.Fatal(err)
	}
	k := bytes.Repeat([]byte{7}, 32)
	kid := valueref.Kid(k)
	if err := ts.SeeVaultKey(t.Context(), app, kid); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ts.SetVaultKey(t.Context(), ts.owner, kid, custodian.VaultKeyActive); err != nil {
		t.Fatal(err)
	}
	bearer := base64.RawURLEncoding.EncodeToString(k)
	now := time.Now().UTC().Truncate(time.Second)
	ref := func(key string) valueref.Ref { return valueref.Ref{Key: key, SeenAt: now} }
	many := make([]valueref.Ref, valueref.MaxRefs+1)
	for i := range many {
		many[i] = ref(fmt.Sprintf("EMAIL_%d", i+1))
	}
	for _, tc := range []struct {
		name string
		req  valueref.Request
		want string
	}{
		{"repeated key", valueref.Request{Now: now, Refs: []valueref.Ref{ref("EMAIL_1"), ref("EMAIL_1")}}, "bad_request"},
		{"client-range key", valueref.Request{Now: now, Refs: []valueref.Ref{ref("passport_1")}}, "bad_request"},
		{"too many keys", valueref.Request{Now: now, Refs: many}, "too_many_refs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ts.Resolve(t.Context(), custodian.ResolveInput{Bearer: bearer, Body: valueref.Body{Request: tc.req}})
			if got := custodian.Describe(err).Constraint; got != tc.want {
				t.Fatalf("Resolve(hand-built) = %v (%s); want %s", err, got, tc.want)
			}
			raw := []byte(fmt.Sprintf(`{"now": %q, "refs": [`, now.Format(time.RFC3339)))
			for i, r := range tc.req.Refs {
				if i > 0 {
					raw = append(raw, ',')
				}
				raw = fmt.Appendf(raw, `{"key": %q, "seen_at": %q}`, r.Key, r.SeenAt.Format(time.RFC3339))
			}
			raw = append(raw, "]}"...)
			_, err = ts.Resolve(t.Context(), custodian.ResolveInput{Bearer: bearer, Body: valueref.ReadBody(raw)})
			if got := custodian.Describe(err).Constraint; got != tc.want {
				t.Fatalf("Resolve(%s) = %v (%s); want %s", raw, err, got, tc.want)
			}
		})
	}
	other := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32))
	_, err := ts.Resolve(t.Context(), custodian.ResolveInput{Bearer: other, Body: valueref.ReadBody([]byte("now=1"))})
	if got := custodian.Describe(err).Constraint; got != "unknown_key" {
		t.Fatalf("Resolve(unknown K, bad body) = %v (%s); want unknown_key first", err, got)
	}
}
