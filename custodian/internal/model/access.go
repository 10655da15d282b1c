package model

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/pcp"
)

// Known restriction types (docs/design.md §4).
const (
	RestrictNoExport            = "no_export"
	RestrictPurposeOnly         = "purpose_only"
	RestrictExpires             = "expires"
	RestrictSourceControlled    = "source_controlled"
	RestrictThirdParty          = "third_party"
	RestrictNoTraining          = "no_training"
	RestrictLocalProcessingOnly = "local_processing_only"
)

// Purpose categories (docs/design.md §4), aligned with W3C DPV purposes:
// dpv:ServiceProvision, dpv:Personalisation, dpv:ResearchAndDevelopment,
// dpv:Marketing, the training of AI models, dpv:LegalCompliance and
// dpv:EnforceSecurity.
const (
	CategoryServiceProvision = "service_provision"
	CategoryPersonalisation  = "personalisation"
	CategoryResearch         = "research_and_development"
	CategoryMarketing        = "marketing"
	CategoryModelTraining    = "model_training"
	CategoryLegalCompliance  = "legal_compliance"
	CategorySecurity         = "security"
)

// PurposeCategories is the closed vocabulary of purpose categories.
var PurposeCategories = []string{CategoryServiceProvision, CategoryPersonalisation, CategoryResearch,
	CategoryMarketing, CategoryModelTraining, CategoryLegalCompliance, CategorySecurity}

// GrantCreated is the answer to a new grant.
type GrantCreated struct {
	ID       string `json:"id"`
	Revision uint64 `json:"revision"`
}

// TermSelectors are the selectors of GrantTerms: nil keeps the grant's.
type TermSelectors struct {
	Keys     []string `json:"keys"`
	Personas []string `json:"personas"`
	Claims   []string `json:"claims"`
}

// GrantNarrowed is the answer to NarrowGrant: the grant as it now stands
// and the revision from which it does.
type GrantNarrowed struct {
	Grant    Grant  `json:"grant"`
	Revision uint64 `json:"revision"`
}

// ConsumerView is a consumer as shown: never its secret or hash.
type ConsumerView struct {
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	// RegisteredAt is CreatedAt under PCP's name (PCP §4 "Consumer
	// registration": 201 {name, registered_at}).
	RegisteredAt time.Time `json:"registered_at"`
	Revision     uint64    `json:"revision,omitempty"` // of the write that registered it, in AddConsumer's answer
}

// Consumer statuses.
const (
	ConsumerApproved = "approved"
	ConsumerPending  = "pending"
)

// TokenIssued carries a new service token. The token is shown once.
type TokenIssued struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Scope     []string  `json:"scope"`
	Mode      string    `json:"mode"`
	Purpose   string    `json:"purpose,omitempty"`
	Revision  uint64    `json:"revision"`
	// Warnings says what was not as asked: a ttl beyond what the owner
	// allows is clamped, and ExpiresAt is the real expiry.
	Warnings []string `json:"warnings,omitempty"`
}

// TokenView is a service token as the owner sees it: never the token, only
// the prefix shown when it was issued.
type TokenView struct {
	Prefix    string     `json:"prefix"`
	Consumer  string     `json:"consumer"`
	Scope     []string   `json:"scope"`
	Mode      string     `json:"mode"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Active    bool       `json:"active"`
}

// Request statuses.
const (
	RequestPending  = "pending"
	RequestApproved = "approved"
	RequestDenied   = "denied"
)

// RequestView is what the requesting consumer sees of its request; Token is
// set once, on the first answer after approval.
type RequestView struct {
	ID        string     `json:"request_id"`
	Status    string     `json:"status"`
	Scope     []string   `json:"scope"`
	Purpose   string     `json:"purpose"`
	Tier      string     `json:"tier,omitempty"` // the highest tier the scope may reach
	Token     string     `json:"token,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Revision  uint64     `json:"revision"`
}

// AuditEntry is one receipt in the shape PCP's audit log uses (see
// pcp.AuditEntry).
type AuditEntry = pcp.AuditEntry

// ContextQuery asks for context for a purpose.
type ContextQuery struct {
	Purpose     string
	Persona     string // optional: only claims in this persona
	MinRevision uint64 // optional: the state must include this revision
}

// ContextResult is the eligible, current context a recipient receives.
type ContextResult struct {
	Revision uint64 `json:"revision"`
	// Claims are shared with the custodian's cache: read them, never
	// modify them.
	Claims []*Claim `json:"claims"`
	// Persona is the persona the read named, when a grant for the purpose
	// selects it and its guardrails allow the read: its preferences,
	// labelled advisory.
	Persona *PersonaContext `json:"persona,omitempty"`

	raw []json.RawMessage // Claims, encoded (from the records' caches); MarshalJSON writes them as claims
}

// PersonaContext is what a recipient receives about the persona its read
// named: the persona's id and its preferences, which are advisory.
type PersonaContext struct {
	ID          string              `json:"id"`
	Preferences AdvisoryPreferences `json:"preferences"`
}

// AdvisoryPreferences are a persona's preferences as served: guidance for
// the response, labelled advisory (never a restriction, never a fact).
type AdvisoryPreferences struct {
	Advisory bool     `json:"advisory"`
	Items    []string `json:"items"`
}

// MarshalJSON encodes r from the claims' cached encodings: a read of many
// AppendContextClaim adds c, whose encoding is raw, to r's claims. The
// encodings are the core's to set: an adapter (which cannot import this
// package) only encodes r.
func AppendContextClaim(r *ContextResult, c *Claim, raw json.RawMessage) {
	r.Claims = append(r.Claims, c)
	r.raw = append(r.raw, raw)
}

// SetContextClaim replaces r's claim i by c, whose encoding is raw.
func SetContextClaim(r *ContextResult, i int, c *Claim, raw json.RawMessage) {
	r.Claims[i], r.raw[i] = c, raw
}

// fields does not encode them again.
func (r ContextResult) MarshalJSON() ([]byte, error) {
	if len(r.raw) != len(r.Claims) {
		type plain ContextResult
		return json.Marshal(plain(r))
	}
	var persona json.RawMessage
	if r.Persona != nil {
		pc, err := json.Marshal(r.Persona)
		if err != nil {
			return nil, err
		}
		persona = pc
	}
	return pcp.EncodeContext(r.Revision, r.raw, persona), nil
}

// Why a consumer's token reads nothing of a scope (ScopeRead.NotRead).
const (
	NotReadMode    = "mode"    // the token does not allow reads
	NotReadPurpose = "purpose" // the token is bound to another purpose
)

// ScopeRead is what a consumer may read now of a scope, for a purpose:
// the fields the scope's patterns cover, with values, in key order.
type ScopeRead struct {
	Fields   []pcp.Field
	Warnings []string
	Revision uint64
	// NotRead says why nothing was read at all ("" when the read was
	// made): NotReadMode or NotReadPurpose, which TokenPurpose names.
	NotRead      string
	TokenPurpose string
	// Unreached lists the scope's patterns the token's own scope does not
	// wholly cover: what they cover beyond it is read by no token of this
	// scope.
	Unreached []string
}

// Status is what anyone may know about the custodian, plus the counts only
// the owner may see.
type Status struct {
	Initialized bool           `json:"initialized"`
	Locked      bool           `json:"locked"`
	FieldCount  *int           `json:"field_count,omitempty"`
	Categories  map[string]int `json:"categories,omitempty"` // active fields per category, as PCP reports them
	Revision    uint64         `json:"revision,omitempty"`
}

// NotTraining reports whether a use of category is known not to train
// models: it names a category, and not model training.
func NotTraining(category string) bool {
	return category != "" && category != CategoryModelTraining
}

// RestrictionsAllow reports whether a claim with rs may be read for purpose
// under g at now. An unknown mandatory restriction blocks every use; an
// unknown advisory one is ignored.
func RestrictionsAllow(rs []Restriction, purpose string, g *Grant, now time.Time) bool {
	if g.Auto {
		purpose = "" // the app's own words: no purpose_only is met by them
	}
	for _, r := range rs {
		switch r.Type {
		case RestrictPurposeOnly:
			if !paramHas(r.Params, "purposes", purpose) {
				return false
			}
		case RestrictExpires:
			at, ok := r.Params["at"].(string)
			if !ok {
				return false
			}
			t, err := time.Parse(time.RFC3339, strings.ToUpper(at))
			if err != nil || !now.Before(t) {
				return false
			}
		case RestrictLocalProcessingOnly:
			// Only a grant that promises local processing may carry it.
			if g.Route != "local" {
				return false
			}
		case RestrictNoTraining:
			// The purpose's category decides, never its free text: a grant
			// for model training, or one that does not say what kind of use
			// it is (auto_grant's included), may not read it.
			if g.Auto || !NotTraining(g.Category) {
				return false
			}
		case RestrictNoExport, RestrictSourceControlled, RestrictThirdParty:
			// These limit export and re-sharing, not a granted read.
		default:
			if r.Mandatory {
				return false
			}
		}
	}
	return true
}

func paramHas(params map[string]any, name, want string) bool {
	list, ok := params[name].([]any)
	if !ok {
		return false
	}
	for _, v := range list {
		if s, ok := v.(string); ok && s == want {
			return true
		}
	}
	return false
}
