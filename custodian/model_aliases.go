package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/pcp"
)

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

// Types of package model, under the names the rules use.
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
	SummaryRead         = model.SummaryRead
	SummaryWritten      = model.SummaryWritten
	TermSelectors       = model.TermSelectors
	TokenIssued         = model.TokenIssued
	TokenView           = model.TokenView
	TrustAdded          = model.TrustAdded
	ValueChange         = model.ValueChange
	VaultKey            = model.VaultKey
	Written             = model.Written
)

const BundleVersion = model.BundleVersion
const CategoryLegalCompliance = model.CategoryLegalCompliance
const CategoryMarketing = model.CategoryMarketing
const CategoryModelTraining = model.CategoryModelTraining
const CategoryPersonalisation = model.CategoryPersonalisation
const CategoryResearch = model.CategoryResearch
const CategorySecurity = model.CategorySecurity
const CategoryServiceProvision = model.CategoryServiceProvision
const ConsumerApproved = model.ConsumerApproved
const ConsumerPending = model.ConsumerPending
const MaxDepth = model.MaxDepth
const MaxResolveBody = model.MaxResolveBody
const MaxResolveRefs = model.MaxResolveRefs
const MaxVaultKeysPerReader = model.MaxVaultKeysPerReader
const NotReadMode = model.NotReadMode
const NotReadPurpose = model.NotReadPurpose
const PCPVersion = model.PCPVersion
const RequestApproved = model.RequestApproved
const RequestDenied = model.RequestDenied
const RequestPending = model.RequestPending
const RestrictExpires = model.RestrictExpires
const RestrictLocalProcessingOnly = model.RestrictLocalProcessingOnly
const RestrictNoExport = model.RestrictNoExport
const RestrictNoTraining = model.RestrictNoTraining
const RestrictPurposeOnly = model.RestrictPurposeOnly
const RestrictSourceControlled = model.RestrictSourceControlled
const RestrictThirdParty = model.RestrictThirdParty
const StatusBlocked = model.StatusBlocked
const StatusQuarantined = model.StatusQuarantined
const VaultKeyActive = model.VaultKeyActive
const VaultKeyBlocked = model.VaultKeyBlocked
const VaultKeyPending = model.VaultKeyPending
const VaultKeyRevoked = model.VaultKeyRevoked
const VaultValuesPerDay = model.VaultValuesPerDay
const WriteCommitted = model.WriteCommitted
const WritePending = model.WritePending

var PurposeCategories = model.PurposeCategories

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

// Types of package model, under the names the rules use.
type (
	BulkConfirmInput      = model.BulkConfirmInput
	BulkRejectInput       = model.BulkRejectInput
	ConfirmInput          = model.ConfirmInput
	ConsumerInput         = model.ConsumerInput
	CorrectionInput       = model.CorrectionInput
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
	PersonasInput         = model.PersonasInput
	ProposalInput         = model.ProposalInput
	QuarantineRejectInput = model.QuarantineRejectInput
	RejectInput           = model.RejectInput
	RequestInput          = model.RequestInput
	ResolveInput          = model.ResolveInput
	SensitivityInput      = model.SensitivityInput
	SettingsInput         = model.SettingsInput
	SummaryInput          = model.SummaryInput
	TokenRequest          = model.TokenRequest
	TrustInput            = model.TrustInput
	UnlockInput           = model.UnlockInput
	decoded               = model.Decoded
	inputSpec             = model.InputSpec
)
