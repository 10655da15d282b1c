package custodian_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// Import takes its typed input: one decoded as its body, or built by hand,
// restores the same archive; a body that does not decode is answered after
// the caller's check (an app gets the owner's refusal, not the body's);
// a hand-built one is held to the body's checks.
func TestImportInput(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	ts.mustClaim("work.role", "engineer")
	archive, err := ts.Export(ctx, ts.owner)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"archive": json.RawMessage(archive), "mode": "merge", "password": testPassword, "secret_key": ts.secretKey})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.Import(ctx, ts.owner, input[custodian.ImportInput](ts, body))
	if err != nil || got.Skipped != 1 || got.Imported != 0 {
		t.Fatalf("Import(decoded body) = %+v, %v; want the one claim skipped", got, err)
	}
	hand := custodian.ImportInput{Archive: archive, Mode: "merge", Password: testPassword, SecretKey: ts.secretKey}
	if got, err := ts.Import(ctx, ts.owner, hand); err != nil || got.Skipped != 1 {
		t.Fatalf("Import(hand-built input) = %+v, %v; want the one claim skipped", got, err)
	}

	ts.mustConsumer("app")
	app := ts.mustPrincipal("app", "*", "read")
	bad := input[custodian.ImportInput](ts, `{"archive":{},"mode":"merge","password":"x","secret_key":"y","extra":1}`)
	_, err = ts.Import(ctx, app, bad)
	wantKind(t, "an app's Import with a body that does not decode", err, custodian.KindSessionRequired)
	_, err = ts.Import(ctx, ts.owner, bad)
	wantKind(t, "the owner's Import with a body that does not decode", err, custodian.KindInvalid)
	if e, ok := errors.AsType[*custodian.Error](err); !ok || !strings.Contains(e.Public, "not acceptable JSON") {
		t.Errorf("the owner's Import with a body that does not decode = %v; want the decoder's refusal", err)
	}

	for name, in := range map[string]custodian.ImportInput{
		"archive not JSON": {Archive: json.RawMessage(`{"a":`), Mode: "merge", Password: testPassword, SecretKey: ts.secretKey},
		"mode unknown":     {Archive: archive, Mode: "overwrite", Password: testPassword, SecretKey: ts.secretKey},
	} {
		_, err := ts.Import(ctx, ts.owner, in)
		wantKind(t, "hand-built, "+name, err, custodian.KindInvalid)
	}
}

// An import with a long archive (checked by its digest, not its encoding)
// passes as accepted, and is checked again once changed: a deeper archive
// than the import limits allow is the decoder's refusal.
func TestImportInputLongChanged(t *testing.T) {
	ts := newTestService(t)
	ctx := t.Context()
	pad := strings.Repeat("x", 100<<10)
	body := `{"archive":{"pad":"` + pad + `"},"mode":"merge","password":"` + testPassword + `","secret_key":"` + ts.secretKey + `"}`
	in := input[custodian.ImportInput](ts, body)
	_, err := ts.Import(ctx, ts.owner, in)
	if e, ok := errors.AsType[*custodian.Error](err); !ok || strings.Contains(e.Public, "not acceptable JSON") {
		t.Fatalf("Import(long, as decoded) = %v; want the archive refused, not the body", err)
	}
	in.Archive = json.RawMessage(`{"pad":"` + pad + `","a":[[[[[[[[[[1]]]]]]]]]]}`)
	_, err = ts.Import(ctx, ts.owner, in)
	if e, ok := errors.AsType[*custodian.Error](err); !ok || !strings.Contains(e.Public, "not acceptable JSON") {
		t.Errorf("Import(long, changed to too deep) = %v; want the decoder's refusal", err)
	}
}
