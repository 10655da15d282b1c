package custodian_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/oidcrecipient"
)

// TestHandBuiltInputsAsStrictAsBodies: an input built in Go gets the
// answer its JSON (or form) body gets through the adapters' decoding.
func TestHandBuiltInputsAsStrictAsBodies(t *testing.T) {
	ts := newTestService(t)
	ids := make([]string, 10_001)
	for i := range ids {
		ids[i] = fmt.Sprintf("qrn_%026d", i)
	}
	in := custodian.AdoptInput{IDs: ids}
	var decoded custodian.AdoptInput
	bodyErr := ts.Decode("quarantine.adopt", mustJSON(t, in), &decoded)
	_, _, err := ts.AdoptQuarantined(t.Context(), ts.owner, "", in)
	if want, got := custodian.Describe(bodyErr).Constraint, custodian.Describe(err).Constraint; bodyErr == nil || got != want {
		t.Fatalf("AdoptQuarantined(10,001 ids) = %v (%s); the body gets %v (%s)", err, got, bodyErr, want)
	}

	ok := custodian.ExchangeInput{GrantType: oidcrecipient.GrantTypeTokenExchange, SubjectTokenType: oidcrecipient.TokenTypeIDToken, SubjectToken: "x.y.z"}
	for _, tc := range []struct {
		name string
		edit func(*custodian.ExchangeInput)
		want string
	}{
		{"grant type", func(in *custodian.ExchangeInput) { in.GrantType = "password" }, "invalid_request"},
		{"subject token type", func(in *custodian.ExchangeInput) { in.SubjectTokenType = "jwt" }, "invalid_request"},
		{"too large", func(in *custodian.ExchangeInput) { in.Audience = strings.Repeat("a", oidcrecipient.MaxForm) }, "too_large"},
		{"no token", func(in *custodian.ExchangeInput) { in.SubjectToken = "" }, "unauthenticated"},
		{"mode", func(in *custodian.ExchangeInput) { in.Mode = "admin" }, "invalid_request"},
	} {
		in := ok
		tc.edit(&in)
		_, err := ts.ExchangeToken(t.Context(), in)
		if got := custodian.Describe(err).Constraint; got != tc.want {
			t.Errorf("%s: ExchangeToken = %v (%s); want %s", tc.name, err, got, tc.want)
		}
	}
}
