package custodian

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// ListTokens returns every service token, newest first (owner only).
func (s *Service) ListTokens(ctx context.Context, p Principal) ([]TokenView, error) {
	return ownerRead(s, "token.list", p, func(st *state) ([]TokenView, error) {
		now := s.eng.Clock.Now()
		out := make([]TokenView, 0, len(st.TokenByID))
		for _, t := range st.TokenByID {
			out = append(out, TokenView{
				Prefix: t.Prefix, Consumer: t.Consumer, Scope: t.Scope, Mode: t.Mode,
				CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt,
				Active: st.tokenLive(t, now),
			})
		}
		sort.Slice(out, func(i, j int) bool {
			if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
				return out[i].CreatedAt.After(out[j].CreatedAt)
			}
			return out[i].Prefix < out[j].Prefix
		})
		return out, nil
	})
}

// minRevokePrefix is the shortest prefix RevokeToken accepts: "ctxs_" and
// at least one character of the token. A short prefix is fine: one that
// matches several tokens revokes none.
const minRevokePrefix = len(identity.ServicePrefix) + 1

// RevokeToken revokes the one unrevoked service token whose listed prefix
// starts with prefix (owner only). A prefix that matches several tokens is
// KindConflict and revokes nothing; one that matches none is KindNotFound.
func (s *Service) RevokeToken(ctx context.Context, p Principal, prefix string) (uint64, error) {
	const op = "token.revoke"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if len(prefix) < minRevokePrefix || len(prefix) > 64 || !identity.LooksLikeTokenPrefix(prefix, identity.ServicePrefix) {
		return 0, model.Fail(op, KindInvalid, "give the token prefix shown in the token list (ctxs_ and at least one more character)")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		var match *ServiceToken
		for _, t := range st.TokenByID {
			if t.RevokedAt != nil || !(strings.HasPrefix(t.Prefix, prefix) || strings.HasPrefix(prefix, t.Prefix)) {
				continue
			}
			if match != nil {
				return model.Fail(op, KindConflict, "the prefix matches more than one token; give more of it")
			}
			match = t
		}
		if match == nil {
			return model.NotFound(op)
		}
		rev = b.NextRevision()
		st.revokeToken(b, match)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Recipient: match.Consumer, Decision: "allow", Records: []string{match.ID}, Revision: rev})
		return nil
	})
	return rev, err
}

// putToken publishes service token record t, new or replacing its earlier
// self (with st.mu held for writing).
func (st *state) putToken(b *batch, t *ServiceToken) {
	var h [32]byte
	copy(h[:], t.Hash)
	st.Tokens[h], st.TokenByID[t.ID] = t, t
	b.Put(engine.BucketTokens, t.ID, t)
}

// newToken is the record of token, a fresh ctxs_ token, with its hash and
// the prefix lists show; the caller sets what it may do.
func newToken(id, token string) *ServiceToken {
	h := identity.HashToken(token)
	return &ServiceToken{ID: id, Hash: h[:], Prefix: token[:len(identity.ServicePrefix)+8]}
}

// revokeToken revokes t at b.now, and drops the DEC document presented
// with it (with st.mu held for writing).
func (st *state) revokeToken(b *batch, t *ServiceToken) {
	nt := *t
	at := b.Now
	nt.RevokedAt = &at
	st.putToken(b, &nt)
	admission.DropPresentation(st.view, b, t.ID)
}

// tooManyTokens is KindRateLimited when app (a consumer, or an OIDC
// subject) already holds as many live (tokenLive) service tokens as the
// settings allow (with st.mu held); it may retry when the first expires.
func (st *state) tooManyTokens(op, app string, now time.Time) *Error {
	live := 0
	var first time.Time
	for _, t := range st.TokenByID {
		if t.Consumer != app || !st.tokenLive(t, now) {
			continue
		}
		live++
		if first.IsZero() || t.ExpiresAt.Before(first) {
			first = t.ExpiresAt
		}
	}
	if live < st.Settings.LiveTokenCap() {
		return nil
	}
	return &Error{Op: op, Kind: KindRateLimited, RetryAfter: max(first.Sub(now), time.Second),
		Public: "the app holds as many live tokens as it may: revoke one, or wait until one expires"}
}
