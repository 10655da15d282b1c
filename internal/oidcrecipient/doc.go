// Package oidcrecipient is the plumbing of phc's OIDC recipients: the
// RFC 8693 token-exchange request that trades an OIDC ID token for a
// short-lived service token, the issuer and subject an ID token claims
// before it is verified, the OpenID Connect rules on a token's audiences
// and authorized party, the class of a refused exchange, and the words
// that tell the owner why an issuer's discovery failed.
//
// It decides nothing about a vault: which issuers are trusted, what a
// recipient may read and the receipts of an exchange are package
// custodian's; verifying a token's signature and fetching discovery
// documents is internal/identity/oidctoken's.
//
// # The exchange request
//
// POST /phc/v1/token takes a form-encoded body (RFC 8693 §2.1), each
// parameter once and no other:
//
//	grant_type=urn:ietf:params:oauth:grant-type:token-exchange
//	subject_token=<the OIDC ID token>
//	subject_token_type=urn:ietf:params:oauth:token-type:id_token
//	scope=<space-separated key patterns, default *>          (optional)
//	mode=read | write | read-write                          (optional, default read)
//	requested_token_type=urn:ietf:params:oauth:token-type:access_token (optional)
//	audience, resource                                      (optional, ignored)
//
// [ParseForm] reads it into a [Request]; [Request.Check] holds a request,
// read or built in Go, to the protocol's values.
package oidcrecipient
