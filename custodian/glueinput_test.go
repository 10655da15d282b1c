package custodian_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
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
	_, _, err := counts(ts.AdoptQuarantined(t.Context(), ts.owner, "", in))
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

// TestFoldedInputsAnswerRefusalsInOrder: for the quarantine, trust and
// DEC inputs, a body Decode refused is answered by the method given it,
// after the method's check of the caller, as the core answered a raw body
// before the inputs were typed: a recipient's token is refused as a
// recipient's (session_required), whatever the body; the owner gets
// Decode's refusal, under the method's op.
func TestFoldedInputsAnswerRefusalsInOrder(t *testing.T) {
	ts := newTestService(t, func(c *custodian.Config) { c.DEC = dec.Service{} })
	ctx := t.Context()
	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", custodian.ModeRead)
	const malformed = `{"x": `
	for _, tc := range []struct {
		op   string
		call func(p custodian.Principal) (decodeErr, err error)
	}{
		{"quarantine.adopt", func(p custodian.Principal) (error, error) {
			var in custodian.AdoptInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, _, err := counts(ts.AdoptQuarantined(ctx, p, "", in))
			return derr, err
		}},
		{"quarantine.unblock", func(p custodian.Principal) (error, error) {
			var in custodian.UnblockInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, err := ts.UnblockQuarantined(ctx, p, "qrn_AAAAAAAAAAAAAAAAAAAAAAAAAA", in)
			return derr, err
		}},
		{"trust.add", func(p custodian.Principal) (error, error) {
			var in custodian.TrustInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, err := ts.AddTrust(ctx, p, in)
			return derr, err
		}},
		{"dec.trust", func(p custodian.Principal) (error, error) {
			var in custodian.DECTrustInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, err := ts.PinDECIssuer(ctx, p, in)
			return derr, err
		}},
		{"dec.policy", func(p custodian.Principal) (error, error) {
			var in custodian.DECPolicyInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, err := ts.AddDECPolicy(ctx, p, in)
			return derr, err
		}},
		{"dec.unrevoke", func(p custodian.Principal) (error, error) {
			var in custodian.DECUnrevokeInput
			derr := ts.Decode("test", []byte(malformed), &in)
			_, err := ts.UnrevokeDECKey(ctx, p, in)
			return derr, err
		}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			derr, err := tc.call(app)
			wantKind(t, "Decode(malformed)", derr, custodian.KindInvalid)
			wantKind(t, "a recipient's call with a malformed body", err, custodian.KindSessionRequired)
			_, err = tc.call(ts.owner)
			wantKind(t, "the owner's call with a malformed body", err, custodian.KindInvalid)
			if e, ok := errors.AsType[*custodian.Error](err); !ok || e.Op != tc.op || e.Message() != derr.(*custodian.Error).Message() {
				t.Errorf("the owner's call = %v; want Decode's refusal under op %s", err, tc.op)
			}
		})
	}
}

// TestAdoptBodyMayBeBlank: the single-record adopt takes an empty body,
// or one of white space only, as the zero input, as it always did; a
// body that is neither must be a JSON object.
func TestAdoptBodyMayBeBlank(t *testing.T) {
	ts := newTestService(t)
	for _, raw := range []string{"", " \r\n\t"} {
		var in custodian.AdoptInput
		if err := ts.Decode("quarantine.adopt", []byte(raw), &in); err != nil {
			t.Errorf("Decode(adopt, %q) = %v; want the zero input", raw, err)
		}
	}
	var in custodian.AdoptInput
	err := ts.Decode("quarantine.adopt", []byte(" x "), &in)
	wantKind(t, "Decode(adopt, \" x \")", err, custodian.KindInvalid)
	var rej custodian.RejectInput // optional, but not blank: unchanged
	err = ts.Decode("reject", []byte(" "), &rej)
	wantKind(t, "Decode(reject, \" \")", err, custodian.KindInvalid)
}
