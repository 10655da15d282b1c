package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/dec/dectype"
)

// TestDECVerifyVectors: phc dec verify gives every vector of dec/testdata
// exactly its expected verdicts and codes, and exits 0 only when all three
// verdicts pass.
func TestDECVerifyVectors(t *testing.T) { checkVectors(t, nil) }

// TestDECVerifyVectorsOverHTTP: the same through the daemon — phc dec trust
// pins each vector's keys, phc dec verify posts the document to
// POST /phc/v1/dec/verify.
func TestDECVerifyVectorsOverHTTP(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	checkVectors(t, h)
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"id":"tutor","issuer":"https://releases.example/tutor","client_id":"tutor-app","max_age":"24h"}`), 0o600)
	if code := Run(t.Context(), env, []string{"dec", "policy", "add", policy}); code != 0 || !strings.Contains(out.String(), "policy tutor added") {
		t.Fatalf("phc dec policy add = %d\n%s%s", code, out, errb)
	}
	var list struct {
		Policies []struct {
			ID string `json:"id"`
		} `json:"policies"`
	}
	h.must(200, "GET", "/phc/v1/dec/trust", h.owner, nil, &list)
	if len(list.Policies) != 1 || list.Policies[0].ID != "tutor" {
		t.Fatalf("GET /phc/v1/dec/trust = %+v", list)
	}
	os.WriteFile(policy, []byte(`{"id":"tutor","colour":"red"}`), 0o600)
	if code := Run(t.Context(), env, []string{"dec", "policy", "add", policy}); code != 1 {
		t.Fatalf("phc dec policy add of a malformed policy = %d", code)
	}
}

func checkVectors(t *testing.T, h *harness) {
	files, err := filepath.Glob("../../dec/testdata/vectors/*.json")
	if err != nil || len(files) < 28 {
		t.Fatalf("%d vectors: %v", len(files), err)
	}
	dir := t.TempDir()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Name      string                          `json:"name"`
			Document  string                          `json:"document"`
			Synthetic string                          `json:"synthetic"`
			Trust     map[string]json.RawMessage      `json:"trust"`
			Revoked   map[string][]dectype.Revocation `json:"revoked"`
			Expect    struct {
				Structural, Signature, Chain bool
				Codes                        []string
			} `json:"expect"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Run(v.Name, func(t *testing.T) {
			docFile := filepath.Join(dir, v.Name+".dec.json")
			body := []byte(v.Document)
			if v.Synthetic == "oversize_document" {
				body = []byte(`{"dec_version":"0.1","chain_id":"x","entries":["` + strings.Repeat("a", dectype.MaxDocumentSize) + `"]}`)
			}
			if err := os.WriteFile(docFile, body, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"dec", "verify", docFile}
			vars := map[string]string{"PHC_PASSWORD": testPassword}
			for iss, jwks := range v.Trust {
				keyFile := filepath.Join(dir, v.Name+".jwks.json")
				if err := os.WriteFile(keyFile, jwks, 0o600); err != nil {
					t.Fatal(err)
				}
				var revokedArgs []string
				for _, r := range v.Revoked[iss] {
					revokedArgs = append(revokedArgs, "--revoked", r.Kid+"@"+r.At.Format(time.RFC3339))
				}
				if h == nil {
					args = append(append(args, "--trust", keyFile, "--issuer", iss), revokedArgs...)
					continue
				}
				vars["PHC_HOME"] = h.dir
				env, _, errb := testEnv(t, vars)
				if code := Run(t.Context(), env, append([]string{"dec", "trust", iss, keyFile}, revokedArgs...)); code != 0 {
					t.Fatalf("phc dec trust = %d\n%s", code, errb)
				}
				// Pinning again never withdraws a revocation: the next
				// vector starts from none only by the explicit act.
				for _, r := range v.Revoked[iss] {
					t.Cleanup(func() {
						env, _, errb := testEnv(t, vars)
						if code := Run(context.Background(), env, []string{"dec", "unrevoke", iss, r.Kid}); code != 0 {
							t.Errorf("phc dec unrevoke = %d\n%s", code, errb)
						}
					})
				}
			}
			env, out, errb := testEnv(t, vars)
			code := Run(t.Context(), env, args)
			var rep dectype.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("phc dec verify printed %q (%s): %v", out.String(), errb.String(), err)
			}
			codes := append(append(append([]string{}, rep.Structural.Codes()...), rep.Signature.Codes()...), rep.Chain.Codes()...)
			if rep.Structural.OK != v.Expect.Structural || rep.Signature.OK != v.Expect.Signature || rep.Chain.OK != v.Expect.Chain ||
				!reflect.DeepEqual(codes, v.Expect.Codes) {
				t.Errorf("verdicts %v %v %v codes %v; want %+v", rep.Structural.OK, rep.Signature.OK, rep.Chain.OK, codes, v.Expect)
			}
			if want := 0; !rep.OK && code == want || rep.OK && code != want {
				t.Errorf("exit %d for a report with ok=%v", code, rep.OK)
			}
		})
	}
}
