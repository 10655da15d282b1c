package model

import (
	"time"

	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/oidcrecipient"
)

// VerifiedIDToken is what an [IDTokenVerifier] vouches for in an ID token
// that verified: its subject, expiry, every audience and the authorized
// party (azp) if it names one.
type VerifiedIDToken = identity.IDToken

// TrustedIssuer is an OIDC issuer on the owner's trust list, with the
// audience its ID tokens must name (this custodian's client id there) and
// the other clients of that issuer whose ID tokens are accepted too.
//
// An ID token is accepted only when every one of its audiences, and its
// authorized party (azp) if it names one, is Audience or one of
// AuthorizedParties; a token with several audiences must name its
// authorized party (OpenID Connect Core 1.0 §2, §3.1.3.7).
type TrustedIssuer struct {
	ID                string    `json:"id"`
	Issuer            string    `json:"issuer"`
	Audience          string    `json:"audience"`
	AuthorizedParties []string  `json:"authorized_parties,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	Revision          uint64    `json:"revision"`
}

// Accepts applies the audience and authorized-party rules (see
// [TrustedIssuer]) to a token that verified for t.
func (t *TrustedIssuer) Accepts(tok VerifiedIDToken) bool {
	return oidcrecipient.Clients{Audience: t.Audience, AuthorizedParties: t.AuthorizedParties}.Accept(tok)
}

// OIDCRecipient is the name an OIDC recipient goes by in receipts, rate
// limits and token records: "oidc:" + issuer + "#" + subject. No consumer
// name can take this form (a colon is not allowed in one).
func OIDCRecipient(issuer, subject string) string { return oidcrecipient.Name(issuer, subject) }

// recipientName is the name a grant's recipient goes by.
func (r Recipient) Name() string {
	if r.Kind == "oidc" {
		return OIDCRecipient(r.Issuer, r.ID)
	}
	return r.ID
}

// DECIssuer is one issuer's pinned public keys and revocations.
type DECIssuer struct {
	Issuer   string               `json:"issuer"`
	JWKS     dectype.JWKS         `json:"jwks"`
	Revoked  []dectype.Revocation `json:"revoked,omitempty"`
	PinnedAt time.Time            `json:"pinned_at"`
	Revision uint64               `json:"revision"`
}

// DECPolicy is an admission policy as stored: its id and the policy.
type DECPolicy struct {
	ID       string         `json:"id"`
	Policy   dectype.Policy `json:"policy"`
	Revision uint64         `json:"revision"`
}

// Presentation is a DEC document a recipient presented, bound to the token
// it presented it with and to the recipient the chain is about.
type Presentation struct {
	Token       string              `json:"token"`
	Document    dectype.RawDocument `json:"document"` // base64 in the store
	PresentedAt time.Time           `json:"presented_at"`
	// Subject is the chain's subject, which was the presenting recipient's
	// identity when it was presented (see presenterSubject).
	Subject *dectype.Subject `json:"subject,omitempty"`
}
