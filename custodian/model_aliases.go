package custodian

import "github.com/phc-project/phc/custodian/internal/model"

// Types of package model, under the names the rules use.
type (
	Authenticated    = model.Authenticated
	Claim            = model.Claim
	Confirmation     = model.Confirmation
	Consumer         = model.Consumer
	ContextRequest   = model.ContextRequest
	DECIssuer        = model.DECIssuer
	DECPolicy        = model.DECPolicy
	Entity           = model.Entity
	Error            = model.Error
	Evidence         = model.Evidence
	Grant            = model.Grant
	Guardrail        = model.Guardrail
	GuardrailParams  = model.GuardrailParams
	Kind             = model.Kind
	Verification     = model.Verification
	Relationship     = model.Relationship
	Persona          = model.Persona
	Presentation     = model.Presentation
	Producer         = model.Producer
	Proposal         = model.Proposal
	QuarantineRecord = model.QuarantineRecord
	RateLimit        = model.RateLimit
	Receipt          = model.Receipt
	Recipient        = model.Recipient
	Requires         = model.Requires
	Restriction      = model.Restriction
	Row              = model.Row
	Selectors        = model.Selectors
	ServiceToken     = model.ServiceToken
	Settings         = model.Settings
	Staleness        = model.Staleness
	Summary          = model.Summary
	TrustedIssuer    = model.TrustedIssuer
	VerifiedIDToken  = model.VerifiedIDToken
	WireError        = model.WireError
)

// The model's constants, under the names adapters use.
const (
	SummaryCurrent            = model.SummaryCurrent
	SummaryStale              = model.SummaryStale
	SummaryIneligible         = model.SummaryIneligible
	CauseCorrected            = model.CauseCorrected
	CauseDeleted              = model.CauseDeleted
	CauseRetracted            = model.CauseRetracted
	CauseDisputed             = model.CauseDisputed
	CausePersonasNarrowed     = model.CausePersonasNarrowed
	CauseRestrictionsChanged  = model.CauseRestrictionsChanged
	CauseSensitivityChanged   = model.CauseSensitivityChanged
	CauseParentStale          = model.CauseParentStale
	KindRelationship          = model.KindRelationship
	AssertionReported         = model.AssertionReported
	ConfirmationConfirmed     = model.ConfirmationConfirmed
	ConfirmationDisputed      = model.ConfirmationDisputed
	ConfirmationUnconfirmed   = model.ConfirmationUnconfirmed
	DisclosureReference       = model.DisclosureReference
	DisclosureValue           = model.DisclosureValue
	GuardKeysOnly             = model.GuardKeysOnly
	GuardLocalProcessingOnly  = model.GuardLocalProcessingOnly
	GuardMaxSensitivity       = model.GuardMaxSensitivity
	GuardNoTraining           = model.GuardNoTraining
	GuardPurposeOnly          = model.GuardPurposeOnly
	KindApprovalDenied        = model.KindApprovalDenied
	KindApprovalRequired      = model.KindApprovalRequired
	KindConflict              = model.KindConflict
	KindInternal              = model.KindInternal
	KindInvalid               = model.KindInvalid
	KindLocked                = model.KindLocked
	KindMethodNotAllowed      = model.KindMethodNotAllowed
	KindModeDenied            = model.KindModeDenied
	KindNotFound              = model.KindNotFound
	KindPurposeRequired       = model.KindPurposeRequired
	KindQualificationRequired = model.KindQualificationRequired
	KindRateLimited           = model.KindRateLimited
	KindRestrictionBlocked    = model.KindRestrictionBlocked
	KindSchema                = model.KindSchema
	KindScopeExceeded         = model.KindScopeExceeded
	KindSessionRequired       = model.KindSessionRequired
	KindTooLarge              = model.KindTooLarge
	KindUnauthenticated       = model.KindUnauthenticated
	KindUserOnlyWrite         = model.KindUserOnlyWrite
	KindVaultBadRequest       = model.KindVaultBadRequest
	KindVaultClockSkew        = model.KindVaultClockSkew
	KindVaultDisabled         = model.KindVaultDisabled
	KindVaultExpired          = model.KindVaultExpired
	KindVaultPending          = model.KindVaultPending
	KindVaultTooManyRefs      = model.KindVaultTooManyRefs
	KindVaultUnknownKey       = model.KindVaultUnknownKey
	KindVaultUnknownRef       = model.KindVaultUnknownRef
	ModeRead                  = model.ModeRead
	ModeReadWrite             = model.ModeReadWrite
	ModeWrite                 = model.ModeWrite
	OpConfirm                 = model.OpConfirm
	OpContribute              = model.OpContribute
	OpRead                    = model.OpRead
	OpShare                   = model.OpShare
	SensitivityCritical       = model.SensitivityCritical
	SensitivityPublic         = model.SensitivityPublic
	SensitivitySensitive      = model.SensitivitySensitive
	SensitivityStandard       = model.SensitivityStandard
	StatusActive              = model.StatusActive
	StatusConfirmed           = model.StatusConfirmed
	StatusDeleted             = model.StatusDeleted
	StatusProposed            = model.StatusProposed
	StatusRejected            = model.StatusRejected
	StatusRetracted           = model.StatusRetracted
	StatusSuperseded          = model.StatusSuperseded
	StatusWithdrawn           = model.StatusWithdrawn
	SubjectSelf               = model.SubjectSelf
	WrittenByUser             = model.WrittenByUser
)

// Operations is every operation a grant can allow (model.Operations).
var Operations = model.Operations

// Kinds is every Kind, in table order (model.Kinds).
func Kinds() []Kind { return model.Kinds() }

// KindOf is the Kind of err, KindInternal for errors not the domain's
// (model.KindOf).
func KindOf(err error) Kind { return model.KindOf(err) }

// Describe is the wire form of err (model.Describe).
func Describe(err error) WireError { return model.Describe(err) }

// OIDCRecipient is the recipient name of an OIDC subject at an issuer
// (model.OIDCRecipient).
func OIDCRecipient(issuer, subject string) string { return model.OIDCRecipient(issuer, subject) }
