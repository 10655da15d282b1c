package dec

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/dec/dectype"
)

// Service is the custodian's verifier: the package's functions over the
// data the custodian keeps (package dectype's types), for a core that must
// not import jwx (whose key package imports net/http).
type Service struct{}

// CheckKeys accepts a JWKS to pin: 1 to 64 public keys, each with a kid,
// each of a type an allowed algorithm verifies with.
func (Service) CheckKeys(keys dectype.JWKS) error {
	_, err := publicSet(keys)
	return err
}

func publicSet(raw dectype.JWKS) (jwk.Set, error) {
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
func TrustOf(pins []dectype.Pin) Trust {
	t := Trust{Keys: map[string]jwk.Set{}, Revoked: map[string][]dectype.Revocation{}}
	for _, p := range pins {
		if set, err := publicSet(p.JWKS); err == nil {
			t.Keys[p.Issuer] = set
			t.Revoked[p.Issuer] = p.Revoked
		}
	}
	return t
}

// CheckPolicy accepts a policy as the format allows it (as [ParsePolicy]
// checks a decoded one), of at most [dectype.MaxPolicyBytes] as JSON.
func (Service) CheckPolicy(p dectype.Policy) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil || buf.Len()-1 > dectype.MaxPolicyBytes {
		return errors.New("policy: too large")
	}
	return checkPolicy(p)
}

// Verify verifies doc against pins. It never fails: whatever doc holds,
// the report says what is wrong with it.
func (Service) Verify(doc dectype.RawDocument, pins []dectype.Pin) dectype.Report {
	return Verify(doc, TrustOf(pins))
}

// Admit verifies doc against pins and evaluates p, a policy CheckPolicy
// accepted, at now.
func (Service) Admit(doc dectype.RawDocument, p dectype.Policy, pins []dectype.Pin, now time.Time) dectype.Admission {
	trust := TrustOf(pins)
	return Admit(Verify(doc, trust), p, trust, now)
}
