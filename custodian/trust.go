package custodian

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/internal/identity"
)

// IDTokenVerifier checks an OIDC ID token for one trusted issuer and
// audience — discovery, keys, signature, issuer, audience, expiry — and
// returns its subject and expiry. internal/identity/oidctoken implements it
// with go-oidc; the core never fetches anything itself.
type IDTokenVerifier interface {
	Verify(ctx context.Context, issuer, audience, rawIDToken string) (subject string, expiry time.Time, err error)
}

const bucketTrust = "trust" // iss_… → TrustedIssuer

// TrustedIssuer is an OIDC issuer on the owner's trust list, with the
// audience its ID tokens must name (this custodian's client id there).
type TrustedIssuer struct {
	ID        string    `json:"id"`
	Issuer    string    `json:"issuer"`
	Audience  string    `json:"audience"`
	CreatedAt time.Time `json:"created_at"`
	Revision  uint64    `json:"revision"`
}

// TrustInput is the body of POST /phc/v1/trust.
type TrustInput struct {
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
}

// AddTrust puts an issuer on the trust list (owner only). One issuer and
// audience pair is listed once (KindConflict).
func (s *Service) AddTrust(ctx context.Context, p Principal, raw []byte) (TrustedIssuer, error) {
	const op = "trust.add"
	if err := requireOwner(op, p); err != nil {
		return TrustedIssuer{}, err
	}
	var in TrustInput
	if err := decodeStrict(op, raw, &in); err != nil {
		return TrustedIssuer{}, err
	}
	if !identity.ValidIssuerURL(in.Issuer) {
		return TrustedIssuer{}, fail(op, KindInvalid, "issuer must be an https URL (http only on loopback), without query or fragment")
	}
	if in.Audience == "" || len(in.Audience) > 256 || !utf8.ValidString(in.Audience) {
		return TrustedIssuer{}, fail(op, KindInvalid, "audience is required: at most 256 bytes")
	}
	var out TrustedIssuer
	err := s.write(op, p, func(st *state, b *batch) error {
		for _, t := range st.trust {
			if t.Issuer == in.Issuer && t.Audience == in.Audience {
				return fail(op, KindConflict, "this issuer and audience are trusted already")
			}
		}
		id, err := identity.NewID("iss_")
		if err != nil {
			return wrap(op, KindInternal, err)
		}
		t := &TrustedIssuer{ID: id, Issuer: in.Issuer, Audience: in.Audience, CreatedAt: b.now, Revision: b.nextRevision()}
		st.trust[id] = t
		b.put(bucketTrust, id, t)
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: t.Revision})
		out = *t
		return nil
	})
	return out, err
}

// ListTrust returns the trust list, oldest first (owner only).
func (s *Service) ListTrust(ctx context.Context, p Principal) ([]TrustedIssuer, error) {
	return ownerRead(s, "trust.list", p, func(st *state) ([]TrustedIssuer, error) {
		out := make([]TrustedIssuer, 0, len(st.trust))
		for _, t := range st.trust {
			out = append(out, *t)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
		return out, nil
	})
}

// RemoveTrust takes an issuer off the trust list (owner only): from the
// returned revision on, every token exchanged for its ID tokens is dead.
func (s *Service) RemoveTrust(ctx context.Context, p Principal, id string) (uint64, error) {
	const op = "trust.remove"
	if err := requireOwner(op, p); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "iss_") {
		return 0, fail(op, KindInvalid, "malformed trust id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.trust[id]; !ok {
			return notFound(op)
		}
		delete(st.trust, id)
		b.del(bucketTrust, id)
		rev = b.nextRevision()
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: rev})
		return nil
	})
	return rev, err
}

// trustedIssuer reports whether an issuer is on the trust list.
func (st *state) trustedIssuer(issuer string) bool {
	for _, t := range st.trust {
		if t.Issuer == issuer {
			return true
		}
	}
	return false
}

// OIDCRecipient is the name an OIDC recipient goes by in receipts, rate
// limits and token records: "oidc:" + issuer + "#" + subject. No consumer
// name can take this form (a colon is not allowed in one).
func OIDCRecipient(issuer, subject string) string { return "oidc:" + issuer + "#" + subject }

// recipientName is the name a grant's recipient goes by.
func (r Recipient) name() string {
	if r.Kind == "oidc" {
		return OIDCRecipient(r.Issuer, r.ID)
	}
	return r.ID
}

// RFC 8693 token exchange.
const (
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"

	maxIDToken      = 16 << 10
	exchangedTTL    = 15 * time.Minute
	maxExchangedTTL = time.Hour
)

// Exchanged is the RFC 8693 answer of POST /phc/v1/token.
type Exchanged struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope"`
	Mode            string `json:"mode"`
	Revision        uint64 `json:"revision"`
}

// ExchangeToken takes an RFC 8693 token-exchange request (form-encoded:
// grant_type, subject_token — an OIDC ID token —, subject_token_type, and
// optionally scope, space-separated key patterns, default "*", and mode,
// read by default) and returns a short-lived ctxs_ token for the token's
// subject. The token must come from an issuer on the trust list and verify
// (see IDTokenVerifier); every failure of it is KindUnauthenticated, the
// same answer whatever failed. What the token may read is, as for every
// recipient, its scope ∩ the grants naming {kind: oidc, issuer, id: sub}.
func (s *Service) ExchangeToken(ctx context.Context, raw []byte) (Exchanged, error) {
	const op = "token.exchange"
	if len(raw) > maxIDToken+4096 {
		return Exchanged{}, fail(op, KindTooLarge, "")
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return Exchanged{}, fail(op, KindInvalid, "the body must be form-encoded (RFC 8693)")
	}
	for k, v := range form {
		if len(v) != 1 {
			return Exchanged{}, fail(op, KindInvalid, "a parameter is repeated")
		}
		switch k {
		case "grant_type", "subject_token", "subject_token_type", "scope", "mode", "audience", "resource", "requested_token_type":
		default:
			return Exchanged{}, fail(op, KindInvalid, "unknown parameter")
		}
	}
	if form.Get("grant_type") != grantTypeTokenExchange {
		return Exchanged{}, fail(op, KindInvalid, "grant_type must be "+grantTypeTokenExchange)
	}
	if form.Get("subject_token_type") != tokenTypeIDToken {
		return Exchanged{}, fail(op, KindInvalid, "subject_token_type must be "+tokenTypeIDToken)
	}
	if rt := form.Get("requested_token_type"); rt != "" && rt != tokenTypeAccessToken {
		return Exchanged{}, fail(op, KindInvalid, "requested_token_type must be "+tokenTypeAccessToken)
	}
	idToken := form.Get("subject_token")
	if idToken == "" || len(idToken) > maxIDToken {
		return Exchanged{}, fail(op, KindUnauthenticated, "")
	}
	scopeText := form.Get("scope")
	if scopeText == "" {
		scopeText = "*"
	}
	scope, err := parseScope(strings.ReplaceAll(scopeText, " ", ","))
	if err != nil {
		return Exchanged{}, err
	}
	mode := form.Get("mode")
	switch mode {
	case "":
		mode = ModeRead
	case ModeRead, ModeWrite, ModeReadWrite:
	default:
		return Exchanged{}, fail(op, KindInvalid, "mode must be read, write or read-write")
	}
	if s.oidc == nil {
		return Exchanged{}, fail(op, KindUnauthenticated, "")
	}
	if wait := s.exchangeFailures.wait("", s.clock.Now()); wait > 0 {
		return Exchanged{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	// The issuer is read from the token only to pick the trust entries to
	// verify it against; nothing else of it counts before it verifies.
	issuer := unverifiedIssuer(idToken)
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return Exchanged{}, err
	}
	st.mu.RLock()
	var candidates []TrustedIssuer
	for _, t := range st.trust {
		if t.Issuer == issuer {
			candidates = append(candidates, *t)
		}
	}
	st.mu.RUnlock()
	// Verification fetches the issuer's discovery document and keys: never
	// while holding the lock state, which a lock or unlock waits for.
	release()
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	var trust TrustedIssuer
	var sub string
	var exp time.Time
	for _, c := range candidates {
		if sub, exp, err = s.oidc.Verify(ctx, c.Issuer, c.Audience, idToken); err == nil {
			trust = c
			break
		}
	}
	if trust.ID == "" || len(sub) > 255 || !utf8.ValidString(sub) {
		s.exchangeFailures.note("", s.clock.Now())
		s.log.Debug("token exchange refused", "err", err)
		return Exchanged{}, fail(op, KindUnauthenticated, "")
	}
	st, release, err = s.enter(op, Principal{})
	if err != nil {
		return Exchanged{}, err
	}
	defer release()
	token, err := identity.NewToken(identity.ServicePrefix)
	if err != nil {
		return Exchanged{}, wrap(op, KindInternal, err)
	}
	id, err := identity.NewID("tok_")
	if err != nil {
		return Exchanged{}, wrap(op, KindInternal, err)
	}
	name := OIDCRecipient(trust.Issuer, sub)
	var out Exchanged
	err = s.commit(st, func(st *state, b *batch) error {
		if _, ok := st.trust[trust.ID]; !ok {
			return fail(op, KindUnauthenticated, "")
		}
		ttl := min(exchangedTTL, exp.Sub(b.now))
		if ttl <= 0 {
			return fail(op, KindUnauthenticated, "")
		}
		if err := st.tooManyTokens(op, name, b.now); err != nil {
			return err
		}
		t := newToken(id, token)
		t.Consumer, t.Scope, t.Mode, t.Trust = name, scope, mode, trust.ID
		t.CreatedAt, t.ExpiresAt = b.now, b.now.Add(min(ttl, maxExchangedTTL))
		st.putToken(b, t)
		rev := b.nextRevision()
		b.receipt(Receipt{Actor: "oidc:" + trust.ID, Operation: op, Recipient: name, Decision: "allow", Records: []string{id, trust.ID}, Revision: rev})
		out = Exchanged{AccessToken: token, IssuedTokenType: tokenTypeAccessToken, TokenType: "Bearer",
			ExpiresIn: int64(t.ExpiresAt.Sub(b.now) / time.Second), Scope: strings.Join(scope, " "), Mode: mode, Revision: rev}
		return nil
	})
	return out, err
}

// unverifiedIssuer reads the iss claim of a compact JWS without verifying
// anything ("" when it cannot).
func unverifiedIssuer(jws string) string {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 || len(parts[1]) > maxIDToken {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(payload, &claims) != nil || len(claims.Iss) > 512 {
		return ""
	}
	return claims.Iss
}
