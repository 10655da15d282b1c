package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/phc-project/phc/schema"
)

// Kind classifies a domain error. Its values cross the wire through the
// table below: append only, never reorder or remove.
type Kind uint8

const (
	KindInternal              Kind = iota // an unexpected failure; details only in the log
	KindInvalid                           // malformed request, bad id
	KindSchema                            // fails the JSON binding; carries violations
	KindUnauthenticated                   // missing or wrong credentials
	KindLocked                            // the vault is locked
	KindSessionRequired                   // owner-only operation with another credential
	KindUserOnlyWrite                     // an agent writing a user-only-write field
	KindScopeExceeded                     // outside the token's scope or grants
	KindApprovalDenied                    // the owner denied the request
	KindApprovalRequired                  // waiting for the owner's approval
	KindModeDenied                        // token lacks the read or write mode
	KindRestrictionBlocked                // a mandatory restriction forbids this use
	KindQualificationRequired             // grant needs a DCER admission
	KindNotFound                          // absent, or hidden from this principal
	KindConflict                          // exists already, already unlocked, stale version
	KindTooLarge                          // request body over the limit
	KindRateLimited                       // too many requests; RetryAfter set
	KindMethodNotAllowed                  // route exists, method does not
	// The Client-Vault v=1 resolve endpoint's own codes (docs/formats/reference.md);
	// its too_large and rate_limited are KindTooLarge and KindRateLimited.
	KindVaultBadRequest  // a malformed resolve body, or a key in the client range
	KindVaultUnknownKey  // no active binding for the presented K
	KindVaultPending     // the binding waits for the owner; ActivatesAt set when known
	KindVaultClockSkew   // the client clock is more than 5 minutes off; ServerTime set
	KindVaultUnknownRef  // a key is not in the reader's current mapping; RefKey set
	KindVaultExpired     // a key was minted again after the vault first saw it; RefKey set
	KindVaultTooManyRefs // more than 100 keys in one resolve
	KindVaultDisabled    // local vaults are off (settings local_vaults)
	// KindPurposeRequired: a read that names no purpose, where grants of
	// several purposes could serve it; Purposes lists them.
	KindPurposeRequired
)

// Row is one line of the error table: how a Kind appears on the wire.
type Row struct {
	Status     int    // HTTP status
	Constraint string // PCP constraint code
	Message    string // public text, safe for any client
}

// table is the one place that picks a status and a constraint code. The
// HTTP and MCP adapters read it through [Kind.Row].
var table = [...]Row{
	KindInternal:              {500, "internal", "internal error"},
	KindInvalid:               {400, "invalid_request", "invalid request"},
	KindSchema:                {400, "schema_violation", "the document does not match the schema"},
	KindUnauthenticated:       {401, "unauthenticated", "missing or invalid credentials"},
	KindLocked:                {403, "vault_locked", "the vault is locked"},
	KindSessionRequired:       {403, "session_required", "this operation needs the owner's session"},
	KindUserOnlyWrite:         {403, "user_only_write", "only the owner may write this field"},
	KindScopeExceeded:         {403, "scope_exceeded", "outside the credential's scope"},
	KindApprovalDenied:        {403, "approval_denied", "the owner denied this request"},
	KindApprovalRequired:      {403, "approval_required", "the owner's approval is required"},
	KindModeDenied:            {403, "mode_denied", "the token does not allow this mode"},
	KindRestrictionBlocked:    {403, "restriction_blocked", "a restriction forbids this use"},
	KindQualificationRequired: {403, "qualification_required", "a qualification is required"},
	KindNotFound:              {404, "not_found", "not found"},
	KindConflict:              {409, "conflict", "conflict"},
	KindTooLarge:              {413, "too_large", "request too large"},
	KindRateLimited:           {429, "rate_limited", "too many requests"},
	KindMethodNotAllowed:      {405, "invalid_request", "method not allowed"},
	KindVaultBadRequest:       {400, "bad_request", "the resolve request is malformed"},
	KindVaultUnknownKey:       {401, "unknown_key", "no active binding for this key"},
	KindVaultPending:          {403, "pending", "the binding waits for the owner's activation"},
	KindVaultClockSkew:        {403, "clock_skew", "the client clock is more than 5 minutes off"},
	KindVaultUnknownRef:       {404, "unknown_ref", "a key is not in the current mapping"},
	KindVaultExpired:          {410, "expired", "a key was minted again after the vault first saw it"},
	KindVaultTooManyRefs:      {413, "too_many_refs", "more than 100 keys in one request"},
	KindVaultDisabled:         {503, "disabled", "local vaults are off"},
	KindPurposeRequired:       {403, "purpose_required", "name the purpose of this read"},
}

// Kinds lists every Kind, in value order.
func Kinds() []Kind {
	ks := make([]Kind, len(table))
	for i := range table {
		ks[i] = Kind(i)
	}
	return ks
}

// Row returns the wire form of k; an unknown Kind reads as KindInternal.
func (k Kind) Row() Row {
	if int(k) >= len(table) {
		return table[KindInternal]
	}
	return table[k]
}

func (k Kind) String() string { return k.Row().Constraint }

// Error is the one domain error type. Public fields other than Err are safe
// to show to the client that caused it; Err is private detail for the log.
type Error struct {
	Op         string             // the operation, e.g. "propose"
	Kind       Kind               // the class, which picks status and constraint
	Subject    string             // the record or schema id concerned, if any (log only)
	Public     string             // client-safe text replacing the table's message; never holds untrusted input
	Violations []schema.Violation // KindSchema only
	RetryAfter time.Duration      // KindRateLimited only
	RequestID  string             // KindApprovalRequired only
	Purposes   []string           // KindPurposeRequired only: the app's own grant purposes that could serve
	// RefKey names the reference key concerned (KindVaultUnknownRef,
	// KindVaultExpired); ActivatesAt and ServerTime are the times the
	// Client-Vault table puts in the body of pending and clock_skew.
	RefKey      string
	ActivatesAt *time.Time
	ServerTime  *time.Time
	Err         error // the cause, for the log only
}

func (e *Error) Error() string {
	msg := e.Op + ": " + e.Kind.String()
	if e.Subject != "" {
		msg += " " + e.Subject
	}
	if e.Public != "" {
		msg += ": " + e.Public
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Message is the client-facing text of e.
func (e *Error) Message() string {
	if e.Public != "" {
		return e.Public
	}
	return e.Kind.Row().Message
}

// WireError is the client-facing form of an error, the same on every face
// (HTTP body, MCP tool error): the table's status and constraint code, the
// error's public text, and its violations or request id. It never holds a
// Go error's text.
type WireError struct {
	Status     int                `json:"-"`
	Error      string             `json:"error"`
	Constraint string             `json:"constraint"`
	Violations []schema.Violation `json:"violations,omitempty"`
	RequestID  string             `json:"request_id,omitempty"`
	Purposes   []string           `json:"purposes,omitempty"`
	// Key, ActivatesAt and ServerTime: the members the Client-Vault v=1
	// table adds to unknown_ref and expired, pending, and clock_skew.
	Key         string        `json:"key,omitempty"`
	ActivatesAt *time.Time    `json:"activates_at,omitempty"`
	ServerTime  *time.Time    `json:"server_time,omitempty"`
	RetryAfter  time.Duration `json:"-"` // KindRateLimited only
}

// Describe is the one translator from an error to its wire form; an error
// that is not an *Error reads as KindInternal.
func Describe(err error) WireError {
	var w WireError
	kind := KindInternal
	if e, ok := errors.AsType[*Error](err); ok {
		kind = e.Kind
		w.Error, w.Violations, w.RequestID, w.Purposes = e.Message(), e.Violations, e.RequestID, e.Purposes
		w.Key, w.ActivatesAt, w.ServerTime = e.RefKey, e.ActivatesAt, e.ServerTime
		if kind == KindRateLimited {
			w.RetryAfter = e.RetryAfter
		}
	}
	row := kind.Row()
	if w.Error == "" {
		w.Error = row.Message
	}
	w.Status, w.Constraint = row.Status, row.Constraint
	return w
}

// KindOf returns the Kind of err: the Kind of the outermost *Error in its
// chain, or KindInternal.
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return KindInternal
}

// Fail builds an *Error with public text pub (which must not contain
// untrusted input) and no cause.
func Fail(op string, k Kind, pub string) *Error {
	return &Error{Op: op, Kind: k, Public: pub}
}

// Wrap builds a KindInternal (or other) error around a cause.
func Wrap(op string, k Kind, err error) *Error {
	return &Error{Op: op, Kind: k, Err: err}
}

// Internalf is an internal error with a formatted private cause.
func Internalf(op, format string, args ...any) *Error {
	return &Error{Op: op, Kind: KindInternal, Err: fmt.Errorf(format, args...)}
}

// ErrPurpose is the public text for a missing or malformed purpose.
const ErrPurpose = "purpose is required: free text of 1-200 characters, not beginning or ending with a space, without control or bidirectional formatting characters"

// NotFound is the single answer for absent or hidden records.
func NotFound(op string) *Error { return &Error{Op: op, Kind: KindNotFound} }
