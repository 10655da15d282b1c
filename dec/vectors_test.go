package dec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/phc-project/phc/dec/dectype"
)

// The vectors in testdata/vectors are made by this file's generator
//
//	go test ./dec -run TestVectors -update
//
// with keys made fresh on every run: only public keys are written, so no
// secret is checked in. Each vector states its expected verdicts and codes,
// written from what the generator did to the document — never from what
// Verify says — and TestVectors holds Verify to them.

var update = flag.Bool("update", false, "regenerate testdata/vectors")

const vectorDir = "testdata/vectors"

// vector is one test vector as stored.
type vector struct {
	Name        string                          `json:"name"`
	Description string                          `json:"description"`
	Document    string                          `json:"document,omitempty"`  // the raw document
	Synthetic   string                          `json:"synthetic,omitempty"` // built by the test instead (oversize_document)
	Trust       map[string]json.RawMessage      `json:"trust"`               // issuer → public JWKS
	Revoked     map[string][]dectype.Revocation `json:"revoked,omitempty"`
	Expect      expectation                     `json:"expect"`
}

type expectation struct {
	Structural bool     `json:"structural"`
	Signature  bool     `json:"signature"`
	Chain      bool     `json:"chain"`
	Codes      []string `json:"codes"` // every problem code, structural then signature then chain
}

// signer builds entries.
type signer struct {
	issuer  string
	kid     string
	alg     jwa.SignatureAlgorithm
	private any
	public  jwk.Key
}

func newSigner(t testing.TB, issuer, kid string, alg jwa.SignatureAlgorithm) *signer {
	t.Helper()
	var priv any
	var err error
	switch alg {
	case jwa.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case jwa.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
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
	_ = pub.Set(jwk.KeyIDKey, kid)
	return &signer{issuer: issuer, kid: kid, alg: alg, private: priv, public: pub}
}

func jwks(t testing.TB, keys ...jwk.Key) json.RawMessage {
	t.Helper()
	set := jwk.NewSet()
	for _, k := range keys {
		_ = set.AddKey(k)
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const chainID = "urn:uuid:6f1c1b2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// payload is entry seq's payload, linked to prev.
func payload(s *signer, seq int, prev *string, typ string) map[string]any {
	p := map[string]any{
		"chain_id": chainID, "seq": seq, "prev": prev, "iat": t0.Add(time.Duration(seq) * time.Minute).Format(time.RFC3339),
		"issuer": s.issuer, "type": typ, "subject": map[string]any{"client_id": "tutor-app"},
		"release": map[string]any{"name": "tutor", "version": "1.4.2", "digest": "sha256:" + strings.Repeat("ab", 32)},
		"method":  "build-attestation", "purpose": "learning",
		"runtime": map[string]any{"config_digest": "sha256:" + strings.Repeat("cd", 32)}, "body": map[string]any{},
	}
	return p
}

// sign signs p as a compact JWS with header hdr (alg, kid and typ unless
// given), by key (s.private unless given).
func (s *signer) sign(t testing.TB, p map[string]any, hdr map[string]any, key any, alg jwa.SignatureAlgorithm) string {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	h := jws.NewHeaders()
	_ = h.Set(jws.KeyIDKey, s.kid)
	_ = h.Set(jws.TypeKey, dectype.EntryType)
	for k, v := range hdr {
		_ = h.Set(k, v)
	}
	if key == nil {
		key = s.private
	}
	if alg == "" {
		alg = s.alg
	}
	out, err := jws.Sign(raw, jws.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// chain makes n valid entries.
func (s *signer) chain(t testing.TB, n int) []string {
	var out []string
	var prev *string
	for i := 0; i < n; i++ {
		typ := dectype.TypeRunStep
		if i == 0 {
			typ = dectype.TypeRelease
		}
		e := s.sign(t, payload(s, i, prev, typ), nil, nil, "")
		out = append(out, e)
		h := Hash(e)
		prev = &h
	}
	return out
}

func doc(entries []string) string {
	d := dectype.Document{Version: dectype.Version, ChainID: chainID, Entries: entries}
	return string(d.Encode())
}

// relink recomputes the prev of entries from i on (after an edit), signing
// again.
func (s *signer) build(t testing.TB, ps []map[string]any) []string {
	var out []string
	for i, p := range ps {
		if i > 0 {
			h := Hash(out[i-1])
			p["prev"] = h
		} else {
			p["prev"] = nil
		}
		out = append(out, s.sign(t, p, nil, nil, ""))
	}
	return out
}

func payloads(s *signer, n int) []map[string]any {
	var ps []map[string]any
	for i := 0; i < n; i++ {
		ps = append(ps, payload(s, i, nil, dectype.TypeRunStep))
	}
	ps[0]["type"] = dectype.TypeRelease
	return ps
}

func ok() expectation {
	return expectation{Structural: true, Signature: true, Chain: true, Codes: []string{}}
}

func fails(structural, signature, chain bool, codes ...string) expectation {
	return expectation{Structural: structural, Signature: signature, Chain: chain, Codes: codes}
}

func generate(t testing.TB) []vector {
	const issuer = "https://releases.example/tutor"
	ed := newSigner(t, issuer, "ed-1", jwa.EdDSA)
	es := newSigner(t, issuer, "es-1", jwa.ES256)
	other := newSigner(t, issuer, "ed-2", jwa.EdDSA) // not pinned
	mallory := newSigner(t, "https://mallory.example", "m-1", jwa.EdDSA)
	trust := map[string]json.RawMessage{issuer: jwks(t, ed.public, es.public)}
	var vs []vector
	add := func(name, desc string, document string, e expectation) {
		vs = append(vs, vector{Name: name, Description: desc, Document: document, Trust: trust, Expect: e})
	}

	add("valid-1", "a one-entry chain (a release entry), EdDSA", doc(ed.chain(t, 1)), ok())
	add("valid-50", "a 50-entry chain, EdDSA", doc(ed.chain(t, 50)), ok())
	add("valid-es256", "a 3-entry chain signed with ES256", doc(es.chain(t, 3)), ok())

	c := ed.chain(t, 3)
	parts := strings.Split(c[1], ".")
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	pb = []byte(strings.Replace(string(pb), "learning", "marketing", 1))
	c[1] = parts[0] + "." + base64.RawURLEncoding.EncodeToString(pb) + "." + parts[2]
	add("tampered-payload", "entry 1's payload changed after signing (so entry 2's prev no longer matches)", doc(c),
		fails(true, false, false, dectype.CodeBadSignature, dectype.CodePrevMismatch))

	c = ed.chain(t, 3)
	parts = strings.Split(c[2], ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[0] ^= 0xff
	c[2] = parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	add("tampered-signature", "entry 2's signature changed", doc(c), fails(true, false, true, dectype.CodeBadSignature))

	c = ed.chain(t, 2)
	c[1] = ed.sign(t, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep), nil, other.private, "")
	add("wrong-key", "entry 1 signed by another key under the pinned kid", doc(c), fails(true, false, true, dectype.CodeBadSignature))

	c = ed.chain(t, 2)
	c[1] = other.sign(t, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep), nil, nil, "")
	add("unknown-kid", "entry 1 signed by a key the issuer never pinned", doc(c), fails(true, false, true, dectype.CodeUnknownKid))

	c = ed.chain(t, 2)
	c[1] = noneEntry(t, ed, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep))
	add("alg-none", "entry 1 with alg none and no signature", doc(c), fails(true, false, true, dectype.CodeAlgNotAllowed))

	c = es.chain(t, 2)
	pubRaw := mustJSON(t, es.public)
	c[1] = es.sign(t, payload(es, 1, ptr(Hash(c[0])), dectype.TypeRunStep), nil, pubRaw, jwa.HS256)
	add("hs256-public-key", "entry 1 signed with HS256, keyed with the public key's JSON", doc(c), fails(true, false, true, dectype.CodeAlgNotAllowed))

	c = ed.chain(t, 2)
	c[1] = ed.sign(t, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep), nil, es.private, jwa.ES256)
	add("es256-on-ed25519", "entry 1 says ES256 under the Ed25519 key's kid", doc(c), fails(true, false, true, dectype.CodeAlgKeyMismatch))

	c = ed.chain(t, 2)
	c[1] = ed.sign(t, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep), map[string]any{jws.JWKKey: ed.public}, nil, "")
	add("embedded-jwk", "entry 1 carries its key in the header", doc(c), fails(true, false, true, dectype.CodeKeyInHeader))

	c = ed.chain(t, 2)
	c[1] = ed.sign(t, payload(ed, 1, ptr(Hash(c[0])), dectype.TypeRunStep), map[string]any{jws.CriticalKey: []string{"exp"}, "exp": 1}, nil, "")
	add("unknown-crit", "entry 1 has crit", doc(c), fails(true, false, true, dectype.CodeUnknownCrit))

	ps := payloads(ed, 3)
	delete(ps[1], "seq")
	add("missing-seq", "entry 1 has no seq", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeBadPayload))

	ps = payloads(ed, 3)
	ps[2]["seq"] = 1
	add("duplicate-seq", "entries 1 and 2 both have seq 1 (a fork)", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeSeq, dectype.CodeFork))

	ps = payloads(ed, 3)
	ps[2]["seq"] = 3
	add("skipped-seq", "seq goes 0, 1, 3", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeSeq))

	c = ed.chain(t, 3)
	c[2] = ed.sign(t, payload(ed, 2, ptr(Hash(c[0])), dectype.TypeRunStep), nil, nil, "")
	add("broken-prev", "entry 2's prev is the hash of entry 0", doc(c), fails(true, true, false, dectype.CodePrevMismatch))

	c = ed.chain(t, 2)
	c0 := ed.sign(t, payload(ed, 0, ptr(Hash(c[1])), dectype.TypeRelease), nil, nil, "")
	c[0] = c0
	add("prev-not-null", "entry 0 names a predecessor (and entry 1 no longer links to it)", doc(c),
		fails(true, true, false, dectype.CodePrevNotNull, dectype.CodePrevMismatch))

	base := ed.chain(t, 2)
	fork := ed.sign(t, payload(ed, 1, ptr(Hash(base[0])), dectype.TypeRunEnd), nil, nil, "")
	add("fork", "two entries with seq 1, each linking to entry 0", doc(append(base, fork)),
		fails(false, false, false, dectype.CodeSeq, dectype.CodePrevMismatch, dectype.CodeFork))

	ps = payloads(ed, 2)
	ps[1]["chain_id"] = "urn:uuid:00000000-0000-4000-8000-000000000000"
	add("chain-id-mismatch", "entry 1 belongs to another chain", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeChainIDMismatch))

	c = ed.chain(t, 1)
	c = append(c, mallory.sign(t, payload(mallory, 1, ptr(Hash(c[0])), dectype.TypeRunStep), nil, nil, ""))
	add("mixed-issuers", "entry 1 from another issuer", doc(c), fails(false, false, false, dectype.CodeMixedIssuers, dectype.CodeUnknownIssuer))

	ps = payloads(ed, 3)
	ps[2]["iat"] = t0.Add(-time.Hour).Format(time.RFC3339)
	add("decreasing-iat", "entry 2 is dated before entry 1", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeIatDecreasing))

	ps = payloads(ed, 3)
	ps[1]["type"] = dectype.TypeKeyRevoke
	ps[1]["body"] = map[string]any{"kid": "ed-1"}
	add("after-key-revoke", "entry 1 revokes ed-1; entry 2, later, is signed by it", doc(ed.build(t, ps)), fails(true, false, true, dectype.CodeRevokedKey))

	ps = payloads(ed, 1)
	ps[0]["body"] = map[string]any{"blob": strings.Repeat("x", dectype.MaxEntryBytes)}
	add("oversize-entry", "an entry over 64 KiB", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeEntryTooLarge))

	vs = append(vs, vector{Name: "oversize-document", Description: "a document over 4 MiB (built by the test: too big to check in)",
		Synthetic: "oversize_document", Trust: trust, Expect: fails(false, false, false, dectype.CodeTooLarge, dectype.CodeMalformedDocument)})

	ps = payloads(ed, 1)
	ps[0]["colour"] = "red"
	add("unknown-member", "a payload member the format does not have", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeMalformedEntry))

	c = ed.chain(t, 1)
	add("duplicate-member", "the document has chain_id twice", `{"dec_version":"0.1","chain_id":"`+chainID+`","chain_id":"`+chainID+`","entries":["`+c[0]+`"]}`,
		fails(false, false, false, dectype.CodeMalformedDocument))
	add("trailing-data", "data after the document", doc(c)+` {}`, fails(false, false, false, dectype.CodeMalformedDocument))
	// The wrapper is ordinary JSON: member order and whitespace carry no
	// meaning (RFC 8259); what is signed is each entry's JWS bytes.
	add("sorted-members", "the members in sorted order, as RFC 8785, Python or a JavaScript map write them",
		`{"chain_id":"`+chainID+`","dec_version":"0.1","entries":["`+c[0]+`"]}`, ok())
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, []byte(doc(ed.chain(t, 2))), "", "\t")
	add("pretty-printed", "the document indented, with line breaks", pretty.String()+"\n", ok())

	ps = payloads(ed, 3)
	ps[2]["subject"] = map[string]any{"client_id": "coach-app"}
	add("mixed-subjects", "entry 2 is about another client", doc(ed.build(t, ps)), fails(false, false, false, dectype.CodeMixedSubjects))

	// A key revoked in the trust store before entry 1.
	rv := vector{Name: "store-revoked", Description: "the trust store revokes ed-1 from entry 1's iat on", Document: doc(ed.chain(t, 3)),
		Trust: trust, Revoked: map[string][]dectype.Revocation{issuer: {{Kid: "ed-1", At: t0.Add(time.Minute)}}},
		Expect: fails(true, false, true, dectype.CodeRevokedKey, dectype.CodeRevokedKey)}
	vs = append(vs, rv)
	return vs
}

func ptr(s string) *string { return &s }

func mustJSON(t testing.TB, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// noneEntry is an unsigned entry with alg none.
func noneEntry(t testing.TB, s *signer, p map[string]any) string {
	h := mustJSON(t, map[string]string{"alg": "none", "kid": s.kid, "typ": dectype.EntryType})
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(mustJSON(t, p)) + "."
}

// trustOf builds the Trust of a vector.
func trustOf(t testing.TB, v vector) Trust {
	tr := Trust{Keys: map[string]jwk.Set{}, Revoked: v.Revoked}
	for iss, raw := range v.Trust {
		set, err := jwk.Parse(raw)
		if err != nil {
			t.Fatalf("%s: trust for %s: %v", v.Name, iss, err)
		}
		tr.Keys[iss] = set
	}
	return tr
}

func (v vector) document(t testing.TB) []byte {
	if v.Synthetic == "oversize_document" {
		return []byte(`{"dec_version":"0.1","chain_id":"` + chainID + `","entries":["` + strings.Repeat("a", dectype.MaxDocumentSize) + `"]}`)
	}
	return []byte(v.Document)
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in %s (go test ./dec -run TestVectors -update): %v", vectorDir, err)
	}
	var vs []vector
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		vs = append(vs, v)
	}
	return vs
}

// TestVectors: every vector gives exactly its expected verdicts and codes.
func TestVectors(t *testing.T) {
	if *update {
		if err := os.RemoveAll(vectorDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(vectorDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, v := range generate(t) {
			raw, _ := json.MarshalIndent(v, "", " ")
			if err := os.WriteFile(filepath.Join(vectorDir, v.Name+".json"), append(raw, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	vs := loadVectors(t)
	if len(vs) < 28 {
		t.Fatalf("%d vectors; want the 28 of the issue", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			rep := Verify(v.document(t), trustOf(t, v))
			got := expectation{Structural: rep.Structural.OK, Signature: rep.Signature.OK, Chain: rep.Chain.OK,
				Codes: append(append(append([]string{}, rep.Structural.Codes()...), rep.Signature.Codes()...), rep.Chain.Codes()...)}
			if !reflect.DeepEqual(got, v.Expect) {
				t.Errorf("%s\n got %+v\nwant %+v\n%s", v.Description, got, v.Expect, problems(rep))
			}
			if rep.Replay != "not_asserted" || rep.GrantsAccess {
				t.Errorf("report says replay %q, grants_access %v", rep.Replay, rep.GrantsAccess)
			}
		})
	}
}

func problems(rep dectype.Report) string {
	var b strings.Builder
	for _, v := range []dectype.Verdict{rep.Structural, rep.Signature, rep.Chain} {
		for _, p := range v.Problems {
			fmt.Fprintf(&b, "  entry %d %s: %s\n", p.Entry, p.Code, p.Detail)
		}
	}
	return b.String()
}
