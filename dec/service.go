package dec

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
)

// Pin is one issuer's pinned keys and revocations, as the custodian stores
// them.
type Pin struct {
	Issuer  string          `json:"issuer"`
	JWKS    json.RawMessage `json:"jwks"`
	Revoked []Revocation    `json:"revoked,omitempty"`
}

// Service is the custodian's verifier: the package's functions over data
// the custodian keeps (JSON), for a core that must not import jwx (whose
// key package imports net/http).
type Service struct{}

// CheckKeys accepts a JWKS to pin: 1 to 64 public keys, each with a kid,
// each of a type an allowed algorithm verifies with.
func (Service) CheckKeys(raw json.RawMessage) error {
	_, err := publicSet(raw)
	return err
}

func publicSet(raw json.RawMessage) (jwk.Set, error) {
	set, err := jwk.Parse(raw)
	if err != nil {
		return nil, errors.New("not a JWKS")
	}
	if set.Len() == 0 || set.Len() > 64 {
		return nil, errors.New("a JWKS of 1 to 64 keys")
	}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		if k.KeyID() == "" {
			return nil, errors.New("every key needs a kid")
		}
		fits := false
		for _, f := range allowedAlgs {
			fits = fits || f(k)
		}
		if !fits {
			return nil, errors.New("only public Ed25519 (EdDSA) and P-256 (ES256) keys are pinned")
		}
	}
	return set, nil
}

// TrustOf builds a Trust from pins; a pin whose keys do not parse pins
// nothing.
func TrustOf(pins []Pin) Trust {
	t := Trust{Keys: map[string]jwk.Set{}, Revoked: map[string][]Revocation{}}
	for _, p := range pins {
		if set, err := publicSet(p.JWKS); err == nil {
			t.Keys[p.Issuer] = set
			t.Revoked[p.Issuer] = p.Revoked
		}
	}
	return t
}

// CheckPolicy parses a policy strictly and returns it as JSON and its id.
func (Service) CheckPolicy(raw []byte) (json.RawMessage, string, error) {
	p, err := ParsePolicy(raw)
	if err != nil {
		return nil, "", err
	}
	out, _ := json.Marshal(p)
	return out, p.ID, nil
}

// pinsOf reads pins as the custodian hands them: a JSON array of Pin.
func pinsOf(raw json.RawMessage) []Pin {
	var pins []Pin
	_ = json.Unmarshal(raw, &pins)
	return pins
}

// Verify verifies doc against pins (a JSON array of Pin): the report as
// JSON, whether all three verdicts pass, and the chain head.
func (Service) Verify(doc []byte, pins json.RawMessage) (json.RawMessage, bool, string) {
	rep := Verify(doc, TrustOf(pinsOf(pins)))
	raw, _ := json.Marshal(rep)
	return raw, rep.OK, rep.Head
}

// Admit verifies doc against pins and evaluates policy (as CheckPolicy
// returned it) at now: the admission as JSON, whether it admits, the codes
// of its failed conditions, and the chain head.
func (Service) Admit(doc []byte, policy json.RawMessage, pins json.RawMessage, now time.Time) (json.RawMessage, bool, []string, string) {
	var p Policy
	if err := json.Unmarshal(policy, &p); err != nil {
		a := Admission{Decision: "deny", Failed: []Condition{{Code: CondVerified, Detail: "the policy is unreadable"}}}
		raw, _ := json.Marshal(a)
		return raw, false, []string{CondVerified}, ""
	}
	trust := TrustOf(pinsOf(pins))
	a := Admit(Verify(doc, trust), p, trust, now)
	codes := make([]string, len(a.Failed))
	for i, f := range a.Failed {
		codes[i] = f.Code
	}
	raw, _ := json.Marshal(a)
	return raw, a.Decision == "admit", codes, a.Head
}
