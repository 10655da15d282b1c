package oidcrecipient

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/phc-project/phc/internal/identity"
)

// RFC 8693 token exchange.
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"

	// MaxIDToken bounds the ID token of an exchange, and MaxForm its body.
	MaxIDToken = 16 << 10
	MaxForm    = MaxIDToken + 4096
)

// Request is a token-exchange request: its parameters as sent, "" where
// one is missing.
type Request struct {
	GrantType          string
	SubjectToken       string
	SubjectTokenType   string
	Scope              string
	Mode               string
	Audience           string
	Resource           string
	RequestedTokenType string
}

// Error is why an exchange request is refused before its token is looked
// at: TooLarge for a body over [MaxForm], else Msg says what is wrong.
type Error struct {
	TooLarge bool
	Msg      string
}

func (e *Error) Error() string {
	if e.TooLarge {
		return "the token request is too large"
	}
	return e.Msg
}

func invalid(msg string) *Error { return &Error{Msg: msg} }

// ParseForm reads a token-exchange body: form-encoded, at most [MaxForm]
// bytes, each parameter once and none but those of [Request]. A refusal
// is an [*Error].
func ParseForm(raw []byte) (Request, error) {
	if len(raw) > MaxForm {
		return Request{}, &Error{TooLarge: true}
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return Request{}, invalid("the body must be form-encoded (RFC 8693)")
	}
	for k, v := range form {
		if len(v) != 1 {
			return Request{}, invalid("a parameter is repeated")
		}
		switch k {
		case "grant_type", "subject_token", "subject_token_type", "scope", "mode", "audience", "resource", "requested_token_type":
		default:
			return Request{}, invalid("unknown parameter")
		}
	}
	return Request{GrantType: form.Get("grant_type"), SubjectToken: form.Get("subject_token"),
		SubjectTokenType: form.Get("subject_token_type"), Scope: form.Get("scope"), Mode: form.Get("mode"),
		Audience: form.Get("audience"), Resource: form.Get("resource"), RequestedTokenType: form.Get("requested_token_type")}, nil
}

// size is the bytes of r's parameters.
func (r Request) size() int {
	return len(r.GrantType) + len(r.SubjectToken) + len(r.SubjectTokenType) + len(r.Scope) + len(r.Mode) +
		len(r.Audience) + len(r.Resource) + len(r.RequestedTokenType)
}

// Check holds r to the values of a token exchange: at most [MaxForm]
// bytes of parameters, the grant type, an ID token as the subject token
// and, if it names one, an access token as the requested token type. The
// subject token itself, scope and mode are the caller's to judge. A
// refusal is an [*Error].
func (r Request) Check() error {
	switch {
	case r.size() > MaxForm:
		return &Error{TooLarge: true}
	case r.GrantType != GrantTypeTokenExchange:
		return invalid("grant_type must be " + GrantTypeTokenExchange)
	case r.SubjectTokenType != TokenTypeIDToken:
		return invalid("subject_token_type must be " + TokenTypeIDToken)
	case r.RequestedTokenType != "" && r.RequestedTokenType != TokenTypeAccessToken:
		return invalid("requested_token_type must be " + TokenTypeAccessToken)
	}
	return nil
}

// Name is the name an OIDC recipient goes by in receipts, rate limits
// and token records: "oidc:" + issuer + "#" + subject. No consumer name
// can take this form (a colon is not allowed in one).
func Name(issuer, subject string) string { return "oidc:" + issuer + "#" + subject }

// UnverifiedIssuerSubject reads the iss and sub claims of a compact JWS
// without verifying anything: both "" when it cannot, or when either is
// missing, not a string or too long. Only what to verify the token
// against may depend on them.
func UnverifiedIssuerSubject(jws string) (issuer, subject string) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 || len(parts[1]) > MaxIDToken {
		return "", ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", ""
	}
	var claims struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil || len(claims.Iss) > 512 || len(claims.Sub) > 255 ||
		!utf8.ValidString(claims.Iss) || !utf8.ValidString(claims.Sub) {
		return "", ""
	}
	if claims.Iss == "" || claims.Sub == "" {
		return "", ""
	}
	return claims.Iss, claims.Sub
}

// ValidClientID reports whether id may name a client of an issuer.
func ValidClientID(id string) bool {
	return id != "" && len(id) <= 256 && utf8.ValidString(id)
}

// Clients are the clients of one issuer whose ID tokens a trust entry
// accepts: its audience (this custodian's client id there) and other
// authorized parties.
type Clients struct {
	Audience          string
	AuthorizedParties []string
}

func (c Clients) trusts(client string) bool {
	return client == c.Audience || slices.Contains(c.AuthorizedParties, client)
}

// Accept applies the audience and authorized-party rules to a token that
// verified for c.Audience: every one of its audiences, and its authorized
// party (azp) if it names one, is a client c trusts; a token with several
// audiences must name its authorized party (OpenID Connect Core 1.0 §2,
// §3.1.3.7), and one without names c.Audience alone.
func (c Clients) Accept(tok identity.IDToken) bool {
	for _, a := range tok.Audience {
		if !c.trusts(a) {
			return false
		}
	}
	if tok.AuthorizedParty == "" {
		return len(tok.Audience) == 1 && tok.Audience[0] == c.Audience
	}
	return c.trusts(tok.AuthorizedParty)
}

// ErrUntrustedClient is why a token that verified is refused: one of its
// audiences or its authorized party is not a client the trust entry names.
var ErrUntrustedClient = errors.New("the token's audiences or authorized party name a client that is not trusted")

// RefusalClass is why an exchange was refused (identity.Refused…): the
// custodian's own reasons first — no issuer and subject claimed, no trust
// entry for the issuer (candidates is how many there are), a token that
// verified with an unusable subject — then the verifier's class of err.
func RefusalClass(issuer, sub string, candidates int, verified bool, err error) string {
	switch {
	case issuer == "" || sub == "":
		return identity.RefusedMalformed
	case candidates == 0:
		return identity.RefusedUnknownIssuer
	case verified:
		return identity.RefusedMalformed // it verified, but its subject is unusable
	case errors.Is(err, ErrUntrustedClient):
		return identity.RefusedUntrustedClient
	}
	if e, ok := errors.AsType[*identity.IDTokenError](err); ok {
		return e.Class
	}
	return identity.RefusedInvalid
}

// DiscoveryWarning says in words why the discovery of issuer failed with
// err (an *identity.IDTokenError whose class says what failed).
func DiscoveryWarning(issuer string, err error) string {
	issuer = strings.TrimSuffix(issuer, "/")
	class := identity.RefusedUnreachable
	if e, ok := errors.AsType[*identity.IDTokenError](err); ok {
		class = e.Class
	}
	if class == identity.RefusedIssuerMismatch {
		return "the discovery document at " + issuer + "/.well-known/openid-configuration names another issuer: trust exactly the issuer its tokens name (mind a trailing / and localhost against 127.0.0.1); its tokens will be refused until then"
	}
	return "could not read " + issuer + "/.well-known/openid-configuration or its keys (" + class + "): check the URL; tokens of this issuer are refused while it cannot be reached"
}
