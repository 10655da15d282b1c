package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phc-project/phc/dec/dectype"
)

// decFixture is a daemon with one pinned issuer, a sensitive claim and
// helpers for recipients whose grants require a qualification.
type decFixture struct {
	h       *harness
	c       *decChain
	issuer  string
	digest  string
	claimID string
}

func newDECFixture(t *testing.T, h *harness) *decFixture {
	t.Helper()
	f := &decFixture{h: h, issuer: "https://releases.example/binding", digest: "sha256:" + strings.Repeat("ab", 32)}
	f.c = newDECChain(t, f.issuer)
	h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": f.issuer, "jwks": f.c.jwks}, nil)
	var p struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "health.binding.allergy", "value": "peanuts", "kind": "fact", "assertion": "reported"}, &p)
	var confirmed struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	h.must(200, "POST", "/phc/v1/proposals/"+p.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, &confirmed)
	f.claimID = confirmed.Claim.ID
	return f
}

// policy adds an admission policy for client.
func (f *decFixture) policy(id, client string) {
	f.h.t.Helper()
	f.h.must(201, "POST", "/phc/v1/dec/policies", f.h.owner, map[string]any{"id": id, "issuer": f.issuer, "client_id": client,
		"release_digests": []string{f.digest}, "require_unrevoked": true}, nil)
}

// qualifiedRecipient registers consumer name and has the owner approve its
// request for health.* under purpose care, requiring policy; it returns the
// token the request gave.
func (f *decFixture) qualifiedRecipient(name, policy string) string {
	f.h.t.Helper()
	tok := f.h.consumer(name, "*", "read")
	id := f.request(tok, "health.*", "care", 202)
	f.h.must(200, "POST", "/context/requests/"+id+"/approve", f.h.owner, map[string]any{"requires": map[string]string{"qualification": policy}}, nil)
	return tok
}

// request files a context request and returns its id.
func (f *decFixture) request(tok, scope, purpose string, status int) string {
	f.h.t.Helper()
	var req struct {
		ID string `json:"request_id"`
	}
	f.h.must(status, "POST", "/context/requests", tok, map[string]any{"scope": scope, "purpose": purpose}, &req)
	return req.ID
}

// chain is a compact, signed release chain about client.
func (f *decFixture) chain(client string) []byte {
	f.h.t.Helper()
	return mustJSON(f.h.t, f.c.document("urn:uuid:0b7e6a52-1c1d-4e5f-8a9b-0c1d2e3f4a5b", entry{dectype.TypeRelease, client, f.digest}))
}

// read reads the claim under purpose care and returns the status.
func (f *decFixture) read(tok string) int {
	f.h.t.Helper()
	return f.readFor(tok, "care")
}

// readFor reads the claim under purpose and returns the status.
func (f *decFixture) readFor(tok, purpose string) int {
	f.h.t.Helper()
	status, _ := f.h.do("GET", "/phc/v1/claims/"+f.claimID+"?purpose="+purpose, tok, nil)
	return status
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestDECPresentationBoundToRecipient: a presentation is bound to its
// recipient. The chain's subject must be the presenter as the custodian
// authenticated it (a consumer: {client_id: its name}); a recipient whose
// grant requires a qualification cannot present another client's public
// chain — or a document about no one — to be admitted: 403
// qualification_required, receipted deny "subject:not_presenter", and the
// token's earlier presentation is withdrawn.
func TestDECPresentationBoundToRecipient(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	f := newDECFixture(t, h)
	f.policy("bound-tutor", "tutor-bound")
	cases := []struct {
		name      string
		presenter string
		first     string // a chain about this client is presented first, if not ""
		doc       func() []byte
		refused   bool
	}{
		{"its own chain", "tutor-bound", "", func() []byte { return f.chain("tutor-bound") }, false},
		{"another client's chain", "copycat-1", "", func() []byte { return f.chain("tutor-bound") }, true},
		{"another client's chain after its own", "copycat-2", "copycat-2", func() []byte { return f.chain("tutor-bound") }, true},
		{"a document about no one", "copycat-3", "", func() []byte { return []byte("not a chain") }, true},
	}
	defer func(t testing.TB) { h.t = t }(h.t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			tok := f.qualifiedRecipient(tc.presenter, "bound-tutor")
			if tc.first != "" {
				h.must(200, "POST", "/phc/v1/dec/present", tok, f.chain(tc.first), nil)
			}
			if !tc.refused {
				h.must(200, "POST", "/phc/v1/dec/present", tok, tc.doc(), nil)
				if got := f.read(tok); got != 200 {
					t.Fatalf("read after presenting its own chain = %d; want 200", got)
				}
				return
			}
			h.constraint(403, "qualification_required", "POST", "/phc/v1/dec/present", tok, tc.doc())
			rc := lastReceipt(t, h, tc.presenter, "dec.present")
			if rc.Decision != "deny" || rc.Constraint != "qualification_required" || !slices.Contains(rc.Records, "subject:not_presenter") {
				t.Errorf("dec.present receipt = %+v; want deny qualification_required subject:not_presenter", rc)
			}
			h.constraint(403, "qualification_required", "GET", "/phc/v1/claims/"+f.claimID+"?purpose=care", tok, nil)
			var list struct {
				Presentations []struct {
					Recipient string `json:"recipient"`
				} `json:"presentations"`
			}
			h.must(200, "GET", "/phc/v1/dec/presentations", h.owner, nil, &list)
			for _, p := range list.Presentations {
				if p.Recipient == tc.presenter {
					t.Errorf("a refused presentation left %s's presentation stored", tc.presenter)
				}
			}
		})
	}
}

// TestRequestsInheritRequires: a new request whose scope meets a scope the
// app's earlier grant requires a qualification for carries the same
// requires — approved by the owner or at once — unless the owner drops it
// explicitly (drop_requires, receipted); a scope it does not meet carries
// none, and earlier grants requiring different ones leave it to the owner.
func TestRequestsInheritRequires(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	f := newDECFixture(t, h)
	f.policy("inherit-q", "inherit-app")
	f.policy("inherit-r", "inherit-app")
	cases := []struct {
		name     string
		scope    string
		approve  map[string]any // nil: granted at once
		status   int            // of the approval
		requires string         // the new grant's qualification
		record   string         // in the approval's receipt
	}{
		{"the same scope", "health.*", map[string]any{}, 200, "inherit-q", "policy:inherit-q"},
		{"a narrower scope", "health.binding.allergy", map[string]any{}, 200, "inherit-q", "policy:inherit-q"},
		{"dropped by the owner", "health.*", map[string]any{"drop_requires": true}, 200, "", "requires_dropped:inherit-q"},
		{"another qualification named", "health.*", map[string]any{"requires": map[string]string{"qualification": "inherit-r"}}, 200, "inherit-r", "policy:inherit-r"},
		{"both at once", "health.*", map[string]any{"requires": map[string]string{"qualification": "inherit-r"}, "drop_requires": true}, 400, "", ""},
		{"a scope it does not meet", "learning.*", map[string]any{}, 200, "", ""},
		{"granted at once", "preferences.food", nil, 0, "inherit-q", ""},
	}
	defer func(t testing.TB) { h.t = t }(h.t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			name := "inherit-" + string(rune('a'+i))
			tok := f.qualifiedRecipient(name, "inherit-q")
			if tc.approve == nil {
				// The owner's grant over everything standard requires it too.
				h.must(201, "POST", "/phc/v1/grants", h.owner, map[string]any{
					"recipient": map[string]string{"kind": "consumer", "id": name}, "purpose": "care", "operations": []string{"read"},
					"selectors": map[string]any{"keys": []string{"preferences.*"}}, "requires": map[string]string{"qualification": "inherit-q"},
					"expires_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, nil)
			}
			status := 202
			if tc.approve == nil {
				status = 201
				h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "standard"}, nil)
				defer h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]string{"auto_grant": "public"}, nil)
			}
			id := f.request(tok, tc.scope, "care-again", status)
			if tc.approve != nil {
				h.constraintOrOK(tc.status, "POST", "/context/requests/"+id+"/approve", h.owner, tc.approve)
				if tc.status != 200 {
					return
				}
			}
			var grants struct {
				Grants []struct {
					Request  string `json:"request"`
					Requires *struct {
						Qualification string `json:"qualification"`
					} `json:"requires"`
				} `json:"grants"`
			}
			h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
			got, found := "", false
			for _, g := range grants.Grants {
				if g.Request == id {
					found = true
					if g.Requires != nil {
						got = g.Requires.Qualification
					}
				}
			}
			if !found || got != tc.requires {
				t.Fatalf("the grant of request %s requires %q (found %v); want %q", tc.scope, got, found, tc.requires)
			}
			if tc.record != "" {
				if rc := lastReceipt(t, h, name, "request.approve"); !slices.Contains(rc.Records, tc.record) {
					t.Errorf("request.approve receipt = %+v; want %s", rc, tc.record)
				}
			}
			// Asking again never walks around the qualification: a read
			// under the new grant's purpose needs it, unless dropped.
			if strings.HasPrefix(tc.scope, "health.") {
				want := 200
				if tc.requires != "" {
					want = 403
				}
				if got := f.readFor(tok, "care-again"); got != want {
					t.Errorf("read under the new grant = %d; want %d", got, want)
				}
			}
		})
	}
	// Narrowing the grant that requires a qualification does not narrow
	// what later requests inherit it over: the grant still binds the keys
	// it was made with.
	t.Run("narrowed first", func(t *testing.T) {
		h.t = t
		tok := f.qualifiedRecipient("inherit-narrowed", "inherit-q")
		var grants struct {
			Grants []struct {
				ID        string `json:"id"`
				Recipient struct {
					ID string `json:"id"`
				} `json:"recipient"`
				Request  string `json:"request"`
				Requires *struct {
					Qualification string `json:"qualification"`
				} `json:"requires"`
			} `json:"grants"`
		}
		h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
		first := ""
		for _, g := range grants.Grants {
			if g.Recipient.ID == "inherit-narrowed" {
				first = g.ID
			}
		}
		h.must(200, "POST", "/phc/v1/grants/"+first+"/narrow", h.owner, map[string]any{"selectors": map[string]any{"keys": []string{"health.binding.allergy"}}}, nil)
		id := f.request(tok, "health.vitals.*", "care-again", 202)
		h.must(200, "POST", "/context/requests/"+id+"/approve", h.owner, map[string]any{}, nil)
		h.must(200, "GET", "/phc/v1/grants", h.owner, nil, &grants)
		found := false
		for _, g := range grants.Grants {
			if g.Request == id {
				found = true
				if g.Requires == nil || g.Requires.Qualification != "inherit-q" {
					t.Errorf("the grant of a request over health.vitals.* after narrowing requires %+v; want inherit-q", g.Requires)
				}
			}
		}
		if first == "" || !found {
			t.Fatalf("grants: the first %q, the new one found %v", first, found)
		}
	})
	t.Run("different qualifications", func(t *testing.T) {
		h.t = t
		tok := f.qualifiedRecipient("inherit-two", "inherit-q")
		id := f.request(tok, "health.binding.*", "care", 202)
		h.must(200, "POST", "/context/requests/"+id+"/approve", h.owner, map[string]any{"requires": map[string]string{"qualification": "inherit-r"}}, nil)
		id = f.request(tok, "health.*", "care-again", 202)
		h.constraint(400, "invalid_request", "POST", "/context/requests/"+id+"/approve", h.owner, map[string]any{})
		h.must(200, "POST", "/context/requests/"+id+"/approve", h.owner, map[string]any{"requires": map[string]string{"qualification": "inherit-r"}}, nil)
	})
}

// constraintOrOK expects status: 200 with any body, or an error answer.
func (h *harness) constraintOrOK(status int, method, path, token string, body any) {
	h.t.Helper()
	if status == 200 {
		h.must(200, method, path, token, body, nil)
		return
	}
	h.constraint(status, "invalid_request", method, path, token, body)
}

// TestDECRepinMergesRevocations: pinning an issuer again replaces its keys
// but merges its revocations — a revocation is withdrawn only by the
// explicit, receipted POST /phc/v1/dec/trust/unrevoke (phc dec unrevoke).
func TestDECRepinMergesRevocations(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	f := newDECFixture(t, h)
	f.policy("merge-tutor", "merge-app")
	tok := f.qualifiedRecipient("merge-app", "merge-tutor")
	h.must(200, "POST", "/phc/v1/dec/present", tok, f.chain("merge-app"), nil)
	if got := f.read(tok); got != 200 {
		t.Fatalf("read with an admitted chain = %d; want 200", got)
	}
	revokedAt := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second)
	revoked := []map[string]any{{"kid": "k-1", "at": revokedAt.Format(time.RFC3339)}}
	h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": f.issuer, "jwks": f.c.jwks, "revoked": revoked}, nil)
	steps := []struct {
		name string
		act  func()
		read int
		kids []string
	}{
		{"revoked", func() {}, 403, []string{"k-1"}},
		{"re-pinned without it", func() {
			h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": f.issuer, "jwks": f.c.jwks}, nil)
		}, 403, []string{"k-1"}},
		{"re-pinned with another", func() {
			h.must(201, "POST", "/phc/v1/dec/trust", h.owner, map[string]any{"issuer": f.issuer, "jwks": f.c.jwks,
				"revoked": []map[string]any{{"kid": "k-9", "at": revokedAt.Format(time.RFC3339)}}}, nil)
		}, 403, []string{"k-1", "k-9"}},
		{"unrevoked by the CLI", func() {
			env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
			if code := Run(t.Context(), env, []string{"dec", "unrevoke", f.issuer, "k-1"}); code != 0 {
				t.Fatalf("phc dec unrevoke = %d\n%s%s", code, out, errb)
			}
		}, 200, []string{"k-9"}},
		{"unrevoking a kid not revoked", func() {
			h.constraint(404, "not_found", "POST", "/phc/v1/dec/trust/unrevoke", h.owner, map[string]string{"issuer": f.issuer, "kid": "k-1"})
		}, 200, []string{"k-9"}},
		{"unrevoking as a recipient", func() {
			h.constraint(403, "session_required", "POST", "/phc/v1/dec/trust/unrevoke", tok, map[string]string{"issuer": f.issuer, "kid": "k-9"})
		}, 200, []string{"k-9"}},
	}
	defer func(t testing.TB) { h.t = t }(h.t)
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			h.t = t
			s.act()
			var trust struct {
				Issuers []struct {
					Issuer  string `json:"issuer"`
					Revoked []struct {
						Kid string `json:"kid"`
					} `json:"revoked"`
				} `json:"issuers"`
			}
			h.must(200, "GET", "/phc/v1/dec/trust", h.owner, nil, &trust)
			var kids []string
			for _, i := range trust.Issuers {
				if i.Issuer == f.issuer {
					for _, r := range i.Revoked {
						kids = append(kids, r.Kid)
					}
				}
			}
			if !slices.Equal(kids, s.kids) {
				t.Errorf("revoked kids = %v; want %v", kids, s.kids)
			}
			if got := f.read(tok); got != s.read {
				t.Errorf("read = %d; want %d", got, s.read)
			}
		})
	}
	var rs struct {
		Receipts []receiptView `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=1000", h.owner, nil, &rs)
	n := 0
	for _, r := range rs.Receipts {
		if r.Operation == "dec.unrevoke" {
			n++
			if r.Decision != "allow" || len(r.Records) != 2 || slices.Contains(r.Records, "k-1") {
				t.Errorf("dec.unrevoke receipt = %+v; want allow naming the pin and the kid by opaque ids", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d dec.unrevoke receipts; want 1", n)
	}
}

// offsetClock is the system clock moved on by an offset the test sets.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time {
	return time.Now().UTC().Add(time.Duration(c.offset.Load()))
}

// TestDECPresentationsPurged: when a token ends — revoked by the owner, by
// its consumer's removal, or expired — the document presented with it goes
// too; nothing is kept that no token can use.
func TestDECPresentationsPurged(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	h := startHarnessClock(t, "", testPassword, clock)
	f := newDECFixture(t, h)
	cases := []struct {
		name string
		end  func(name, tok string)
	}{
		{"token revoked", func(name, tok string) {
			h.must(200, "DELETE", "/context/tokens/service/"+tok[:len("ctxs_")+8], h.owner, nil, nil)
		}},
		{"consumer removed", func(name, tok string) {
			h.must(200, "DELETE", "/context/consumers/"+name, h.owner, nil, nil)
		}},
		{"token expired", func(name, tok string) {
			clock.offset.Add(int64(2 * time.Hour)) // past the token's hour
			h.consumer(name+"-next", "*", "read")  // any new token sweeps
		}},
	}
	presented := func(name string) bool {
		var list struct {
			Presentations []struct {
				Recipient string `json:"recipient"`
			} `json:"presentations"`
		}
		h.must(200, "GET", "/phc/v1/dec/presentations", h.owner, nil, &list)
		return slices.ContainsFunc(list.Presentations, func(p struct {
			Recipient string `json:"recipient"`
		}) bool {
			return p.Recipient == name
		})
	}
	defer func(t testing.TB) { h.t = t }(h.t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			name := "purged-" + string(rune('a'+i))
			tok := h.consumer(name, "*", "read")
			h.must(200, "POST", "/phc/v1/dec/present", tok, f.chain(name), nil)
			if !presented(name) {
				t.Fatalf("no presentation listed for %s", name)
			}
			tc.end(name, tok)
			if presented(name) {
				t.Errorf("the presentation of %s's ended token is still stored", name)
			}
		})
	}
}
