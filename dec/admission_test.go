package dec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/dec/dectype"
)

func TestParsePolicy(t *testing.T) {
	good := `{"id":"tutor-release","issuer":"https://releases.example/tutor","client_id":"tutor-app",` +
		`"release_digests":["sha256:` + strings.Repeat("ab", 32) + `"],"max_age":"24h","require_unrevoked":true}`
	if _, err := ParsePolicy([]byte(good)); err != nil {
		t.Fatalf("ParsePolicy(good) = %v", err)
	}
	for name, raw := range map[string]string{
		"unknown member":   strings.Replace(good, `"max_age"`, `"colour":"red","max_age"`, 1),
		"duplicate member": strings.Replace(good, `"id":"tutor-release",`, `"id":"a","id":"b",`, 1),
		"trailing data":    good + " {}",
		"bad id":           strings.Replace(good, "tutor-release", "Tutor Release", 1),
		"no issuer":        strings.Replace(good, `"issuer":"https://releases.example/tutor",`, ``, 1),
		"bad digest":       strings.Replace(good, "sha256:"+strings.Repeat("ab", 32), "sha256:xyz", 1),
		"bad max_age":      strings.Replace(good, `"24h"`, `"a day"`, 1),
		"negative max_age": strings.Replace(good, `"24h"`, `"-1h"`, 1),
		"zero seconds":     strings.Replace(good, `"24h"`, `0`, 1),
		"fraction":         strings.Replace(good, `"24h"`, `1.5`, 1),
		"negative seconds": strings.Replace(good, `"24h"`, `-60`, 1),
		"zero days":        strings.Replace(good, `"24h"`, `"0d"`, 1),
		"days and hours":   strings.Replace(good, `"24h"`, `"1d12h"`, 1),
	} {
		if _, err := ParsePolicy([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPolicyMaxAge checks the forms of max_age a person types: a Go
// duration, days, or a JSON number of seconds.
func TestPolicyMaxAge(t *testing.T) {
	for in, want := range map[string]time.Duration{`"720h"`: 720 * time.Hour, `"30d"`: 720 * time.Hour, `2592000`: 720 * time.Hour, `"90m"`: 90 * time.Minute} {
		raw := `{"id":"p","issuer":"https://releases.example/tutor","client_id":"tutor-app","max_age":` + in + `}`
		p, err := ParsePolicy([]byte(raw))
		if err != nil {
			t.Errorf("max_age %s: %v", in, err)
			continue
		}
		if d, err := p.MaxAge.Duration(); err != nil || d != want {
			t.Errorf("max_age %s = %v, %v; want %v", in, d, err, want)
		}
	}
}

// TestAdmit: each condition of a policy, alone, denies with its code; all
// together, a passing chain is admitted.
func TestAdmit(t *testing.T) {
	const issuer = "https://releases.example/tutor"
	s := newSigner(t, issuer, "ed-1", jwa.EdDSA)
	raw := []byte(doc(s.chain(t, 3)))
	set, err := jwk.Parse(jwks(t, s.public))
	if err != nil {
		t.Fatal(err)
	}
	trust := Trust{Keys: map[string]jwk.Set{issuer: set}}
	rep := Verify(raw, trust)
	if !rep.OK {
		t.Fatalf("the chain does not verify: %s", problems(rep))
	}
	release, runtime := "sha256:"+strings.Repeat("ab", 32), "sha256:"+strings.Repeat("cd", 32)
	base := dectype.Policy{ID: "p", Issuer: issuer, ClientID: "tutor-app", ReleaseDigests: []string{release}, Method: "build-attestation",
		Purpose: "learning", RuntimeConfigDigests: []string{runtime}, MaxAge: "24h", RequireUnrevoked: true}
	now := t0.Add(time.Hour)
	cases := []struct {
		name   string
		edit   func(p *dectype.Policy, tr *Trust, now *time.Time, rep *dectype.Report)
		denied []string
	}{
		{"all pass", func(*dectype.Policy, *Trust, *time.Time, *dectype.Report) {}, nil},
		{"other issuer", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) { p.Issuer = "https://other.example" }, []string{dectype.CondIssuer}},
		{"other client", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) { p.ClientID = "coach-app" }, []string{dectype.CondClientID}},
		{"wrong release digest", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) {
			p.ReleaseDigests = []string{"sha256:" + strings.Repeat("00", 32)}
		}, []string{dectype.CondReleaseDigest}},
		{"other method", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) { p.Method = "source-review" }, []string{dectype.CondMethod}},
		{"other purpose", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) { p.Purpose = "tax" }, []string{dectype.CondPurpose}},
		{"other runtime", func(p *dectype.Policy, _ *Trust, _ *time.Time, _ *dectype.Report) {
			p.RuntimeConfigDigests = []string{"sha256:" + strings.Repeat("11", 32)}
		}, []string{dectype.CondRuntimeDigest}},
		{"stale", func(_ *dectype.Policy, _ *Trust, n *time.Time, _ *dectype.Report) { *n = t0.Add(48 * time.Hour) }, []string{dectype.CondMaxAge}},
		{"revoked key", func(_ *dectype.Policy, tr *Trust, _ *time.Time, _ *dectype.Report) {
			tr.Revoked = map[string][]dectype.Revocation{issuer: {{Kid: "ed-1", At: t0.Add(30 * time.Minute)}}}
		}, []string{dectype.CondRevoked}},
		{"not verified", func(_ *dectype.Policy, _ *Trust, _ *time.Time, r *dectype.Report) { r.OK = false }, []string{dectype.CondVerified}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, tr, n, r := base, trust, now, rep
			c.edit(&p, &tr, &n, &r)
			a := Admit(r, p, tr, n)
			var got []string
			for _, f := range a.Failed {
				got = append(got, f.Code)
			}
			want := "admit"
			if len(c.denied) > 0 {
				want = "deny"
			}
			if a.Decision != want || !reflect.DeepEqual(got, c.denied) || a.Policy != "p" || a.Head != rep.Head {
				raw, _ := json.Marshal(a)
				t.Fatalf("Admit = %s; want %s %v", raw, want, c.denied)
			}
		})
	}
}

// TestAdmitQualifiesByReleaseEntriesOnly: admission reads release, method,
// purpose and runtime only from release and qualification entries; run.*
// entries are evidence about a run, never a qualification (PHC draft §5).
func TestAdmitQualifiesByReleaseEntriesOnly(t *testing.T) {
	const issuer = "https://releases.example/tutor"
	s := newSigner(t, issuer, "ed-1", jwa.EdDSA)
	set, err := jwk.Parse(jwks(t, s.public))
	if err != nil {
		t.Fatal(err)
	}
	trust := Trust{Keys: map[string]jwk.Set{issuer: set}}
	released, ran := "sha256:"+strings.Repeat("ab", 32), "sha256:"+strings.Repeat("ef", 32)
	runtimeOK, runtimeRun := "sha256:"+strings.Repeat("cd", 32), "sha256:"+strings.Repeat("99", 32)
	// says edits a payload to state what a run did: another release, method,
	// purpose and runtime than the qualification.
	says := func(p map[string]any) {
		p["release"] = map[string]any{"name": "tutor", "version": "9.9.9", "digest": ran}
		p["method"], p["purpose"] = "self-report", "marketing"
		p["runtime"] = map[string]any{"config_digest": runtimeRun}
	}
	chain := func(types ...string) []byte {
		ps := payloads(s, len(types))
		for i, typ := range types {
			ps[i]["type"] = typ
			if typ != dectype.TypeRelease && typ != dectype.TypeQualification {
				says(ps[i])
			}
		}
		return []byte(doc(s.build(t, ps)))
	}
	policy := func(digest, method, purpose, runtime string) dectype.Policy {
		return dectype.Policy{ID: "p", Issuer: issuer, ClientID: "tutor-app", ReleaseDigests: []string{digest}, Method: method,
			Purpose: purpose, RuntimeConfigDigests: []string{runtime}}
	}
	asQualified := policy(released, "build-attestation", "learning", runtimeOK)
	asRun := policy(ran, "self-report", "marketing", runtimeRun)
	consentOnly := dectype.Policy{ID: "p", Issuer: issuer, ClientID: "tutor-app"}
	cases := []struct {
		name   string
		doc    []byte
		policy dectype.Policy
		denied []string
	}{
		{"release then runs: the release qualifies", chain(dectype.TypeRelease, dectype.TypeRunStart, dectype.TypeRunEnd), asQualified, nil},
		{"release then runs: what the runs say does not", chain(dectype.TypeRelease, dectype.TypeRunStart, dectype.TypeRunEnd), asRun,
			[]string{dectype.CondReleaseDigest, dectype.CondMethod, dectype.CondPurpose, dectype.CondRuntimeDigest}},
		{"qualification entry qualifies", chain(dectype.TypeQualification, dectype.TypeRunStep), asQualified, nil},
		{"runs only: nothing qualifies", chain(dectype.TypeRunStart, dectype.TypeRunStep, dectype.TypeRunEnd), asRun,
			[]string{dectype.CondQualification, dectype.CondReleaseDigest, dectype.CondMethod, dectype.CondPurpose, dectype.CondRuntimeDigest}},
		{"runs only, a policy of issuer and client", chain(dectype.TypeRunStart, dectype.TypeRunEnd), consentOnly, []string{dectype.CondQualification}},
		{"release only, a policy of issuer and client", chain(dectype.TypeRelease), consentOnly, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := Verify(c.doc, trust)
			if !rep.OK {
				t.Fatalf("the chain does not verify: %s", problems(rep))
			}
			a := Admit(rep, c.policy, trust, t0.Add(time.Hour))
			var got []string
			for _, f := range a.Failed {
				got = append(got, f.Code)
			}
			if !reflect.DeepEqual(got, c.denied) || (a.Decision == "admit") != (len(c.denied) == 0) {
				raw, _ := json.Marshal(a)
				t.Errorf("Admit = %s; want failed %v", raw, c.denied)
			}
		})
	}
}

// FuzzPolicyMaxAge: a policy's max_age, in any form, never panics the
// parser, and one it accepts is a positive duration.
func FuzzPolicyMaxAge(f *testing.F) {
	for _, s := range []string{`"720h"`, `"30d"`, `2592000`, `1.5`, `-1`, `"0d"`, `1e30`, `"9999999999d"`, `null`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, maxAge string) {
		raw := `{"id":"p","issuer":"https://releases.example/tutor","client_id":"tutor-app","max_age":` + maxAge + `}`
		p, err := ParsePolicy([]byte(raw))
		if err != nil || p.MaxAge == "" {
			return
		}
		if d, err := p.MaxAge.Duration(); err != nil || d <= 0 {
			t.Errorf("max_age %s accepted as %q = %v, %v", maxAge, p.MaxAge, d, err)
		}
	})
}
