package identity

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// ValidIssuerURL reports whether s may name a trusted OIDC issuer: an https
// URL, or http on loopback (a local issuer); no user info, query or
// fragment; at most 512 bytes of UTF-8. "https://idp#" and "https://idp?"
// parse with an empty fragment or query and are refused too, so that an
// issuer is one string, and "oidc:" + issuer + "#" + sub one recipient.
func ValidIssuerURL(s string) bool {
	if len(s) > 512 || !utf8.ValidString(s) || strings.ContainsAny(s, "#?") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "::1" || h == "localhost"
	}
	return false
}

// IDToken is what a verifier vouches for in an OIDC ID token that verified
// (signature, issuer, expiry, and one expected audience among its own).
type IDToken struct {
	Subject         string    // sub, never empty
	Expiry          time.Time // exp
	Audience        []string  // aud: every audience the token names
	AuthorizedParty string    // azp: the client it was issued to; "" when absent
}

// Why an OIDC ID token was refused: the class the owner is told (in the
// log and the receipt), never the token.
const (
	RefusedUnknownIssuer   = "unknown_issuer"     // no trust entry names the token's iss
	RefusedUnreachable     = "issuer_unreachable" // the issuer's discovery document or keys could not be fetched
	RefusedIssuerMismatch  = "issuer_mismatch"    // the issuer's discovery, or the token, names another issuer
	RefusedBadSignature    = "bad_signature"      // no key of the issuer verifies it, or a refused algorithm
	RefusedExpired         = "expired"            // past its exp, or before its nbf
	RefusedWrongAudience   = "wrong_audience"     // the trusted audience is not among its own
	RefusedUntrustedClient = "untrusted_client"   // another audience, or its azp, is a client not trusted
	RefusedMalformed       = "malformed"          // not a JWT, no iss or sub, or an unusable subject
	RefusedInvalid         = "invalid"            // anything else
)

// IDTokenError is a verifier's refusal of an ID token, with its class.
type IDTokenError struct {
	Class string
	Err   error
}

func (e *IDTokenError) Error() string { return e.Class + ": " + e.Err.Error() }
func (e *IDTokenError) Unwrap() error { return e.Err }

// Discovery is what an issuer's discovery document and key set say, as
// shown to the owner when it is trusted.
type Discovery struct {
	Issuer     string   `json:"issuer"`
	JWKSURI    string   `json:"jwks_uri"`
	Keys       int      `json:"keys"`
	Algorithms []string `json:"id_token_signing_alg_values_supported,omitempty"`
}
