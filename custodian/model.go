package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
)

// PrincipalKind says who is calling.
type PrincipalKind uint8

const (
	PrincipalAnonymous PrincipalKind = iota
	PrincipalOwner
	PrincipalConsumer
	// PrincipalSealed is a well-formed service token presented on MCP
	// while the vault is locked, when it cannot be checked (the token
	// records are encrypted with the vault): every operation of it fails
	// with KindLocked, whether the vault has been unlocked since or not.
	PrincipalSealed
)

// Principal is an authenticated caller, produced by [Service.Authenticate].
// It cannot be built by hand: an owner principal stays bound to the session
// it was authenticated with and stops working when that session ends.
type Principal struct {
	kind     PrincipalKind
	Consumer string        // consumer name, for PrincipalConsumer
	token    *ServiceToken // the token used, for PrincipalConsumer
	session  [32]byte      // the session token's hash, for PrincipalOwner
	binding  string        // the token's session binding: PrincipalConsumer, PrincipalSealed
	// disclosure is the mode the caller asked for on its reads ("" or
	// "reference"; see WithDisclosure).
	disclosure string
}

// Kind says who is calling.
func (p Principal) Kind() PrincipalKind { return p.kind }

// IsOwner reports whether p is the owner's session.
func (p Principal) IsOwner() bool { return p.kind == PrincipalOwner }

// actor is the receipt form of the principal.
// readPurpose is the one purpose a consumer's read is decided under: the
// purpose it names, or its token's when it names none. A token bound to a
// purpose reads under no other; a read that names none with a token bound
// to none is decided under no purpose — never under the union of the app's
// grants — and gets only what auto_grant gives every approved app.
func (p Principal) readPurpose(op, asked string) (string, error) {
	if p.kind != PrincipalConsumer || p.token == nil || p.token.Purpose == "" {
		return asked, nil
	}
	switch asked {
	case "", p.token.Purpose:
		return p.token.Purpose, nil
	}
	return "", model.Fail(op, KindScopeExceeded, "this token is bound to another purpose: leave the purpose out, or mint a token for the purpose you name")
}

func (p Principal) actor() string {
	switch p.kind {
	case PrincipalOwner:
		return "owner"
	case PrincipalConsumer:
		return "consumer:" + p.Consumer
	}
	return "anonymous"
}
