package custodian_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
)

// refusal is what a caller learns from a refused input: the kind, the
// public message and the schema's violations.
func refusal(t *testing.T, err error) (custodian.Kind, string, string) {
	t.Helper()
	e, ok := errors.AsType[*custodian.Error](err)
	if !ok {
		t.Fatalf("error = %v (%T); want a *custodian.Error", err, err)
	}
	vs, _ := json.Marshal(e.Violations)
	return e.Kind, e.Message(), string(vs)
}

// TestHandBuiltInputIsChecked gives each method an input built by hand
// that breaks what the body's schema or the strict decoder enforces, and
// the same input as a raw body through Service.Decode: both are refused,
// with the same error. A Go caller skips no check the wire has.
func TestHandBuiltInputIsChecked(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	pr := ts.mustPropose(ts.owner, proposal(t, "a.pending", 1))
	claim := ts.mustClaim("a.claim", 1)
	grant := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	dup := json.RawMessage(`{"x": 1, "x": 2}`)

	tests := []struct {
		name string
		call func(raw []byte, hand bool) error
		in   any    // the hand-built input; raw is its encoding,
		body string // or this body, where it says what the input means
	}{
		{"Propose: key outside the grammar", func(raw []byte, hand bool) error {
			in := custodian.ProposalInput{Key: "Not A Key", Value: json.RawMessage(`1`), Kind: "fact", Assertion: "reported"}
			if !hand {
				in = input[custodian.ProposalInput](ts, raw)
			}
			_, err := ts.Propose(ctx, ts.owner, in)
			return err
		}, custodian.ProposalInput{Key: "Not A Key", Value: json.RawMessage(`1`), Kind: "fact", Assertion: "reported"}, ""},
		{"Propose: missing kind and assertion", func(raw []byte, hand bool) error {
			in := custodian.ProposalInput{Key: "a.b", Value: json.RawMessage(`1`)}
			if !hand {
				in = input[custodian.ProposalInput](ts, raw)
			}
			_, err := ts.Propose(ctx, ts.owner, in)
			return err
		}, custodian.ProposalInput{Key: "a.b", Value: json.RawMessage(`1`)}, ""},
		{"Propose: a value with a duplicate member", func(raw []byte, hand bool) error {
			in := custodian.ProposalInput{Key: "a.b", Value: dup, Kind: "fact", Assertion: "reported"}
			if !hand {
				in = input[custodian.ProposalInput](ts, raw)
			}
			_, err := ts.Propose(ctx, ts.owner, in)
			return err
		}, custodian.ProposalInput{Key: "a.b", Value: dup, Kind: "fact", Assertion: "reported"}, ""},
		{"Correct: unknown tier", func(raw []byte, hand bool) error {
			in := custodian.CorrectionInput{Sensitivity: "secret"}
			if !hand {
				in = input[custodian.CorrectionInput](ts, raw)
			}
			_, err := ts.Correct(ctx, ts.owner, claim.Claim.ID, in)
			return err
		}, custodian.CorrectionInput{Sensitivity: "secret"}, ""},
		{"CreateGrant: no operations", func(raw []byte, hand bool) error {
			in := custodian.GrantInput{Recipient: custodian.Recipient{Kind: "consumer", ID: "app"}, Purpose: "assist", Operations: []string{}, Selectors: custodian.Selectors{Keys: []string{"*"}}, ExpiresAt: future}
			if !hand {
				in = input[custodian.GrantInput](ts, raw)
			}
			_, err := ts.CreateGrant(ctx, ts.owner, in)
			return err
		}, custodian.GrantInput{Recipient: custodian.Recipient{Kind: "consumer", ID: "app"}, Purpose: "assist", Operations: []string{}, Selectors: custodian.Selectors{Keys: []string{"*"}}, ExpiresAt: future}, ""},
		{"CreatePersona: id outside the grammar", func(raw []byte, hand bool) error {
			in := custodian.PersonaInput{ID: "Not An Id", Name: "x"}
			if !hand {
				in = input[custodian.PersonaInput](ts, raw)
			}
			_, _, err := ts.CreatePersona(ctx, ts.owner, in)
			return err
		}, custodian.PersonaInput{ID: "Not An Id", Name: "x"}, ""},
		{"Confirm: an edited value with a duplicate member", func(raw []byte, hand bool) error {
			in := custodian.ConfirmInput{Personas: []string{}, Edits: &custodian.Edits{Value: dup}}
			if !hand {
				in = input[custodian.ConfirmInput](ts, raw)
			}
			_, err := ts.Confirm(ctx, ts.owner, pr.ProposalID, in)
			return err
		}, custodian.ConfirmInput{Personas: []string{}, Edits: &custodian.Edits{Value: dup}}, ""},
		{"NarrowGrant: operations given empty (cleared, which widens)", func(raw []byte, hand bool) error {
			in := custodian.GrantTerms{Operations: []string{}}
			if !hand {
				in = input[custodian.GrantTerms](ts, raw)
			}
			_, err := ts.NarrowGrant(ctx, ts.owner, grant.ID, in)
			return err
		}, custodian.GrantTerms{Operations: []string{}}, `{"operations": []}`},
		{"PutField: a value with a duplicate member", func(raw []byte, hand bool) error {
			in := custodian.FieldInput{Value: dup}
			if !hand {
				in = input[custodian.FieldInput](ts, raw)
			}
			_, _, err := ts.PutField(ctx, ts.owner, "a.field", in)
			return err
		}, custodian.FieldInput{Value: dup}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if tt.body != "" {
				raw = []byte(tt.body)
			}
			rawErr := tt.call(raw, false)
			handErr := tt.call(nil, true)
			if rawErr == nil || handErr == nil {
				t.Fatalf("raw body: %v; hand-built input: %v; want both refused", rawErr, handErr)
			}
			rk, rm, rv := refusal(t, rawErr)
			hk, hm, hv := refusal(t, handErr)
			if rk != hk || rm != hm || rv != hv {
				t.Errorf("hand-built input refused with %s %q %s; the raw body %s with %s %q %s", hk, hm, hv, raw, rk, rm, rv)
			}
		})
	}
}

// TestDecodedInputChangedIsChecked decodes a valid body, changes the input
// afterwards, and gives it to its method: the change is checked as a
// hand-built input is, so an input Decode accepted is no pass for what it
// holds later.
func TestDecodedInputChangedIsChecked(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	var in custodian.ProposalInput
	if err := ts.Decode("propose", proposal(t, "a.b", 1), &in); err != nil {
		t.Fatalf("Decode(valid proposal) = %v", err)
	}
	changed := in
	changed.Key = "Not A Key"
	_, err := ts.Propose(ctx, ts.owner, changed)
	wantKind(t, "Propose(decoded, then key changed)", err, custodian.KindSchema)

	changed = in
	changed.Value = json.RawMessage(`{"x": 1, "x": 2}`)
	_, err = ts.Propose(ctx, ts.owner, changed)
	wantKind(t, "Propose(decoded, then value changed)", err, custodian.KindInvalid)

	var terms custodian.GrantTerms
	if err := ts.Decode("grant.narrow", []byte(`{"operations": ["read"]}`), &terms); err != nil {
		t.Fatalf("Decode(valid terms) = %v", err)
	}
	terms.Operations = []string{"read", string([]byte{0xff})}
	g := ts.mustGrant(grantSpec{recipient: "app", ops: []string{"read"}, keys: []string{"*"}})
	_, err = ts.NarrowGrant(ctx, ts.owner, g.ID, terms)
	wantKind(t, "NarrowGrant(decoded, then an operation changed)", err, custodian.KindInvalid)

	// Unchanged, it passes as it is.
	out, err := ts.Propose(ctx, ts.owner, in)
	if err != nil {
		t.Fatalf("Propose(decoded) = %v", err)
	}
	if out.ProposalID == "" {
		t.Fatalf("Propose(decoded) = %+v; want a proposal", out)
	}
}

// TestHandBuiltInputIsDecodedAsItsBody gives Propose a valid input built
// by hand: it is filed exactly as the same document sent as a body.
func TestHandBuiltInputIsDecodedAsItsBody(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	valid := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
	hand := custodian.ProposalInput{
		Key: "a.hand", Value: json.RawMessage(` { "n" : 1 } `), Kind: "fact", Assertion: "reported",
		ValidFrom: &valid, Note: "by hand",
	}
	raw, err := json.Marshal(hand)
	if err != nil {
		t.Fatal(err)
	}
	body := input[custodian.ProposalInput](ts, raw)
	body.Key = "a.body"
	for _, in := range []custodian.ProposalInput{hand, body} {
		if _, err := ts.Propose(ctx, ts.owner, in); err != nil {
			t.Fatalf("Propose(%s) = %v", in.Key, err)
		}
	}
	items, err := ts.Review(ctx, ts.owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("Review has %d items; want 2", len(items))
	}
	a, b := items[0].Proposal, items[1].Proposal
	a.ID, b.ID, a.Key, b.Key, a.Revision, b.Revision = "", "", "", "", 0, 0
	a.ProposedAt, b.ProposedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("filed from a hand-built input:\n%+v\nfrom the same body:\n%+v", a, b)
	}
}

// TestDecodeRefusalAnsweredInOrder gives Propose an input Decode refused,
// from a consumer whose token may not write: the method answers its own
// refusal of the caller first, as it did when it decoded the body itself,
// and the owner gets Decode's error.
func TestDecodeRefusalAnsweredInOrder(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustConsumer("app")
	reader := ts.mustPrincipal("app", "*", custodian.ModeRead)
	var in custodian.ProposalInput
	decodeErr := ts.Decode("propose", []byte(`{"key": `), &in)
	wantKind(t, "Decode(malformed)", decodeErr, custodian.KindInvalid)

	_, err := ts.Propose(ctx, reader, in)
	wantKind(t, "Propose(read-only token, malformed body)", err, custodian.KindModeDenied)
	_, err = ts.Propose(ctx, ts.owner, in)
	wantKind(t, "Propose(owner, malformed body)", err, custodian.KindInvalid)
	if e, ok := errors.AsType[*custodian.Error](err); !ok || e.Op != "propose" || e.Message() != decodeErr.(*custodian.Error).Message() {
		t.Errorf("Propose(owner, malformed body) = %v; want Decode's refusal under the method's op", err)
	}
}
