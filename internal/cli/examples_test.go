package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/dec/dectype"
)

var updateExamples = flag.Bool("update-examples", false, "regenerate examples/dec (go test ./internal/cli -run TestExamplesDEC -update-examples)")

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

const (
	exampleIssuer = "https://releases.example/tutor"
	exampleKid    = "tutor-release-2026"
	exampleClient = "tutor"
)

// generateDECExample writes examples/dec: an issuer's public keys, a
// two-entry chain (a release, then its qualification) about the consumer
// tutor, and a policy that admits it. The private key is made fresh and
// never written.
func generateDECExample(t *testing.T) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jwk.FromRaw(priv)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	_ = pub.Set(jwk.KeyIDKey, exampleKid)
	_ = pub.Set(jwk.AlgorithmKey, jwa.EdDSA)
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	keys, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const chainID = "urn:uuid:0b7c2f7e-5d0e-4c1a-9d3f-7a1e2b3c4d5e"
	release := map[string]any{"name": "tutor", "version": "1.4.2", "digest": "sha256:" + strings.Repeat("ab", 32)}
	runtime := map[string]any{"config_digest": "sha256:" + strings.Repeat("cd", 32)}
	at := time.Now().UTC().Truncate(time.Second)
	var entries []string
	var prev any
	for seq, typ := range []string{dectype.TypeRelease, dectype.TypeQualification} {
		p := map[string]any{"chain_id": chainID, "seq": seq, "prev": prev, "iat": at.Add(time.Duration(seq) * time.Minute).Format(time.RFC3339),
			"issuer": exampleIssuer, "type": typ, "subject": map[string]any{"client_id": exampleClient},
			"release": release, "method": "build-attestation", "purpose": "learning", "runtime": runtime, "body": map[string]any{}}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		h := jws.NewHeaders()
		_ = h.Set(jws.KeyIDKey, exampleKid)
		_ = h.Set(jws.TypeKey, dectype.EntryType)
		e, err := jws.Sign(raw, jws.WithKey(jwa.EdDSA, priv, jws.WithProtectedHeaders(h)))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, string(e))
		prev = dec.Hash(string(e))
	}
	doc := dectype.Document{Version: dectype.Version, ChainID: chainID, Entries: entries}
	chain := doc.Encode()
	policy := map[string]any{"id": "tutor-release", "issuer": exampleIssuer, "client_id": exampleClient,
		"release_digests": []string{release["digest"].(string)}, "method": "build-attestation", "purpose": "learning",
		"runtime_config_digests": []string{runtime["config_digest"].(string)}, "max_age": "8760h", "require_unrevoked": true}
	pol, err := json.MarshalIndent(policy, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repoRoot, "examples", "dec")
	for name, data := range map[string][]byte{"tutor-keys.jwks.json": keys, "chain.json": chain, "policy.json": pol} {
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExamplesDEC runs the phc dec commands of the DEC guide
// (docs/dec-admission.md) as written (from the repository's root) with the files in examples/dec:
// pinning the keys, adding the policy, verifying the chain against the
// pinned keys and offline. The lines that need an id of a running session
// (phc approve req_…) are left to the tests of approval.
func TestExamplesDEC(t *testing.T) {
	t.Parallel()
	if *updateExamples {
		generateDECExample(t)
	}
	h := startHarness(t, "")
	ran := 0
	for _, line := range docBlock(t, "docs/dec-admission.md", "# DEC evidence chains") {
		cmd, _, _ := strings.Cut(line, "#")
		args := strings.Fields(cmd)
		if len(args) == 0 || args[0] != "phc" || strings.Contains(cmd, "…") {
			continue
		}
		args = args[1:]
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") {
				args[i] = filepath.Join(repoRoot, a)
			}
		}
		code, out, errs := h.phc(args...)
		if code != 0 {
			t.Errorf("%s = exit %d\n%s\n%s", strings.TrimSpace(cmd), code, out, errs)
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d of the DEC guide's commands; want at least 4", ran)
	}

	// The example chain admits the consumer tutor under the example policy.
	var p dectype.Policy
	raw, err := os.ReadFile(filepath.Join(repoRoot, "examples", "dec", "policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err = dec.ParsePolicy(raw); err != nil {
		t.Fatalf("examples/dec/policy.json: %v", err)
	}
	keys, _ := os.ReadFile(filepath.Join(repoRoot, "examples", "dec", "tutor-keys.jwks.json"))
	set, err := jwk.Parse(keys)
	if err != nil {
		t.Fatal(err)
	}
	chain, _ := os.ReadFile(filepath.Join(repoRoot, "examples", "dec", "chain.json"))
	trust := dec.Trust{Keys: map[string]jwk.Set{p.Issuer: set}}
	rep := dec.Verify(chain, trust)
	last, _ := time.Parse(time.RFC3339, rep.LastIat)
	if a := dec.Admit(rep, p, trust, last.Add(time.Hour)); a.Decision != "admit" {
		t.Errorf("the example policy does not admit the example chain: %+v", a.Failed)
	}
}
