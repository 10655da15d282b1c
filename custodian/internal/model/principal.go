package model

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

// Principal is an authenticated caller, produced by the core's
// authentication. Outside the core it cannot be built by hand (this
// package is internal to custodian, and its fields are unexported): an
// owner principal stays bound to the session it was authenticated with
// and stops working when that session ends.
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

// OwnerPrincipal is the owner, on the session whose token hashes to
// session.
func OwnerPrincipal(session [32]byte) Principal {
	return Principal{kind: PrincipalOwner, session: session}
}

// ConsumerPrincipal is consumer name, authenticated with service token t
// bound to binding.
func ConsumerPrincipal(name string, t *ServiceToken, binding string) Principal {
	return Principal{kind: PrincipalConsumer, Consumer: name, token: t, binding: binding}
}

// SealedPrincipal is a service token bound to binding, presented while the
// vault is locked.
func SealedPrincipal(binding string) Principal {
	return Principal{kind: PrincipalSealed, binding: binding}
}

// Kind says who is calling.
func (p Principal) Kind() PrincipalKind { return p.kind }

// IsOwner reports whether p is the owner's session.
func (p Principal) IsOwner() bool { return p.kind == PrincipalOwner }

// Token is the service token a consumer authenticated with (nil for any
// other principal).
func (p Principal) Token() *ServiceToken { return p.token }

// Session is the hash of the owner's session token.
func (p Principal) Session() [32]byte { return p.session }

// SessionBinding is what a session opened by p (an MCP session, say) is
// bound to: the same service token, before and after a lock, so that a
// session id presented with another credential is refused. It is empty
// for any other principal.
func (p Principal) SessionBinding() string { return p.binding }

// Disclosure is the mode p asked for on its reads: "", value or reference.
func (p Principal) Disclosure() string { return p.disclosure }

// WithDisclosure is p asking for values (value, or "") or references
// (reference) on its reads.
func (p Principal) WithDisclosure(d string) (Principal, error) {
	switch d {
	case "", DisclosureValue, DisclosureReference:
		p.disclosure = d
		return p, nil
	}
	return p, Fail("read", KindInvalid, "disclosure is value or reference")
}

// ReadPurpose is the one purpose a consumer's read is decided under: the
// purpose it names, or its token's when it names none. A token bound to a
// purpose reads under no other; a read that names none with a token bound
// to none is decided under no purpose — never under the union of the app's
// grants — and gets only what auto_grant gives every approved app.
func (p Principal) ReadPurpose(op, asked string) (string, error) {
	if p.kind != PrincipalConsumer || p.token == nil || p.token.Purpose == "" {
		return asked, nil
	}
	switch asked {
	case "", p.token.Purpose:
		return p.token.Purpose, nil
	}
	return "", Fail(op, KindScopeExceeded, "this token is bound to another purpose: leave the purpose out, or mint a token for the purpose you name")
}

// RequireOwner fails with KindSessionRequired unless p is the owner (and
// with KindLocked for a sealed principal).
func (p Principal) RequireOwner(op string) error {
	if p.kind == PrincipalSealed {
		return Fail(op, KindLocked, "")
	}
	if p.kind != PrincipalOwner {
		return Fail(op, KindSessionRequired, "")
	}
	return nil
}

// Actor is the receipt form of the principal.
func (p Principal) Actor() string {
	switch p.kind {
	case PrincipalOwner:
		return "owner"
	case PrincipalConsumer:
		return "consumer:" + p.Consumer
	}
	return "anonymous"
}
