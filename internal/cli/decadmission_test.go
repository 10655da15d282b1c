package cli

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/dec/dectype"
)

// decChain signs DEC entries for the admission tests over HTTP.
type decChain struct {
	t      *testing.T
	issuer string
	priv   ed25519.PrivateKey
	jwks   json.RawMessage
}

func newDECChain(t *testing.T, issuer string) *decChain {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jwk.FromRaw(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	_ = k.Set(jwk.KeyIDKey, "k-1")
	set := jwk.NewSet()
	_ = set.AddKey(k)
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return &decChain{t: t, issuer: issuer, priv: priv, jwks: raw}
}

// entry states what one entry says: its type, client and release digest.
type entry struct{ typ, client, digest string }

// document is a signed, linked chain of entries as a DEC document, in the
// format's member order.
func (c *decChain) document(chainID string, es ...entry) map[string]any {
	c.t.Helper()
	var out []string
	var prev any
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	for i, e := range es {
		p, _ := json.Marshal(map[string]any{
			"chain_id": chainID, "seq": i, "prev": prev, "iat": at.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
			"issuer": c.issuer, "type": e.typ, "subject": map[string]string{"client_id": e.client},
			"release": map[string]string{"name": "tutor", "version": "1.0", "digest": e.digest},
			"method":  "build-attestation", "purpose": "learning", "body": map[string]any{},
		})
		h := jws.NewHeaders()
		_ = h.Set(jws.KeyIDKey, "k-1")
		_ = h.Set(jws.TypeKey, dectype.EntryType)
		s, err := jws.Sign(p, jws.WithKey(jwa.EdDSA, c.priv, jws.WithProtectedHeaders(h)))
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, string(s))
		prev = dec.Hash(string(s))
	}
	return map[string]any{"dec_version": dectype.Version, "chain_id": chainID, "entries": out}
}

// TestDECAdmissionOverHTTP: through a real daemon, a recipient whose grant
// requires a qualification presents its chain and reads. Admission reads
// release, method and purpose only from release and qualification entries,
// never from run.* entries; entries about another client fail; the
// wrapper's member order and whitespace mean nothing. A refused read's
// receipt says qualification_required (not not_found), and the
// presentation's receipt says admit or deny.
func TestDECAdmissionOverHTTP(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	const issuer = "https://releases.example/http"
	c := newDECChain(t, issuer)
	h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": issuer, "jwks": c.jwks}, nil)
	released, ran := "sha256:"+strings.Repeat("ab", 32), "sha256:"+strings.Repeat("ef", 32)
	var p struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "health.http.allergy", "value": "peanuts", "kind": "fact", "assertion": "reported"}, &p)
	var confirmed struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, &confirmed)
	compact := func(v map[string]any) []byte {
		raw, _ := json.Marshal(v) // a map: members in sorted order
		return raw
	}
	pretty := func(v map[string]any) []byte {
		var b bytes.Buffer
		raw, _ := json.Marshal(struct {
			V string `json:"dec_version"`
			C string `json:"chain_id"`
			E any    `json:"entries"`
		}{v["dec_version"].(string), v["chain_id"].(string), v["entries"]})
		_ = json.Indent(&b, raw, "", "  ")
		return b.Bytes()
	}
	const cid = "urn:uuid:6f1c1b2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"
	// Each case's recipient is a consumer named like the client its chain
	// is about (self): a presentation is bound to its recipient.
	cases := []struct {
		name    string
		policy  map[string]any
		doc     func(self string) []byte
		failed  []string // nil: admitted
		refused bool     // the presentation itself: not about its recipient
	}{
		{"the release entry qualifies", map[string]any{"release_digests": []string{released}}, func(self string) []byte {
			return compact(c.document(cid, entry{dectype.TypeRelease, self, released}, entry{dectype.TypeRunEnd, self, ran}))
		}, nil, false},
		{"a run entry does not", map[string]any{"release_digests": []string{ran}}, func(self string) []byte {
			return compact(c.document(cid, entry{dectype.TypeRelease, self, released}, entry{dectype.TypeRunEnd, self, ran}))
		}, []string{dectype.CondReleaseDigest}, false},
		{"run entries only qualify nothing", map[string]any{}, func(self string) []byte {
			return compact(c.document(cid, entry{dectype.TypeRunStart, self, ran}, entry{dectype.TypeRunEnd, self, ran}))
		}, []string{dectype.CondQualification}, false},
		{"a pretty-printed document", map[string]any{"release_digests": []string{released}}, func(self string) []byte {
			return pretty(c.document(cid, entry{dectype.TypeRelease, self, released}))
		}, nil, false},
		{"entries about two clients", map[string]any{}, func(self string) []byte {
			return compact(c.document(cid, entry{dectype.TypeRelease, "coach-app", released}, entry{dectype.TypeRunEnd, self, ran}))
		}, []string{dectype.CondVerified}, false},
		{"entries about another client last", map[string]any{}, func(self string) []byte {
			return compact(c.document(cid, entry{dectype.TypeRelease, self, released}, entry{dectype.TypeRunEnd, "coach-app", ran}))
		}, nil, true},
	}
	defer func(t testing.TB) { h.t = t }(h.t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			name := fmt.Sprintf("adm-%d", i)
			policy := map[string]any{"id": name, "issuer": issuer, "client_id": name}
			for k, v := range tc.policy {
				policy[k] = v
			}
			h.must(201, "POST", "/phc/v1/dec/policies", h.owner, policy, nil)
			tok := h.consumer(name, "*", "read")
			var req struct {
				ID string `json:"request_id"`
			}
			h.must(202, "POST", "/context/requests", tok, map[string]any{"scope": "health.*", "purpose": "care"}, &req)
			h.must(200, "POST", "/context/requests/"+req.ID+"/approve", h.owner, map[string]any{"requires": map[string]string{"qualification": name}}, nil)

			if tc.refused {
				h.constraint(403, "qualification_required", "POST", "/phc/v1/dec/present", tok, tc.doc(name))
				h.constraint(403, "qualification_required", "GET", "/phc/v1/claims/"+confirmed.Claim.ID+"?purpose=care", tok, nil)
				return
			}
			var presented struct {
				Admissions []dectype.Admission `json:"admissions"`
			}
			h.must(200, "POST", "/phc/v1/dec/present", tok, tc.doc(name), &presented)
			var got []string
			for _, f := range presented.Admissions[0].Failed {
				got = append(got, f.Code)
			}
			if len(presented.Admissions) != 1 || !slices.Equal(got, tc.failed) {
				t.Fatalf("POST /phc/v1/dec/present = %+v; want failed %v", presented.Admissions, tc.failed)
			}
			wantDecision, wantRecord := "allow", "admission:admit"
			if tc.failed != nil {
				wantDecision, wantRecord = "deny", "admission:deny"
			}
			rc := lastReceipt(t, h, name, "dec.present")
			if rc.Decision != wantDecision || !slices.Contains(rc.Records, "policy:"+name) || !slices.Contains(rc.Records, wantRecord) ||
				(tc.failed != nil) != (rc.Constraint == "qualification_required") {
				t.Errorf("dec.present receipt = %+v; want %s with %s", rc, wantDecision, wantRecord)
			}

			for _, read := range []struct{ path, op string }{
				{"/phc/v1/claims/" + confirmed.Claim.ID + "?purpose=care", "claim.read"},
				{"/context/fields/health.http.allergy?purpose=care", "field.get"},
			} {
				if tc.failed == nil {
					h.must(200, "GET", read.path, tok, nil, nil)
					continue
				}
				h.constraint(403, "qualification_required", "GET", read.path, tok, nil)
				if rc := lastReceipt(t, h, name, read.op); rc.Decision != "deny" || rc.Constraint != "qualification_required" {
					t.Errorf("%s receipt of a read refused for its qualification = %+v; want deny qualification_required", read.op, rc)
				}
			}
		})
	}
}

// receiptView is a receipt as GET /phc/v1/receipts lists it.
type receiptView struct {
	Operation  string   `json:"operation"`
	Recipient  string   `json:"recipient"`
	Decision   string   `json:"decision"`
	Constraint string   `json:"constraint"`
	Records    []string `json:"records"`
}

// lastReceipt is the newest receipt of operation for recipient.
func lastReceipt(t *testing.T, h *harness, recipient, operation string) receiptView {
	t.Helper()
	var rs struct {
		Receipts []receiptView `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &rs)
	for _, r := range rs.Receipts {
		if r.Operation == operation && r.Recipient == recipient {
			return r
		}
	}
	t.Fatalf("no %s receipt for %s", operation, recipient)
	return receiptView{}
}
