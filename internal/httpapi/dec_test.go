package httpapi

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
)

// TestDECRoutesOverHTTP holds the DEC routes' bodies and answers to their
// wire form, over a real socket: the JSON a client sends (a pin with
// revocations, a policy whose max_age is a number of seconds, an unrevoke)
// is accepted as it is, strictly (an unknown or duplicate member is a 400,
// a policy out of the format a 400), and the answers — the pin, the
// policy, the trust store listed, a verification report whatever the
// document holds — have the members they have always had.
func TestDECRoutesOverHTTP(t *testing.T) {
	e := newExchangeEnv(t, func(c *custodian.Config) { c.DEC = dec.Service{} })
	var vec struct {
		Document string                     `json:"document"`
		Trust    map[string]json.RawMessage `json:"trust"`
	}
	raw, err := os.ReadFile("../../dec/testdata/vectors/valid-1.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vec); err != nil {
		t.Fatal(err)
	}
	const issuer = "https://releases.example/tutor"
	jwks := string(vec.Trust[issuer])
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		return e.do("POST", path, e.owner, "application/json", []byte(body))
	}
	want := func(what string, gotStatus, wantStatus int, got map[string]any) {
		t.Helper()
		if gotStatus != wantStatus {
			t.Fatalf("%s: %d %v, want %d", what, gotStatus, got, wantStatus)
		}
	}

	// Pinning: the body's shape, strictly.
	for name, body := range map[string]string{
		"unknown member":           `{"issuer": "` + issuer + `", "jwks": ` + jwks + `, "extra": 1}`,
		"duplicate member":         `{"issuer": "` + issuer + `", "issuer": "x", "jwks": ` + jwks + `}`,
		"duplicate member in jwks": `{"issuer": "` + issuer + `", "jwks": {"keys": [], "keys": []}}`,
		"revocation of no kid":     `{"issuer": "` + issuer + `", "jwks": ` + jwks + `, "revoked": [{"at": "2026-01-01T00:00:00Z"}]}`,
		"no keys":                  `{"issuer": "` + issuer + `", "jwks": {"keys": []}}`,
		"no issuer":                `{"jwks": ` + jwks + `}`,
		"not an object":            `[]`,
	} {
		code, out := post("/phc/v1/dec/trust", body)
		want("trust, "+name, code, 400, out)
	}
	code, pin := post("/phc/v1/dec/trust", `{"issuer": "`+issuer+`", "jwks": `+jwks+`, "revoked": [{"kid": "es-1", "at": "2026-01-01T00:00:00Z"}]}`)
	want("trust", code, 201, pin)
	if pin["issuer"] != issuer || pin["revision"] == nil || pin["pinned_at"] == nil ||
		!reflect.DeepEqual(pin["revoked"], []any{map[string]any{"kid": "es-1", "at": "2026-01-01T00:00:00Z"}}) {
		t.Fatalf("pin = %v", pin)
	}
	var keys any
	_ = json.Unmarshal([]byte(jwks), &keys)
	if !reflect.DeepEqual(pin["jwks"], keys) {
		t.Fatalf("pin's jwks = %v, want the set pinned %v", pin["jwks"], keys)
	}

	// Policies: the body is the policy.
	for name, body := range map[string]string{
		"unknown member":   `{"id": "tutor", "issuer": "` + issuer + `", "client_id": "tutor-app", "extra": 1}`,
		"bad id":           `{"id": "Tutor Policy", "issuer": "` + issuer + `", "client_id": "tutor-app"}`,
		"bad digest":       `{"id": "tutor", "issuer": "` + issuer + `", "client_id": "tutor-app", "release_digests": ["sha256:00"]}`,
		"bad max_age":      `{"id": "tutor", "issuer": "` + issuer + `", "client_id": "tutor-app", "max_age": "soon"}`,
		"negative max_age": `{"id": "tutor", "issuer": "` + issuer + `", "client_id": "tutor-app", "max_age": -5}`,
	} {
		code, out := post("/phc/v1/dec/policies", body)
		want("policy, "+name, code, 400, out)
	}
	code, pol := post("/phc/v1/dec/policies", `{"id": "tutor", "issuer": "`+issuer+`", "client_id": "tutor-app", "max_age": 2592000, "require_unrevoked": true}`)
	want("policy", code, 201, pol)
	wantPolicy := map[string]any{"id": "tutor", "issuer": issuer, "client_id": "tutor-app", "max_age": "2592000s", "require_unrevoked": true}
	if pol["id"] != "tutor" || !reflect.DeepEqual(pol["policy"], wantPolicy) {
		t.Fatalf("policy = %v, want its policy %v", pol, wantPolicy)
	}

	// The trust store as listed.
	code, list := e.do("GET", "/phc/v1/dec/trust", e.owner, "", nil)
	want("list", code, 200, list)
	if !reflect.DeepEqual(list["issuers"], []any{pin}) || !reflect.DeepEqual(list["policies"], []any{pol}) {
		t.Fatalf("list = %v, want the pin and the policy", list)
	}

	// Unrevoking: strict, and a kid not revoked is not found.
	code, out := post("/phc/v1/dec/trust/unrevoke", `{"issuer": "`+issuer+`", "kid": "es-1", "extra": 1}`)
	want("unrevoke, unknown member", code, 400, out)
	code, out = post("/phc/v1/dec/trust/unrevoke", `{"issuer": "`+issuer+`", "kid": "ed-1"}`)
	want("unrevoke, not revoked", code, 404, out)
	code, out = post("/phc/v1/dec/trust/unrevoke", `{"issuer": "`+issuer+`", "kid": "es-1"}`)
	want("unrevoke", code, 200, out)
	if _, revoked := out["revoked"]; revoked {
		t.Fatalf("unrevoke = %v, want no revocation left", out)
	}

	// Verification answers a report whatever the document holds; the
	// document is read as it came (whitespace and member order do not
	// matter, a duplicate member does).
	code, rep := post("/phc/v1/dec/verify", vec.Document)
	want("verify", code, 200, rep)
	if rep["ok"] != true || rep["issuer"] != issuer || rep["replay"] != "not_asserted" || rep["grants_access"] != false ||
		rep["head"] == nil || rep["subject"] == nil {
		t.Fatalf("report = %v", rep)
	}
	var doc map[string]any
	_ = json.Unmarshal([]byte(vec.Document), &doc)
	pretty, _ := json.MarshalIndent(map[string]any{"entries": doc["entries"], "chain_id": doc["chain_id"], "dec_version": doc["dec_version"]}, "", "  ")
	code, again := post("/phc/v1/dec/verify", string(pretty))
	want("verify, pretty", code, 200, again)
	if !reflect.DeepEqual(again, rep) {
		t.Fatalf("the same document re-encoded verifies differently:\n%v\n%v", again, rep)
	}
	for name, body := range map[string]string{
		"not JSON":         `{"dec_version": `,
		"duplicate member": `{"dec_version": "0.1", "dec_version": "0.1", "chain_id": "x", "entries": []}`,
		"trailing data":    vec.Document + ` {}`,
	} {
		code, rep := post("/phc/v1/dec/verify", body)
		want("verify, "+name, code, 200, rep)
		st, _ := rep["structural"].(map[string]any)
		problems, _ := st["problems"].([]any)
		if rep["ok"] != false || len(problems) == 0 || problems[0].(map[string]any)["code"] != "malformed_document" {
			t.Fatalf("verify, %s: report = %v, want malformed_document", name, rep)
		}
	}

	// Presenting is a recipient's act, never the owner's.
	code, out = post("/phc/v1/dec/present", vec.Document)
	want("present by the owner", code, 400, out)
}
