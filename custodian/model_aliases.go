package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/pcp"
)

// The records the rules decide over, and the domain error (package model),
// under the names the rules and the adapters use.
type (
	Adopted          = model.Adopted
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
	Persona          = model.Persona
	Presentation     = model.Presentation
	Producer         = model.Producer
	Proposal         = model.Proposal
	QuarantineRecord = model.QuarantineRecord
	RateLimit        = model.RateLimit
	Receipt          = model.Receipt
	Recipient        = model.Recipient
	Relationship     = model.Relationship
	Requires         = model.Requires
	Restriction      = model.Restriction
	Row              = model.Row
	Selectors        = model.Selectors
	ServiceToken     = model.ServiceToken
	Settings         = model.Settings
	SettingsInput    = model.SettingsInput
	Staleness        = model.Staleness
	Summary          = model.Summary
	SummaryInput     = model.SummaryInput
	SummaryRead      = model.SummaryRead
	SummaryWritten   = model.SummaryWritten
	TrustedIssuer    = model.TrustedIssuer
	Verification     = model.Verification
	VerifiedIDToken  = model.VerifiedIDToken
	WireError        = model.WireError
)

// The inputs of the core's methods (package model).
type (
	AdoptInput            = model.AdoptInput
	ExportInput           = model.ExportInput
	ImportInput           = model.ImportInput
	UnblockInput          = model.UnblockInput
	BulkConfirmInput      = model.BulkConfirmInput
	BulkRejectInput       = model.BulkRejectInput
	ConfirmInput          = model.ConfirmInput
	ConsumerInput         = model.ConsumerInput
	DECDocumentInput      = model.DECDocumentInput
	DECPolicyInput        = model.DECPolicyInput
	DECTrustInput         = model.DECTrustInput
	DECUnrevokeInput      = model.DECUnrevokeInput
	DecisionInput         = model.DecisionInput
	EntityInput           = model.EntityInput
	ExchangeInput         = model.ExchangeInput
	FieldInput            = model.FieldInput
	GrantInput            = model.GrantInput
	GrantTerms            = model.GrantTerms
	Input                 = model.Input
	PersonaInput          = model.PersonaInput
	PersonaUpdateInput    = model.PersonaUpdateInput
	ProposalInput         = model.ProposalInput
	QuarantineRejectInput = model.QuarantineRejectInput
	RejectInput           = model.RejectInput
	RequestInput          = model.RequestInput
	ResolveInput          = model.ResolveInput
	SensitivityInput      = model.SensitivityInput
	TokenRequest          = model.TokenRequest
	TrustInput            = model.TrustInput
	UnlockInput           = model.UnlockInput
)

// The shapes of the core's answers (package model).
type (
	AdvisoryPreferences = model.AdvisoryPreferences
	AuditEntry          = model.AuditEntry
	BulkDecision        = model.BulkDecision
	BulkItem            = model.BulkItem
	BundleClaim         = model.BundleClaim
	BundleManifest      = model.BundleManifest
	BundleRecords       = model.BundleRecords
	Card                = model.Card
	CategoryFields      = model.CategoryFields
	CheckReport         = model.CheckReport
	ClaimList           = model.ClaimList
	ClaimRead           = model.ClaimRead
	ConsumerView        = model.ConsumerView
	ContextBundle       = model.ContextBundle
	ContextQuery        = model.ContextQuery
	ContextResult       = model.ContextResult
	CorrectionInput     = model.CorrectionInput
	DECTrust            = model.DECTrust
	Edits               = model.Edits
	EntityCreated       = model.EntityCreated
	Exchanged           = model.Exchanged
	FieldList           = model.FieldList
	FieldRead           = model.FieldRead
	FieldWritten        = model.FieldWritten
	GrantCreated        = model.GrantCreated
	GrantNarrowed       = model.GrantNarrowed
	GraphReport         = model.GraphReport
	IdentityRef         = model.IdentityRef
	ImportReport        = model.ImportReport
	ImportResult        = model.ImportResult
	Loss                = model.Loss
	NeighborEdge        = model.NeighborEdge
	NeighborQuery       = model.NeighborQuery
	Neighbors           = model.Neighbors
	OwnProposals        = model.OwnProposals
	PersonaContext      = model.PersonaContext
	PersonaDeleted      = model.PersonaDeleted
	PersonasInput       = model.PersonasInput
	PinnedCustodian     = model.PinnedCustodian
	PresentationView    = model.PresentationView
	Presented           = model.Presented
	ProposalStatus      = model.ProposalStatus
	Proposed            = model.Proposed
	QuarantinePage      = model.QuarantinePage
	QuarantineQuery     = model.QuarantineQuery
	Readable            = model.Readable
	ReadablePurpose     = model.ReadablePurpose
	RequestView         = model.RequestView
	ResolveResult       = model.ResolveResult
	ReviewCurrent       = model.ReviewCurrent
	ReviewItem          = model.ReviewItem
	ScopeRead           = model.ScopeRead
	SearchResult        = model.SearchResult
	Status              = model.Status
	TermSelectors       = model.TermSelectors
	TokenIssued         = model.TokenIssued
	TokenView           = model.TokenView
	TrustAdded          = model.TrustAdded
	ValueChange         = model.ValueChange
	VaultKey            = model.VaultKey
	Written             = model.Written
)

// The model's constants.
const (
	AssertionReported           = model.AssertionReported
	BundleVersion               = model.BundleVersion
	CategoryLegalCompliance     = model.CategoryLegalCompliance
	CategoryMarketing           = model.CategoryMarketing
	CategoryModelTraining       = model.CategoryModelTraining
	CategoryPersonalisation     = model.CategoryPersonalisation
	CategoryResearch            = model.CategoryResearch
	CategorySecurity            = model.CategorySecurity
	CategoryServiceProvision    = model.CategoryServiceProvision
	CauseCorrected              = model.CauseCorrected
	CauseDeleted                = model.CauseDeleted
	CauseDisputed               = model.CauseDisputed
	CauseParentStale            = model.CauseParentStale
	CausePersonasNarrowed       = model.CausePersonasNarrowed
	CauseRestrictionsChanged    = model.CauseRestrictionsChanged
	CauseRetracted              = model.CauseRetracted
	CauseSensitivityChanged     = model.CauseSensitivityChanged
	ConfirmationConfirmed       = model.ConfirmationConfirmed
	ConfirmationDisputed        = model.ConfirmationDisputed
	ConfirmationUnconfirmed     = model.ConfirmationUnconfirmed
	ConsumerApproved            = model.ConsumerApproved
	ConsumerPending             = model.ConsumerPending
	DisclosureReference         = model.DisclosureReference
	DisclosureValue             = model.DisclosureValue
	GuardKeysOnly               = model.GuardKeysOnly
	GuardLocalProcessingOnly    = model.GuardLocalProcessingOnly
	GuardMaxSensitivity         = model.GuardMaxSensitivity
	GuardNoTraining             = model.GuardNoTraining
	GuardPurposeOnly            = model.GuardPurposeOnly
	KindApprovalDenied          = model.KindApprovalDenied
	KindApprovalRequired        = model.KindApprovalRequired
	KindConflict                = model.KindConflict
	KindInternal                = model.KindInternal
	KindInvalid                 = model.KindInvalid
	KindLocked                  = model.KindLocked
	KindMethodNotAllowed        = model.KindMethodNotAllowed
	KindModeDenied              = model.KindModeDenied
	KindNotFound                = model.KindNotFound
	KindPurposeRequired         = model.KindPurposeRequired
	KindQualificationRequired   = model.KindQualificationRequired
	KindRateLimited             = model.KindRateLimited
	KindRelationship            = model.KindRelationship
	KindRestrictionBlocked      = model.KindRestrictionBlocked
	KindSchema                  = model.KindSchema
	KindScopeExceeded           = model.KindScopeExceeded
	KindSessionRequired         = model.KindSessionRequired
	KindTooLarge                = model.KindTooLarge
	KindUnauthenticated         = model.KindUnauthenticated
	KindUserOnlyWrite           = model.KindUserOnlyWrite
	KindVaultBadRequest         = model.KindVaultBadRequest
	KindVaultClockSkew          = model.KindVaultClockSkew
	KindVaultDisabled           = model.KindVaultDisabled
	KindVaultExpired            = model.KindVaultExpired
	KindVaultPending            = model.KindVaultPending
	KindVaultTooManyRefs        = model.KindVaultTooManyRefs
	KindVaultUnknownKey         = model.KindVaultUnknownKey
	KindVaultUnknownRef         = model.KindVaultUnknownRef
	MaxDepth                    = model.MaxDepth
	MaxResolveBody              = model.MaxResolveBody
	MaxResolveRefs              = model.MaxResolveRefs
	MaxVaultKeysPerReader       = model.MaxVaultKeysPerReader
	ModeRead                    = model.ModeRead
	ModeReadWrite               = model.ModeReadWrite
	ModeWrite                   = model.ModeWrite
	NotReadMode                 = model.NotReadMode
	NotReadPurpose              = model.NotReadPurpose
	OpConfirm                   = model.OpConfirm
	OpContribute                = model.OpContribute
	OpRead                      = model.OpRead
	OpShare                     = model.OpShare
	PCPVersion                  = model.PCPVersion
	RequestApproved             = model.RequestApproved
	RequestDenied               = model.RequestDenied
	RequestPending              = model.RequestPending
	RestrictExpires             = model.RestrictExpires
	RestrictLocalProcessingOnly = model.RestrictLocalProcessingOnly
	RestrictNoExport            = model.RestrictNoExport
	RestrictNoTraining          = model.RestrictNoTraining
	RestrictPurposeOnly         = model.RestrictPurposeOnly
	RestrictSourceControlled    = model.RestrictSourceControlled
	RestrictThirdParty          = model.RestrictThirdParty
	SensitivityCritical         = model.SensitivityCritical
	SensitivityPublic           = model.SensitivityPublic
	SensitivitySensitive        = model.SensitivitySensitive
	SensitivityStandard         = model.SensitivityStandard
	StatusActive                = model.StatusActive
	StatusBlocked               = model.StatusBlocked
	StatusConfirmed             = model.StatusConfirmed
	StatusDeleted               = model.StatusDeleted
	StatusProposed              = model.StatusProposed
	StatusQuarantined           = model.StatusQuarantined
	StatusRejected              = model.StatusRejected
	StatusRetracted             = model.StatusRetracted
	StatusSuperseded            = model.StatusSuperseded
	StatusWithdrawn             = model.StatusWithdrawn
	SubjectSelf                 = model.SubjectSelf
	SummaryCurrent              = model.SummaryCurrent
	SummaryIneligible           = model.SummaryIneligible
	SummaryStale                = model.SummaryStale
	VaultKeyActive              = model.VaultKeyActive
	VaultKeyBlocked             = model.VaultKeyBlocked
	VaultKeyPending             = model.VaultKeyPending
	VaultKeyRevoked             = model.VaultKeyRevoked
	VaultValuesPerDay           = model.VaultValuesPerDay
	WriteCommitted              = model.WriteCommitted
	WritePending                = model.WritePending
	WrittenByUser               = model.WrittenByUser
)

// Operations is every operation a grant can allow (model.Operations).
var Operations = model.Operations

// PurposeCategories are the purpose categories PCP names (model.PurposeCategories).
var PurposeCategories = model.PurposeCategories

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

// PCP's well-known keys and write hints (package pcp), as adapters name
// them.
type (
	// WellKnownKey is a key whose meaning phc knows (see pcp.WellKnownKey).
	WellKnownKey = pcp.WellKnownKey
	// Hint is a warning on a field write (see pcp.Hint).
	Hint = pcp.Hint
)

// WellKnownKeys is the one table of well-known keys and their default
// tiers (pcp.WellKnownKeys). A key not at or below any of them defaults to
// standard. The owner overrides the tier of any field.
var WellKnownKeys = pcp.WellKnownKeys

// FieldHints returns the hints for a write to field id (pcp.FieldHints). It
// depends on id alone, never on what the vault holds, so it discloses
// nothing.
func FieldHints(id string) []Hint { return pcp.FieldHints(id) }

// The restriction rules, beside the core (model.RestrictionsAllow).
var (
	restrictionsAllow = model.RestrictionsAllow
	notTraining       = model.NotTraining
)
