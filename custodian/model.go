package custodian

import "github.com/phc-project/phc/custodian/internal/model"

// Principal is an authenticated caller, produced by [Service.Authenticate]
// (see [model.Principal]). It cannot be built by hand: an owner principal
// stays bound to the session it was authenticated with and stops working
// when that session ends.
type Principal = model.Principal

// PrincipalKind says who is calling (see [model.PrincipalKind]).
type PrincipalKind = model.PrincipalKind

// The kinds of principal.
const (
	PrincipalAnonymous = model.PrincipalAnonymous
	PrincipalOwner     = model.PrincipalOwner
	PrincipalConsumer  = model.PrincipalConsumer
	// PrincipalSealed is a well-formed service token presented on MCP
	// while the vault is locked (see [model.PrincipalSealed]).
	PrincipalSealed = model.PrincipalSealed
)
