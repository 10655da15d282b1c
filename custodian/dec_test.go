package custodian_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/dec/dectype"
)

// decVector is a vector of dec/testdata: a document and its issuer's keys.
func decVector(t *testing.T, name string) (doc dectype.RawDocument, issuer string, jwks dectype.JWKS) {
	t.Helper()
	var vec struct {
		Document string                     `json:"document"`
		Trust    map[string]json.RawMessage `json:"trust"`
	}
	raw, err := os.ReadFile("../dec/testdata/vectors/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vec); err != nil {
		t.Fatal(err)
	}
	for iss, keys := range vec.Trust {
		issuer, jwks = iss, dectype.JWKS(keys)
	}
	return dectype.RawDocument(vec.Document), issuer, jwks
}

// TestDECInputsBuiltInGo: an input built in Go, not decoded from a body,
// gets the checks its body would have had — a key set with a duplicate
// member, or not JSON; a policy out of the format, over 64 KiB or not
// UTF-8; an unrevoke naming a kid that is not UTF-8 — and what is pinned
// and added is stored as it was given, unchanged by a reload.
func TestDECInputsBuiltInGo(t *testing.T) {
	ts := newTestService(t, func(c *custodian.Config) { c.DEC = dec.Service{} })
	ctx := t.Context()
	_, issuer, jwks := decVector(t, "valid-1")

	var keys struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &keys); err != nil {
		t.Fatal(err)
	}
	twice := dectype.JWKS(`{"keys": [` + string(keys.Keys[0]) + `], "keys": [` + string(keys.Keys[1]) + `]}`)
	for name, pin := range map[string]dectype.Pin{
		"a duplicate member in the keys": {Issuer: issuer, JWKS: twice},
		"keys that are not JSON":         {Issuer: issuer, JWKS: dectype.JWKS(`{"keys": [`)},
		"no keys":                        {Issuer: issuer},
		"an issuer not UTF-8":            {Issuer: "https://\xff.example", JWKS: jwks},
		"a kid not UTF-8":                {Issuer: issuer, JWKS: jwks, Revoked: []dectype.Revocation{{Kid: "ed-\xff", At: t0}}},
	} {
		_, err := ts.PinDECIssuer(ctx, ts.owner, custodian.DECTrustInput{Pin: pin})
		wantKind(t, "PinDECIssuer, "+name, err, custodian.KindInvalid)
	}

	policy := custodian.DECPolicyInput{Policy: dectype.Policy{ID: "tutor", Issuer: issuer, ClientID: "tutor-app", MaxAge: "720h"}}
	digests := make([]string, 1000)
	for i := range digests {
		digests[i] = "sha256:" + strings.Repeat("ab", 32)
	}
	for name, edit := range map[string]func(*custodian.DECPolicyInput){
		"over 64 KiB":            func(p *custodian.DECPolicyInput) { p.ReleaseDigests = digests },
		"a method not UTF-8":     func(p *custodian.DECPolicyInput) { p.Method = "build-\xff" },
		"a max_age with no unit": func(p *custodian.DECPolicyInput) { p.MaxAge = "2592000" },
		"a bad id":               func(p *custodian.DECPolicyInput) { p.ID = "Tutor Policy" },
		"no client":              func(p *custodian.DECPolicyInput) { p.ClientID = "" },
	} {
		in := policy
		edit(&in)
		_, err := ts.AddDECPolicy(ctx, ts.owner, in)
		wantKind(t, "AddDECPolicy, "+name, err, custodian.KindInvalid)
	}

	revoked := []dectype.Revocation{{Kid: "es-1", At: t0}}
	given := custodian.DECTrustInput{Pin: dectype.Pin{Issuer: issuer, JWKS: slices.Clone(jwks), Revoked: revoked}}
	if _, err := ts.PinDECIssuer(ctx, ts.owner, given); err != nil {
		t.Fatal(err)
	}
	// What the caller does with its input afterwards changes nothing.
	given.JWKS[0], revoked[0].Kid = '[', "ed-1"
	_, err := ts.UnrevokeDECKey(ctx, ts.owner, custodian.DECUnrevokeInput{Issuer: issuer, Kid: "es-\xff"})
	wantKind(t, "UnrevokeDECKey, a kid not UTF-8", err, custodian.KindInvalid)
	_, err = ts.UnrevokeDECKey(ctx, ts.owner, custodian.DECUnrevokeInput{Issuer: issuer, Kid: "ed-1"})
	wantKind(t, "UnrevokeDECKey, a kid not revoked", err, custodian.KindNotFound)
	digest := []string{"sha256:" + strings.Repeat("cd", 32)}
	policy.ReleaseDigests = digest
	pol, err := ts.AddDECPolicy(ctx, ts.owner, policy)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pol.Policy, policy.Policy) {
		t.Fatalf("AddDECPolicy = %+v, want the policy given", pol)
	}
	policy.ReleaseDigests = slices.Clone(digest)
	digest[0] = "sha256:" + strings.Repeat("ef", 32)

	list := func() []byte {
		t.Helper()
		trust, err := ts.ListDECTrust(ctx, ts.owner)
		if err != nil {
			t.Fatal(err)
		}
		if len(trust.Issuers) != 1 || len(trust.Issuers[0].Revoked) != 1 || trust.Issuers[0].Revoked[0].Kid != "es-1" ||
			len(trust.Policies) != 1 || !reflect.DeepEqual(trust.Policies[0].Policy, policy.Policy) {
			t.Fatalf("ListDECTrust = %+v", trust)
		}
		var pinned, given bytes.Buffer
		_ = json.Compact(&pinned, trust.Issuers[0].JWKS)
		_ = json.Compact(&given, jwks)
		if pinned.String() != given.String() {
			t.Fatalf("the keys pinned are %s, not %s", pinned.Bytes(), given.Bytes())
		}
		return mustJSON(t, trust)
	}
	before := list()
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if after := list(); !bytes.Equal(after, before) {
		t.Fatalf("the trust store reloaded is\n%s\nnot\n%s", after, before)
	}
}

// TestDECPresentedThroughTheCore: a recipient's document, handed to the
// core as it came, is verified and admitted under the policy its grant
// requires — in any encoding of the wrapper — and a document about another
// client is refused.
func TestDECPresentedThroughTheCore(t *testing.T) {
	ts := newTestService(t, func(c *custodian.Config) { c.DEC = dec.Service{} })
	ctx := t.Context()
	doc, issuer, jwks := decVector(t, "valid-1")
	if _, err := ts.PinDECIssuer(ctx, ts.owner, custodian.DECTrustInput{Pin: dectype.Pin{Issuer: issuer, JWKS: jwks}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddDECPolicy(ctx, ts.owner, custodian.DECPolicyInput{Policy: dectype.Policy{ID: "tutor", Issuer: issuer, ClientID: "tutor-app"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := ts.VerifyDEC(ctx, ts.owner, custodian.DECDocumentInput{Document: doc})
	if err != nil || !rep.OK || rep.Subject == nil || rep.Subject.ClientID != "tutor-app" {
		t.Fatalf("VerifyDEC = %+v, %v", rep, err)
	}
	for _, name := range []string{"tutor-app", "coach-app"} {
		ts.mustConsumer(name)
		var g map[string]any
		if err := json.Unmarshal(ts.grantDoc(grantSpec{recipient: name, ops: []string{"read"}, keys: []string{"goals.*"}}), &g); err != nil {
			t.Fatal(err)
		}
		g["requires"] = map[string]any{"qualification": "tutor"}
		if _, err := ts.CreateGrant(ctx, ts.owner, input[custodian.GrantInput](ts, mustJSON(t, g))); err != nil {
			t.Fatal(err)
		}
	}

	var pretty bytes.Buffer
	if err := json.Indent(&pretty, doc, "", "   "); err != nil {
		t.Fatal(err)
	}
	tutor := ts.mustPrincipal("tutor-app", "*", "read")
	for _, d := range []dectype.RawDocument{doc, pretty.Bytes()} {
		out, err := ts.PresentDEC(ctx, tutor, custodian.DECDocumentInput{Document: d})
		if err != nil || len(out.Admissions) != 1 || !out.Admissions[0].Admitted() || out.Admissions[0].Policy != "tutor" ||
			out.Admissions[0].Head != rep.Head || len(out.Admissions[0].Failed) != 0 {
			t.Fatalf("PresentDEC = %+v, %v; want tutor-app admitted", out, err)
		}
	}
	coach := ts.mustPrincipal("coach-app", "*", "read")
	_, err = ts.PresentDEC(ctx, coach, custodian.DECDocumentInput{Document: doc})
	wantKind(t, "PresentDEC by another client", err, custodian.KindQualificationRequired)
}

// TestDECInputsKeepTheirWire: DECTrustInput and DECPolicyInput embed the
// dectype pin and policy they were: they encode byte for byte as those
// do, Decode reads a body into them as the pin or policy reads it (a
// max_age in seconds, the keys as they came), and still refuses an
// unknown or duplicate member at any depth; a string a caller changes to
// one that is not UTF-8 after Decode is refused, not mended.
func TestDECInputsKeepTheirWire(t *testing.T) {
	ts := newTestService(t, func(c *custodian.Config) { c.DEC = dec.Service{} })
	_, issuer, jwks := decVector(t, "valid-1")
	pin := dectype.Pin{Issuer: issuer, JWKS: jwks, Revoked: []dectype.Revocation{{Kid: "es-1", At: t0}}}
	pol := dectype.Policy{ID: "tutor", Issuer: issuer, ClientID: "tutor-app", ReleaseDigests: []string{"sha256:" + strings.Repeat("ab", 32)},
		MaxAge: "720h", RequireUnrevoked: true}
	if got, want := mustJSON(t, custodian.DECTrustInput{Pin: pin}), mustJSON(t, pin); !bytes.Equal(got, want) {
		t.Errorf("DECTrustInput encodes as\n%s\nnot as its pin\n%s", got, want)
	}
	if got, want := mustJSON(t, custodian.DECPolicyInput{Policy: pol}), mustJSON(t, pol); !bytes.Equal(got, want) {
		t.Errorf("DECPolicyInput encodes as\n%s\nnot as its policy\n%s", got, want)
	}

	body := `{"issuer": "` + issuer + `", "jwks": ` + string(jwks) + `, "revoked": [{"kid": "es-1", "at": "2026-01-01T00:00:00Z"}]}`
	var in custodian.DECTrustInput
	if err := ts.Decode("dec.trust", []byte(body), &in); err != nil {
		t.Fatalf("Decode(pin) = %v", err)
	}
	if in.Issuer != issuer || !bytes.Equal(in.JWKS, jwks) || len(in.Revoked) != 1 || in.Revoked[0].Kid != "es-1" {
		t.Fatalf("Decode(pin) = %+v", in.Pin)
	}
	var p custodian.DECPolicyInput
	if err := ts.Decode("dec.policy", []byte(`{"id": "tutor", "issuer": "x", "client_id": "y", "max_age": 2592000}`), &p); err != nil || p.MaxAge != "2592000s" {
		t.Fatalf("Decode(policy, max_age in seconds) = %+v, %v", p.Policy, err)
	}
	for name, raw := range map[string]string{
		"pin, unknown member":               `{"issuer": "x", "jwks": {}, "extra": 1}`,
		"pin, unknown member in revoked":    `{"issuer": "x", "jwks": {}, "revoked": [{"kid": "a", "at": "2026-01-01T00:00:00Z", "extra": 1}]}`,
		"pin, duplicate member":             `{"issuer": "x", "issuer": "y", "jwks": {}}`,
		"pin, duplicate member in the keys": `{"issuer": "x", "jwks": {"keys": [], "keys": []}}`,
	} {
		var in custodian.DECTrustInput
		wantKind(t, "Decode("+name+")", ts.Decode("dec.trust", []byte(raw), &in), custodian.KindInvalid)
	}
	for name, raw := range map[string]string{
		"policy, unknown member":   `{"id": "tutor", "issuer": "x", "client_id": "y", "extra": 1}`,
		"policy, duplicate member": `{"id": "tutor", "id": "other", "issuer": "x", "client_id": "y"}`,
		"policy, max_age a list":   `{"id": "tutor", "issuer": "x", "client_id": "y", "max_age": []}`,
	} {
		var in custodian.DECPolicyInput
		wantKind(t, "Decode("+name+")", ts.Decode("dec.policy", []byte(raw), &in), custodian.KindInvalid)
	}

	// Keys that are not JSON, built by hand, get the refusal of the body
	// that carries them.
	var bad custodian.DECTrustInput
	bodyErr := ts.Decode("dec.trust", []byte(`{"issuer": "x", "jwks": {"keys": [}`), &bad)
	_, handErr := ts.PinDECIssuer(t.Context(), ts.owner, custodian.DECTrustInput{Pin: dectype.Pin{Issuer: "x", JWKS: dectype.JWKS(`{"keys": [`)}})
	bk, bm, _ := refusal(t, bodyErr)
	if hk, hm, _ := refusal(t, handErr); hk != bk || hm != bm {
		t.Errorf("keys not JSON: built by hand refused with %s %q; the body with %s %q", hk, hm, bk, bm)
	}

	if _, err := ts.PinDECIssuer(t.Context(), ts.owner, in); err != nil {
		t.Fatalf("PinDECIssuer(decoded) = %v", err)
	}
	var un custodian.DECUnrevokeInput
	if err := ts.Decode("dec.unrevoke", []byte(`{"issuer": "`+issuer+`", "kid": "es-1"}`), &un); err != nil {
		t.Fatal(err)
	}
	changed := un
	changed.Kid = "es-\xff"
	_, err := ts.UnrevokeDECKey(t.Context(), ts.owner, changed)
	wantKind(t, "UnrevokeDECKey(decoded, then kid not UTF-8)", err, custodian.KindInvalid)
	if _, err := ts.UnrevokeDECKey(t.Context(), ts.owner, un); err != nil {
		t.Fatalf("UnrevokeDECKey(decoded) = %v", err)
	}
}
