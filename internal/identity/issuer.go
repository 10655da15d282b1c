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
