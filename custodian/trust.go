package custodian

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/oidcrecipient"
)

// IDTokenVerifier checks an OIDC ID token for one trusted issuer and
// audience — discovery, keys, signature, issuer, that audience is among the
// token's, expiry — and returns the claims the core decides on.
// internal/identity/oidctoken implements it with go-oidc; the core never
// fetches anything itself. Which other audiences and which authorized party
// are acceptable is the core's decision, not the verifier's.
type IDTokenVerifier interface {
	Verify(ctx context.Context, issuer, audience, rawIDToken string) (VerifiedIDToken, error)
}

// maxAuthorizedParties bounds the additional clients of one trust entry.
const maxAuthorizedParties = 16

// AddTrust puts an issuer on the trust list (owner only). One issuer and
// audience pair is listed once (KindConflict).
func (s *Service) AddTrust(ctx context.Context, p Principal, in TrustInput) (TrustAdded, error) {
	const op = "trust.add"
	if err := p.RequireOwner(op); err != nil {
		return TrustAdded{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return TrustAdded{}, err
	}
	if !identity.ValidIssuerURL(in.Issuer) {
		return TrustAdded{}, model.Fail(op, KindInvalid, "issuer must be an https URL (http only on loopback), without query or fragment")
	}
	if !oidcrecipient.ValidClientID(in.Audience) {
		return TrustAdded{}, model.Fail(op, KindInvalid, "audience is required: at most 256 bytes")
	}
	if len(in.AuthorizedParties) > maxAuthorizedParties {
		return TrustAdded{}, model.Fail(op, KindInvalid, "at most 16 authorized parties")
	}
	for i, c := range in.AuthorizedParties {
		if !oidcrecipient.ValidClientID(c) || c == in.Audience || slices.Contains(in.AuthorizedParties[:i], c) {
			return TrustAdded{}, model.Fail(op, KindInvalid, "an authorized party is a client id of at most 256 bytes, listed once, other than the audience")
		}
	}
	if len(in.AuthorizedParties) == 0 {
		in.AuthorizedParties = nil
	}
	// What the issuer says of itself, fetched before anything is locked:
	// shown to the owner, or, when it cannot be read, a warning saying why.
	var out TrustAdded
	if d, ok := s.oidc.(IssuerDiscoverer); ok {
		disc, err := d.Discover(ctx, in.Issuer)
		if err != nil {
			out.Warnings = append(out.Warnings, oidcrecipient.DiscoveryWarning(in.Issuer, err))
		} else {
			out.Discovery = &disc
		}
	}
	err := s.write(op, p, func(st *state, b *batch) error {
		for _, t := range st.Trust {
			if t.Issuer == in.Issuer && t.Audience == in.Audience {
				return model.Fail(op, KindConflict, "this issuer and audience are trusted already")
			}
		}
		id, err := identity.NewID("iss_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		t := &TrustedIssuer{ID: id, Issuer: in.Issuer, Audience: in.Audience, AuthorizedParties: in.AuthorizedParties,
			CreatedAt: b.Now, Revision: b.NextRevision()}
		st.Trust[id] = t
		b.Put(engine.BucketTrust, id, t)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: t.Revision})
		out.TrustedIssuer = *t
		return nil
	})
	return out, err
}

// IssuerDiscoverer is the optional capability of an [IDTokenVerifier] to
// fetch an issuer's discovery document and keys when the owner trusts it.
// An error is an *identity.IDTokenError whose class says what failed.
type IssuerDiscoverer interface {
	Discover(ctx context.Context, issuer string) (identity.Discovery, error)
}

// ListTrust returns the trust list, oldest first (owner only).
func (s *Service) ListTrust(ctx context.Context, p Principal) ([]TrustedIssuer, error) {
	return ownerRead(s, "trust.list", p, func(st *state) ([]TrustedIssuer, error) {
		out := make([]TrustedIssuer, 0, len(st.Trust))
		for _, t := range st.Trust {
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
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !identity.ValidID(id, "iss_") {
		return 0, model.Fail(op, KindInvalid, "malformed trust id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		if _, ok := st.Trust[id]; !ok {
			return model.NotFound(op)
		}
		delete(st.Trust, id)
		admission.PurgePresentations(st.view, b) // its recipients' tokens are dead
		b.Del(engine.BucketTrust, id)
		rev = b.NextRevision()
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: rev})
		return nil
	})
	return rev, err
}

// trustedIssuer reports whether an issuer is on the trust list.
func (st *state) trustedIssuer(issuer string) bool {
	for _, t := range st.Trust {
		if t.Issuer == issuer {
			return true
		}
	}
	return false
}

// Lifetimes of an exchanged token.
const (
	exchangedTTL    = 15 * time.Minute
	maxExchangedTTL = time.Hour
)

// ExchangeToken takes an RFC 8693 token-exchange request (form-encoded:
// grant_type, subject_token — an OIDC ID token —, subject_token_type, and
// optionally scope, space-separated key patterns, default "*", and mode,
// read by default) and returns a short-lived ctxs_ token for the token's
// subject. The token must come from an issuer on the trust list, verify
// (see IDTokenVerifier) and name as its audiences and authorized party only
// clients the trust entry trusts (see TrustedIssuer); every failure of it is
// KindUnauthenticated, the same answer whatever failed. Refused tokens are
// counted per the connection they came over ([WithPeer]; KindRateLimited
// beyond ten a minute), never per the subject they claim, so no one's tokens
// hold up another's exchange. What the token may read is, as for every
// recipient, its scope ∩ the grants naming {kind: oidc, issuer, id: sub}.
func (s *Service) ExchangeToken(ctx context.Context, in ExchangeInput) (Exchanged, error) {
	const op = "token.exchange"
	idToken, scope, mode, err := exchangeParams(op, in)
	if err != nil {
		return Exchanged{}, err
	}
	if s.oidc == nil {
		return Exchanged{}, model.Fail(op, KindUnauthenticated, "")
	}
	trust, tok, err := s.verifyExchange(ctx, op, idToken)
	if err != nil {
		return Exchanged{}, err
	}
	sub, exp := tok.Subject, tok.Expiry
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return Exchanged{}, err
	}
	defer release()
	token, err := identity.NewToken(identity.ServicePrefix)
	if err != nil {
		return Exchanged{}, model.Wrap(op, KindInternal, err)
	}
	id, err := identity.NewID("tok_")
	if err != nil {
		return Exchanged{}, model.Wrap(op, KindInternal, err)
	}
	name := model.OIDCRecipient(trust.Issuer, sub)
	var out Exchanged
	err = s.commit(st, func(st *state, b *batch) error {
		if _, ok := st.Trust[trust.ID]; !ok {
			return model.Fail(op, KindUnauthenticated, "")
		}
		ttl := min(exchangedTTL, exp.Sub(b.Now))
		if ttl <= 0 {
			return model.Fail(op, KindUnauthenticated, "")
		}
		if err := st.tooManyTokens(op, name, b.Now); err != nil {
			return err
		}
		t := newToken(id, token)
		t.Consumer, t.Scope, t.Mode, t.Trust = name, scope, mode, trust.ID
		t.CreatedAt, t.ExpiresAt = b.Now, b.Now.Add(min(ttl, maxExchangedTTL))
		st.putToken(b, t)
		admission.PurgePresentations(st.view, b)
		rev := b.NextRevision()
		b.Receipt(Receipt{Actor: "oidc:" + trust.ID, Operation: op, Recipient: name, Decision: "allow", Records: []string{id, trust.ID}, Revision: rev})
		out = Exchanged{AccessToken: token, IssuedTokenType: oidcrecipient.TokenTypeAccessToken, TokenType: "Bearer",
			ExpiresIn: int64(t.ExpiresAt.Sub(b.Now) / time.Second), Scope: strings.Join(scope, " "), Mode: mode, Revision: rev}
		return nil
	})
	return out, err
}

// ParseExchange reads the form-encoded body of a token exchange (RFC 8693)
// into ExchangeToken's input with the protocol's own parser,
// oidcrecipient.ParseForm, not Service.Decode: the body is a form, not
// JSON, and what a form can break that a struct cannot (a parameter
// repeated or unknown) is refused here, before anything else.
// ExchangeToken checks the values of every request, parsed or built in
// Go, with the same rules (Request.Check).
func ParseExchange(raw []byte) (ExchangeInput, error) {
	in, err := oidcrecipient.ParseForm(raw)
	return in, exchangeError("token.exchange", err)
}

// exchangeError is the domain error of the exchange form's refusal err
// (nil for none): too large, or invalid with its message.
func exchangeError(op string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*oidcrecipient.Error](err); ok && e.TooLarge {
		return model.Fail(op, KindTooLarge, "")
	}
	return model.Fail(op, KindInvalid, err.Error())
}

// exchangeParams checks an exchange request (oidcrecipient.Request.Check)
// and returns its ID token, scope (default "*") and mode (default read).
// A request without a usable ID token is KindUnauthenticated.
func exchangeParams(op string, in ExchangeInput) (idToken string, scope []string, mode string, err error) {
	if err := exchangeError(op, in.Check()); err != nil {
		return "", nil, "", err
	}
	idToken = in.SubjectToken
	if idToken == "" || len(idToken) > oidcrecipient.MaxIDToken {
		return "", nil, "", model.Fail(op, KindUnauthenticated, "")
	}
	scopeText := in.Scope
	if scopeText == "" {
		scopeText = "*"
	}
	if scope, err = parseScope(strings.ReplaceAll(scopeText, " ", ",")); err != nil {
		return "", nil, "", err
	}
	switch mode = in.Mode; mode {
	case "":
		mode = ModeRead
	case ModeRead, ModeWrite, ModeReadWrite:
	default:
		return "", nil, "", model.Fail(op, KindInvalid, "mode must be read, write or read-write")
	}
	return idToken, scope, mode, nil
}

// verifyExchange verifies idToken against the trust entries of the issuer
// it claims and returns the entry it verified for, and what it vouches
// for. Every failure is KindUnauthenticated, counted per the connection
// it came over (limits.Source) and told to the owner (refuseExchange).
func (s *Service) verifyExchange(ctx context.Context, op, idToken string) (TrustedIssuer, VerifiedIDToken, error) {
	// Failures count against their sender, never against the subject a
	// token claims, which is not verified: a forger would lock it out.
	failKey := limits.SourceOf(ctx).Conn()
	if wait := s.exchangeFailures.Wait(failKey, s.eng.Clock.Now()); wait > 0 {
		return TrustedIssuer{}, VerifiedIDToken{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	// The issuer is read from the token only to pick the trust entries to
	// verify it against; nothing else of it counts before it verifies.
	issuer, claimedSub := oidcrecipient.UnverifiedIssuerSubject(idToken)
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return TrustedIssuer{}, VerifiedIDToken{}, err
	}
	st.Mu.RLock()
	var candidates []TrustedIssuer
	for _, t := range st.Trust {
		if t.Issuer == issuer {
			candidates = append(candidates, *t)
		}
	}
	st.Mu.RUnlock()
	// Verification fetches the issuer's discovery document and keys: never
	// while holding the lock state, which a lock or unlock waits for.
	release()
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	var trust TrustedIssuer
	var tok VerifiedIDToken
	for _, c := range candidates {
		v, verr := s.oidc.Verify(ctx, c.Issuer, c.Audience, idToken)
		if verr != nil {
			err = verr
			continue
		}
		if !c.Accepts(v) {
			err = oidcrecipient.ErrUntrustedClient
			continue
		}
		trust, tok = c, v
		break
	}
	if sub := tok.Subject; trust.ID == "" || len(sub) > 255 || !utf8.ValidString(sub) {
		s.exchangeFailures.Note(failKey, s.eng.Clock.Now())
		class := oidcrecipient.RefusalClass(issuer, claimedSub, len(candidates), trust.ID != "", err)
		s.refuseExchange(ctx, class, issuer, claimedSub, candidates)
		return TrustedIssuer{}, VerifiedIDToken{}, model.Fail(op, KindUnauthenticated, "")
	}
	return trust, tok, nil
}

// refuseExchange tells the owner of a refused exchange: its class in the
// log at the default level and in a deny receipt (token.exchange, records
// "refused:CLASS" and the trust entries it was tried against), with the
// issuer and subject the token claimed — never the token. An issuer not on
// the trust list is named in the log only, as the text the token claimed.
// Anyone may cause them: the receipts are coalesced per host and class
// (engine.Batch.Refuse), the rest of a minute counted in one.
func (s *Service) refuseExchange(ctx context.Context, class, issuer, sub string, candidates []TrustedIssuer) {
	const op = "token.exchange"
	records := []string{"refused:" + class}
	for _, c := range candidates {
		records = append(records, c.ID)
	}
	s.eng.Log.Info("token exchange refused", "class", class, "issuer", issuer, "trust", records[1:])
	recipient := ""
	if len(candidates) > 0 {
		recipient = model.OIDCRecipient(issuer, sub) // an issuer the owner trusts: who claimed to be whom
	}
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return // locked: the log has it
	}
	defer release()
	rc := Receipt{Actor: "oidc", Operation: op, Decision: "deny", Constraint: KindUnauthenticated.Row().Constraint, Records: records[:1]}
	if err := s.commit(st, func(st *state, b *batch) error {
		own := rc
		own.Recipient, own.Records = recipient, records
		b.Refuse(limits.SourceOf(ctx).Host()+" "+op+" "+class, own, rc)
		return nil
	}); err != nil {
		s.eng.Log.Warn("token exchange refused: receipt not written", "err", err)
	}
}
