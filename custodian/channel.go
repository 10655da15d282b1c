package custodian

import (
	"context"
	"encoding/hex"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// Channel is the face a request came through. The rules that differ by
// face are decided here, from the channel the adapter names, so that the
// HTTP API and the MCP server cannot drift apart.
type Channel int

const (
	// ChannelHTTP is the HTTP API and the PCP facade: the owner's tools
	// and the apps themselves.
	ChannelHTTP Channel = iota + 1
	// ChannelMCP is the MCP face (streamable HTTP at /mcp, or phc mcp):
	// what it answers goes into a model's context.
	ChannelMCP
)

func (ch Channel) String() string {
	switch ch {
	case ChannelHTTP:
		return "http"
	case ChannelMCP:
		return "mcp"
	}
	return "unknown"
}

// holdsTokens reports whether an answer on ch may carry a bearer token. A
// model must never hold one: over MCP the app fetches its token over HTTP,
// outside the model's context.
func (ch Channel) holdsTokens() bool { return ch == ChannelHTTP }

// acceptsOwner reports whether the owner's session may be used on ch. MCP
// is the models' channel, and the owner's session — which reads
// everything, critical data included, and confirms what it writes — never
// goes into it.
func (ch Channel) acceptsOwner() bool { return ch == ChannelHTTP }

// answersLocked reports whether ch answers a locked vault inside its own
// protocol rather than by refusing the credential. An MCP host treats a
// refused credential as the end of the server (it shows a dead server
// until restarted), so over MCP a locked vault is an answer to each tool
// call — KindLocked — and the session outlives the lock.
func (ch Channel) answersLocked() bool { return ch == ChannelMCP }

// AuthenticateOn resolves a bearer credential presented on ch, as
// [Service.Authenticate] does, and refuses one that ch does not accept:
// the owner's session anywhere but over HTTP is KindUnauthenticated, as an
// unknown token is. An unknown channel accepts nothing.
//
// While the vault is locked the token records are sealed with it, so no
// token can be checked. Over HTTP that is KindLocked. Over MCP any
// well-formed service token (ctxs_ and 43 base64url characters) is then
// accepted as a [PrincipalSealed] principal, whose every operation answers
// KindLocked and whose status says locked: the answer is the same for a
// valid, expired, revoked or made-up token, so nothing about the token is
// disclosed, and a host's session goes on until the vault is unlocked,
// when the token is checked again on the next request. A malformed bearer
// stays KindUnauthenticated.
func (s *Service) AuthenticateOn(ctx context.Context, ch Channel, bearer string) (Principal, error) {
	const op = "authenticate"
	if ch != ChannelHTTP && ch != ChannelMCP {
		return Principal{}, model.Fail(op, KindUnauthenticated, "")
	}
	p, err := s.Authenticate(ctx, bearer)
	if model.KindOf(err) == KindLocked && ch.answersLocked() && identity.LooksLikeToken(bearer, identity.ServicePrefix) {
		return model.SealedPrincipal(tokenBinding(bearer)), nil
	}
	if err != nil {
		return Principal{}, err
	}
	if p.Kind() == PrincipalOwner && !ch.acceptsOwner() {
		return Principal{}, model.Fail(op, KindUnauthenticated, "")
	}
	return p, nil
}

// onChannel is v as it may be answered on ch: without a token where ch
// may not carry one.
func onChannel(ch Channel, v RequestView) RequestView {
	if !ch.holdsTokens() {
		v.Token = ""
	}
	return v
}

// MayAskInHost reports whether the pending request v may be put to the
// person through the host of the app that made it (an MCP elicitation),
// whose answer [Service.DecideByUser] then records: only on a channel with
// such a host (MCP), never for critical data (the owner approves that out
// of band, with the password), and only where the owner's settings allow
// approvals that way (elicited_approvals). Whether the host supports
// elicitation is the adapter's to find out.
func (s *Service) MayAskInHost(ch Channel, v RequestView) bool {
	return v.Tier != SensitivityCritical && s.hostMayPrompt(ch, v)
}

// MayTellInHost reports whether the pending request v for critical data
// may be put to the person through the app's host (an MCP elicitation) to
// tell them what is asked, by whom and why, and how they approve it — in
// phc itself, with the password, never in the host — and to let them
// refuse it there ([Service.DecideByUser] records a refusal; it never
// approves critical data). The same conditions as [Service.MayAskInHost]
// hold otherwise: MCP, pending, and the owner's elicited_approvals.
func (s *Service) MayTellInHost(ch Channel, v RequestView) bool {
	return v.Tier == SensitivityCritical && s.hostMayPrompt(ch, v)
}

// hostMayPrompt: v is pending, on a channel with a host (MCP), and the
// owner lets apps' hosts put requests to the person (elicited_approvals).
func (s *Service) hostMayPrompt(ch Channel, v RequestView) bool {
	if ch != ChannelMCP || v.Status != RequestPending {
		return false
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		return false
	}
	s.st.Mu.RLock()
	defer s.st.Mu.RUnlock()
	return s.st.Settings.ElicitedApprovals
}

// tokenBinding is the session binding of a service token: its hash, which
// is the same whether the vault is locked or not.
func tokenBinding(bearer string) string {
	h := identity.HashToken(bearer)
	return "token:" + hex.EncodeToString(h[:16])
}
