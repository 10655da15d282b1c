// Package oidctoken verifies OIDC ID tokens for the custodian's trusted
// issuers with github.com/coreos/go-oidc/v3: discovery, the issuer's JWKS,
// signature (asymmetric algorithms only), issuer, audience and expiry. It
// reports every audience and the authorized party (azp), for the core to
// decide which clients it trusts. Anyone may send tokens that name a
// trusted issuer and a key it does not have: an issuer's keys are fetched
// again at most once per [KeyRefetchInterval], and its failed discovery
// tried again no more often.
//
// It lives apart from internal/identity because go-oidc fetches discovery
// documents and keys over HTTP, and the core, which uses identity, must not
// import net/http: the core sees only the Verify method.
package oidctoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/phc-project/phc/internal/identity"
)

// Algorithms are the signing algorithms accepted: asymmetric ones only, so
// that neither "none" nor an HMAC keyed with a public key ever verifies,
// whatever the issuer's discovery document lists.
var Algorithms = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// providerTTL is how long a discovered provider, and its key set, is
// reused before it is discovered again. Its key set fetches the keys again
// on an unknown kid, at most once per KeyRefetchInterval (keyFetcher).
const providerTTL = time.Hour

// Verifier verifies ID tokens. It is safe for concurrent use.
type Verifier struct {
	client *http.Client
	now    func() time.Time

	mu        sync.Mutex
	providers map[string]*issuerCache
}

// issuerCache is what is known of one issuer, under a lock of its own
// that one discovery holds: the others wait for it.
type issuerCache struct {
	mu sync.Mutex
	c  cachedProvider
}

// cachedProvider is an issuer's discovery and its key set, or the error
// its discovery failed with (retried after KeyRefetchInterval), as of at;
// zero before the first discovery.
type cachedProvider struct {
	p    *oidc.Provider
	keys oidc.KeySet
	err  error
	at   time.Time
}

// New returns a Verifier that fetches discovery documents and keys with
// client (nil: one with a 10 s timeout) and tells the time with now (nil:
// the system clock).
func New(client *http.Client, now func() time.Time) *Verifier {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{client: client, now: now, providers: map[string]*issuerCache{}}
}

// ErrUntrustedURL is returned for an issuer that is not https (plain http
// is allowed on loopback only).
var ErrUntrustedURL = errors.New("oidctoken: an issuer must be an https URL (http only on loopback)")

// CheckIssuerURL reports whether issuer may be trusted as a URL (see
// identity.ValidIssuerURL, the rule the trust list applies too).
func CheckIssuerURL(issuer string) error {
	if !identity.ValidIssuerURL(issuer) {
		return ErrUntrustedURL
	}
	return nil
}

// Verify checks raw as an ID token of issuer for audience (one of the
// token's audiences) and returns its subject, expiry, audiences and
// authorized party. Whether the other audiences and the authorized party
// are acceptable is the caller's decision.
func (v *Verifier) Verify(ctx context.Context, issuer, audience, raw string) (identity.IDToken, error) {
	if err := CheckIssuerURL(issuer); err != nil {
		return identity.IDToken{}, err
	}
	c, err := v.provider(ctx, issuer, false)
	if err != nil {
		return identity.IDToken{}, refused(discoveryClass(err), err)
	}
	tok, err := oidc.NewVerifier(issuer, c.keys, &oidc.Config{ClientID: audience, SupportedSigningAlgs: Algorithms, Now: v.now}).Verify(ctx, raw)
	if err != nil {
		return identity.IDToken{}, refused(verifyClass(err), fmt.Errorf("oidctoken: %w", err))
	}
	if tok.Subject == "" {
		return identity.IDToken{}, refused(identity.RefusedMalformed, errors.New("oidctoken: the token has no subject"))
	}
	var extra struct {
		AZP *string `json:"azp"`
	}
	if err := tok.Claims(&extra); err != nil {
		return identity.IDToken{}, refused(identity.RefusedMalformed, fmt.Errorf("oidctoken: claims: %w", err))
	}
	if extra.AZP != nil && *extra.AZP == "" {
		return identity.IDToken{}, refused(identity.RefusedMalformed, errors.New("oidctoken: the token's azp is empty"))
	}
	out := identity.IDToken{Subject: tok.Subject, Expiry: tok.Expiry, Audience: tok.Audience}
	if extra.AZP != nil {
		out.AuthorizedParty = *extra.AZP
	}
	return out, nil
}

// provider is issuer's discovery and key set: the one cached for it, if
// discovered less than providerTTL ago, else discovered anew. A failed
// discovery is remembered too, and, when retryFailed is false, answered
// again for KeyRefetchInterval rather than tried again: every token of an
// issuer that cannot be discovered would otherwise fetch its document.
func (v *Verifier) provider(ctx context.Context, issuer string, retryFailed bool) (cachedProvider, error) {
	v.mu.Lock()
	ic := v.providers[issuer]
	if ic == nil {
		ic = &issuerCache{}
		v.providers[issuer] = ic
	}
	v.mu.Unlock()
	ic.mu.Lock()
	defer ic.mu.Unlock()
	now, c := v.now(), ic.c
	switch {
	case c.at.IsZero() || now.Before(c.at):
	case c.err == nil && now.Sub(c.at) < providerTTL:
		return c, nil
	case c.err != nil && !retryFailed && now.Sub(c.at) < KeyRefetchInterval:
		return c, c.err
	}
	c = v.discover(ctx, issuer)
	c.at = now
	ic.c = c
	return c, c.err
}

// discover fetches issuer's discovery document and sets up its key set,
// whose fetches keyFetcher bounds.
func (v *Verifier) discover(ctx context.Context, issuer string) cachedProvider {
	// Discovery outlives the request that caused it: its key set is cached.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), v.client), issuer)
	if err != nil {
		return cachedProvider{err: fmt.Errorf("oidctoken: discovery: %w", err)}
	}
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil {
		return cachedProvider{err: fmt.Errorf("oidctoken: discovery: %w", err)}
	}
	keys := &http.Client{Transport: &keyFetcher{client: v.client, now: v.now}}
	return cachedProvider{p: p, keys: oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), keys), doc.JWKSURI)}
}

func refused(class string, err error) error { return &identity.IDTokenError{Class: class, Err: err} }

// discoveryClass classes a failed discovery: the issuer's document names
// another issuer (a trailing /, localhost for 127.0.0.1), or it could not
// be read at all.
func discoveryClass(err error) string {
	if _, ok := errors.AsType[*oidc.IssuerMismatchError](err); ok {
		return identity.RefusedIssuerMismatch
	}
	return identity.RefusedUnreachable
}

// verifyClass classes go-oidc's refusal of a token. go-oidc gives types
// for an expired token only, so the rest is told by its messages; what is
// not recognised is "invalid", never a wrong class.
func verifyClass(err error) string {
	if _, ok := errors.AsType[*oidc.TokenExpiredError](err); ok {
		return identity.RefusedExpired
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "fetching keys"), strings.Contains(msg, "get keys failed"):
		return identity.RefusedUnreachable
	case strings.Contains(msg, "expected audience"):
		return identity.RefusedWrongAudience
	case strings.Contains(msg, "issued by a different provider"):
		return identity.RefusedIssuerMismatch
	case strings.Contains(msg, "before the nbf"):
		return identity.RefusedExpired
	case strings.Contains(msg, "signature"), strings.Contains(msg, "unsupported algorithm"), strings.Contains(msg, "not signed"):
		return identity.RefusedBadSignature
	case strings.Contains(msg, "malformed jwt"), strings.Contains(msg, "unmarshal claims"):
		return identity.RefusedMalformed
	}
	return identity.RefusedInvalid
}

// discoveryTimeout bounds the discovery that trusting an issuer makes.
const discoveryTimeout = 5 * time.Second

// Discover fetches issuer's discovery document and key set, for the owner
// to see what trusting it means. An error is an *identity.IDTokenError of
// class issuer_unreachable or issuer_mismatch.
func (v *Verifier) Discover(ctx context.Context, issuer string) (identity.Discovery, error) {
	if err := CheckIssuerURL(issuer); err != nil {
		return identity.Discovery{}, refused(identity.RefusedInvalid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	// The owner asks: a discovery that failed is tried again at once.
	c, err := v.provider(ctx, issuer, true)
	if err != nil {
		return identity.Discovery{}, refused(discoveryClass(err), err)
	}
	p := c.p
	var doc struct {
		JWKSURI    string   `json:"jwks_uri"`
		Algorithms []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&doc); err != nil {
		return identity.Discovery{}, refused(identity.RefusedUnreachable, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc.JWKSURI, nil)
	if err != nil {
		return identity.Discovery{}, refused(identity.RefusedUnreachable, err)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return identity.Discovery{}, refused(identity.RefusedUnreachable, fmt.Errorf("oidctoken: keys: %w", err))
	}
	defer resp.Body.Close()
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set) != nil {
		return identity.Discovery{}, refused(identity.RefusedUnreachable, fmt.Errorf("oidctoken: keys: %s answered %s", doc.JWKSURI, resp.Status))
	}
	return identity.Discovery{Issuer: issuer, JWKSURI: doc.JWKSURI, Keys: len(set.Keys), Algorithms: doc.Algorithms}, nil
}
