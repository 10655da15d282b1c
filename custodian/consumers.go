package custodian

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

const (
	minSecretLen = 16
	maxSecretLen = 256
)

// AddConsumer registers a consumer (owner only). A consumer the owner
// registers is approved at once. Only an Argon2id hash of the secret is kept.
func (s *Service) AddConsumer(ctx context.Context, p Principal, in ConsumerInput) (ConsumerView, error) {
	const op = "consumer.add"
	if err := p.RequireOwner(op); err != nil {
		return ConsumerView{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return ConsumerView{}, err
	}
	return s.addConsumer(op, p, in, ConsumerApproved)
}

// maxPending bounds the consumers waiting for approval, since anyone on the
// machine may register one.
const maxPending = 100

// RegisterConsumer is a consumer's self-registration (PCP): it needs no
// credential and leaves the consumer pending until the owner approves it.
// A pending consumer can obtain no token. created reports whether the
// registration made the consumer.
//
// Registering again with the name and the secret of a registered consumer
// (self-registered, or added by the owner) is idempotent: it writes
// nothing and answers the consumer as it stands, pending or approved, so an
// app that runs again goes on, and an app learns it was approved without
// trying to mint a token. A taken name with another secret is KindConflict,
// as is a lookalike of a registered name; the wrong secret counts against
// the sender's failure limit for the name, as at minting, so that this
// answer is no cheaper way to guess a secret than the token route.
func (s *Service) RegisterConsumer(ctx context.Context, in ConsumerInput) (view ConsumerView, created bool, err error) {
	const op = "consumer.register"
	if err := s.accept(op, &in); err != nil {
		return ConsumerView{}, false, err
	}
	if again, ok, err := s.registeredAgain(ctx, op, in); err != nil || ok {
		return again, false, err
	}
	view, err = s.addConsumer(op, Principal{}, in, ConsumerPending)
	return view, err == nil, err
}

// registeredAgain answers a registration that repeats that of a consumer
// of the same name: ok with the consumer as it stands when the secret is
// its own, the taken-name conflict when it is not, and neither (nil, not
// ok) when no consumer has that name, for addConsumer to decide.
func (s *Service) registeredAgain(ctx context.Context, op string, in ConsumerInput) (ConsumerView, bool, error) {
	if len(in.Secret) < minSecretLen || len(in.Secret) > maxSecretLen {
		return ConsumerView{}, false, nil // addConsumer refuses it
	}
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return ConsumerView{}, false, err
	}
	defer release()
	st.Mu.RLock()
	c, known := st.Consumers[in.Name]
	var hash string
	var view ConsumerView
	if known {
		hash = c.SecretHash
		view = ConsumerView{Name: c.Name, Status: c.Status, CreatedAt: c.CreatedAt, RegisteredAt: c.CreatedAt}
	}
	st.Mu.RUnlock()
	if !known {
		return ConsumerView{}, false, nil
	}
	now := s.eng.Clock.Now()
	if wait := s.secrets.Wait(limits.SourceOf(ctx), in.Name, now); wait > 0 {
		return ConsumerView{}, false, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	// VerifySecret compares in constant time; a consumer without a hash
	// (none is made that way) matches no secret.
	noHash := hash == ""
	if noHash {
		hash = dummySecretHash()
	}
	ok, err := s.verifySecret(hash, []byte(in.Secret))
	if err != nil || !ok || noHash {
		s.secrets.Note(limits.SourceOf(ctx), in.Name, now)
		return ConsumerView{}, false, nameTaken(op, in.Name, in.Name)
	}
	return view, true, nil
}

// addConsumer adds consumer in, accepted, with status.
func (s *Service) addConsumer(op string, p Principal, in ConsumerInput, status string) (ConsumerView, error) {
	if !validConsumerName(in.Name) {
		return ConsumerView{}, model.Fail(op, KindInvalid, "name must be 1-64 letters, digits, '_', '.' or '-'")
	}
	if reservedName(in.Name) {
		return ConsumerView{}, model.Fail(op, KindInvalid, "the name is reserved, or looks like a reserved word (self, owner, user, custodian, phc, auto_grant, anonymous)")
	}
	if len(in.Secret) < minSecretLen || len(in.Secret) > maxSecretLen {
		return ConsumerView{}, model.Fail(op, KindInvalid, "secret must be 16 to 256 bytes")
	}
	hash, err := s.hashSecret([]byte(in.Secret))
	if err != nil {
		return ConsumerView{}, model.Wrap(op, KindInternal, err)
	}
	var out ConsumerView
	err = s.write(op, p, func(st *state, b *batch) error {
		// A name is taken by a consumer of the same name or of one that
		// looks like it (see nameKey). The owner's own registration wins
		// over pending self-registrations: anyone on the machine could
		// have squatted the name or a lookalike of it.
		taken := st.lookalikes(in.Name)
		if old, ok := st.Consumers[in.Name]; ok {
			taken = append(taken, old)
		}
		sort.Slice(taken, func(i, j int) bool { return taken[i].Name < taken[j].Name })
		for _, old := range taken {
			if status != ConsumerApproved || old.Status != ConsumerPending {
				return nameTaken(op, in.Name, old.Name)
			}
		}
		replaced := taken
		if status == ConsumerPending {
			pending := 0
			for _, c := range st.Consumers {
				if c.Status == ConsumerPending {
					pending++
				}
			}
			if pending >= maxPending {
				return &Error{Op: op, Kind: KindRateLimited, Public: "too many consumers wait for approval", RetryAfter: time.Hour}
			}
		}
		id, err := identity.NewID("con_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		c := &Consumer{ID: id, Name: in.Name, Status: status, SecretHash: hash, CreatedAt: b.Now}
		rev := b.NextRevision()
		st.Consumers[c.Name] = c
		records := []string{id}
		for _, old := range replaced {
			b.Del(engine.BucketConsumers, old.ID)
			records = append(records, old.ID)
			if old.Name == c.Name {
				continue
			}
			// A squatter's lookalike goes with what the owner gave it.
			delete(st.Consumers, old.Name)
			for _, g := range st.Grants {
				if g.Recipient.Kind == "consumer" && g.Recipient.ID == old.Name && g.RevokedAt == nil {
					st.revokeGrant(b, g, rev)
					records = append(records, g.ID)
				}
			}
		}
		b.Put(engine.BucketConsumers, id, c)
		b.Receipt(Receipt{Actor: p.Actor(), Operation: op, Recipient: c.Name, Decision: "allow", Records: records, Revision: rev})
		out = ConsumerView{Name: c.Name, Status: c.Status, CreatedAt: c.CreatedAt, RegisteredAt: c.CreatedAt, Revision: rev}
		return nil
	})
	return out, err
}

// ApproveConsumer approves a pending consumer (owner only). Approving an
// approved consumer is KindConflict; an unknown one KindNotFound.
func (s *Service) ApproveConsumer(ctx context.Context, p Principal, name string) (ConsumerView, error) {
	const op = "consumer.approve"
	if err := p.RequireOwner(op); err != nil {
		return ConsumerView{}, err
	}
	if !validConsumerName(name) {
		return ConsumerView{}, model.Fail(op, KindInvalid, "malformed consumer name")
	}
	var out ConsumerView
	err := s.write(op, p, func(st *state, b *batch) error {
		c, ok := st.Consumers[name]
		if !ok {
			return model.NotFound(op)
		}
		if c.Status != ConsumerPending {
			return model.Fail(op, KindConflict, "the consumer is already approved")
		}
		// A vault may hold lookalike names from before they were refused:
		// approving one next to an approved app would make two apps the
		// owner cannot tell apart.
		for _, other := range st.lookalikes(name) {
			if other.Status == ConsumerApproved {
				return nameTaken(op, name, other.Name)
			}
		}
		nc := *c
		nc.Status = ConsumerApproved
		rev := b.NextRevision()
		st.Consumers[name] = &nc
		b.Put(engine.BucketConsumers, nc.ID, &nc)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Recipient: name, Decision: "allow", Records: []string{nc.ID}, Revision: rev})
		out = ConsumerView{Name: nc.Name, Status: nc.Status, CreatedAt: nc.CreatedAt, RegisteredAt: nc.CreatedAt, Revision: rev}
		return nil
	})
	return out, err
}

// DeleteConsumer removes a consumer (owner only): its record goes, every one
// of its tokens is revoked and every grant naming it is revoked, so that a
// later consumer of the same name inherits nothing.
func (s *Service) DeleteConsumer(ctx context.Context, p Principal, name string) (uint64, error) {
	const op = "consumer.delete"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if !validConsumerName(name) {
		return 0, model.Fail(op, KindInvalid, "malformed consumer name")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		c, ok := st.Consumers[name]
		if !ok {
			return model.NotFound(op)
		}
		rev = b.NextRevision()
		records := []string{c.ID}
		for _, t := range st.TokenByID {
			if t.Consumer == name && t.RevokedAt == nil {
				st.revokeToken(b, t)
				records = append(records, t.ID)
			}
		}
		for _, g := range st.Grants {
			if g.Recipient.Kind == "consumer" && g.Recipient.ID == name && g.RevokedAt == nil {
				st.revokeGrant(b, g, rev)
				records = append(records, g.ID)
			}
		}
		delete(st.Consumers, name)
		b.Del(engine.BucketConsumers, c.ID)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Recipient: name, Decision: "allow", Records: records, Revision: rev})
		return nil
	})
	return rev, err
}

// ListConsumers returns the registered consumers by name (owner only).
func (s *Service) ListConsumers(ctx context.Context, p Principal) ([]ConsumerView, error) {
	return ownerRead(s, "consumer.list", p, func(st *state) ([]ConsumerView, error) {
		out := make([]ConsumerView, 0, len(st.Consumers))
		for _, c := range st.Consumers {
			out = append(out, ConsumerView{Name: c.Name, Status: c.Status, CreatedAt: c.CreatedAt, RegisteredAt: c.CreatedAt})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	})
}

// nameTaken is the KindConflict of a name already taken by the consumer
// called existing, named literally (a consumer name is 1-64 of
// [A-Za-z0-9_.-], so it is safe to show).
func nameTaken(op, name, existing string) *Error {
	if name == existing {
		return model.Fail(op, KindConflict, fmt.Sprintf("a consumer named %q exists", existing))
	}
	return model.Fail(op, KindConflict, fmt.Sprintf("the name looks like that of the registered app %q: app names must differ by more than case or lookalike characters", existing))
}

// dummySecretHash makes a check for an unknown consumer cost what a check
// for a known one costs, so the answer's timing does not say which names
// exist.
var dummySecretHash = sync.OnceValue(func() string {
	h, err := identity.HashSecret([]byte("phc-dummy-secret-for-timing"))
	if err != nil {
		panic(err)
	}
	return h
})

// MintServiceToken authenticates a consumer by name and secret and issues a
// ctxs_ token. Unknown names, pending consumers and wrong secrets all give
// the same KindUnauthenticated. The token authorises nothing by itself: what
// it may do is its scope ∩ the consumer's grants. Wrong secrets slow the
// source that sends them ([WithPeer], limits.Secrets), never another.
func (s *Service) MintServiceToken(ctx context.Context, in TokenRequest) (TokenIssued, error) {
	const op = "token.create"
	if err := s.accept(op, &in); err != nil {
		return TokenIssued{}, err
	}
	scope, err := parseScope(string(in.Scope))
	if err != nil {
		return TokenIssued{}, err
	}
	ttl, err := parseTTL(in.TTL)
	if err != nil {
		return TokenIssued{}, err
	}
	if in.Purpose != "" && !validPurpose(in.Purpose) {
		return TokenIssued{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if rl := in.RateLimit; rl != nil && (rl.Reads < 0 || rl.Writes < 0) {
		return TokenIssued{}, model.Fail(op, KindInvalid, "rate_limit values are requests per minute, 0 or more")
	}
	mode := in.Mode
	switch mode {
	case "":
		mode = ModeRead
	case ModeRead, ModeWrite, ModeReadWrite:
	default:
		return TokenIssued{}, model.Fail(op, KindInvalid, "mode must be read, write or read-write")
	}
	if len(in.Secret) > maxSecretLen {
		return TokenIssued{}, model.Fail(op, KindUnauthenticated, "")
	}
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return TokenIssued{}, err
	}
	defer release()
	now := s.eng.Clock.Now()
	if wait := s.secrets.Wait(limits.SourceOf(ctx), in.Consumer, now); wait > 0 {
		return TokenIssued{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	}
	st.Mu.RLock()
	c, known := st.Consumers[in.Consumer]
	hash := dummySecretHash()
	if known {
		hash = c.SecretHash
	}
	st.Mu.RUnlock()
	ok, err := s.verifySecret(hash, []byte(in.Secret))
	if err != nil || !ok || !known || c.Status != ConsumerApproved {
		now := s.eng.Clock.Now()
		s.secrets.Note(limits.SourceOf(ctx), in.Consumer, now)
		return TokenIssued{}, model.Fail(op, KindUnauthenticated, "")
	}
	token, err := identity.NewToken(identity.ServicePrefix)
	if err != nil {
		return TokenIssued{}, model.Wrap(op, KindInternal, err)
	}
	id, err := identity.NewID("tok_")
	if err != nil {
		return TokenIssued{}, model.Wrap(op, KindInternal, err)
	}
	var out TokenIssued
	err = s.commit(st, func(st *state, b *batch) error {
		if cur, ok := st.Consumers[in.Consumer]; !ok || cur.Status != ConsumerApproved {
			return model.Fail(op, KindUnauthenticated, "")
		}
		if err := st.tooManyTokens(op, in.Consumer, b.Now); err != nil {
			return err
		}
		// A ttl beyond what the owner allows is clamped, never refused: a
		// daemon asking for PCP's year still gets a token, and is told.
		var warnings []string
		if limit := st.Settings.MaxTTL(); ttl > limit {
			w := "ttl clamped to " + strconv.Itoa(int(limit/(24*time.Hour))) + " days, the longest this vault allows; the token expires at expires_at"
			if !st.Settings.LongLivedTokens {
				w += " (the owner may allow up to one year with the setting long_lived_tokens)"
			}
			warnings, ttl = append(warnings, w), limit
		}
		t := newToken(id, token)
		t.Consumer, t.Scope, t.Mode, t.RateLimit, t.Purpose = in.Consumer, scope, mode, in.RateLimit, in.Purpose
		t.CreatedAt, t.ExpiresAt = b.Now, b.Now.Add(ttl)
		st.putToken(b, t)
		admission.PurgePresentations(st.view, b) // a new token: the old ones' documents may go
		rev := b.NextRevision()
		b.Receipt(Receipt{Actor: "consumer:" + in.Consumer, Operation: "token.create", Recipient: in.Consumer,
			Purpose: in.Purpose, Decision: "allow", Records: []string{id}, Revision: rev})
		out = TokenIssued{Token: token, ExpiresAt: t.ExpiresAt, Scope: scope, Mode: mode, Purpose: in.Purpose, Revision: rev, Warnings: warnings}
		return nil
	})
	return out, err
}

// parseScope splits a comma-separated list of key patterns.
func parseScope(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !validPattern(p) {
			return nil, model.Fail("token.create", KindInvalid, "scope holds a malformed key pattern")
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, model.Fail("token.create", KindInvalid, "scope is required")
	}
	if len(out) > 64 {
		return nil, model.Fail("token.create", KindInvalid, "scope has more than 64 patterns")
	}
	return out, nil
}

// parseTTL reads a TTL given as seconds, as a Go duration string ("1h",
// "8760h") or as PCP writes a duration ("30 minutes", "2 hours", "1 day").
// It refuses one under a minute; the caller bounds it from above (a token
// is clamped to what the owner allows, a request refused beyond 30 days).
// Anything beyond ten years reads as ten years.
func parseTTL(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return model.DefaultTokenTTL, nil
	}
	var d time.Duration
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		v, ok := parseDuration(str)
		if !ok {
			return 0, model.Fail("token.create", KindInvalid, "ttl is not a duration: give seconds, \"30m\", \"8760h\" or \"30 minutes\"")
		}
		d = v
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return 0, model.Fail("token.create", KindInvalid, "ttl must be whole seconds or a duration such as \"1h\"")
		}
		d = time.Duration(min(n, int64(model.TTLCeiling/time.Second))) * time.Second
	}
	if d < model.MinTokenTTL {
		return 0, model.Fail("token.create", KindInvalid, "ttl must be at least one minute")
	}
	return min(d, model.TTLCeiling), nil
}

// durationUnits are the words PCP's examples use for a duration's unit.
var durationUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// parseDuration reads a Go duration ("1h30m") or a count and a unit word
// ("30 minutes", "1 day", "30min"), case-insensitively.
func parseDuration(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		return d, true
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return 0, false
	}
	unit, ok := durationUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// hashSecret and verifySecret run Argon2id (19 MiB each) at most NumCPU at a
// time, since anyone on the machine can make us run them.
func (s *Service) hashSecret(secret []byte) (string, error) {
	s.kdf <- struct{}{}
	defer func() { <-s.kdf }()
	return identity.HashSecret(secret)
}

func (s *Service) verifySecret(encoded string, secret []byte) (bool, error) {
	s.kdf <- struct{}{}
	defer func() { <-s.kdf }()
	return identity.VerifySecret(encoded, secret)
}
