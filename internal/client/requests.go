package client

import (
	"encoding/json"

	"github.com/phc-project/phc/custodian"
)

// The request bodies of the routes whose input has no exported type in
// package custodian (the others take custodian's: ConsumerInput,
// ConfirmInput, EntityInput, …). Optional members are left out when
// empty.

// UnlockRequest is the body of POST /context/unlock.
// TODO(typedin): custodian's input type.
type UnlockRequest struct {
	Password  string `json:"password"`
	SecretKey string `json:"secret_key"`
}

// TokenRequest is the body of POST /context/tokens/service: an app's
// consumer name and secret, and the token it asks for.
// TODO(typedin): custodian's input type.
type TokenRequest struct {
	Consumer string `json:"consumer"`
	Secret   string `json:"secret"`
	Scope    string `json:"scope"` // comma-separated key patterns
	Mode     string `json:"mode"`
	TTL      string `json:"ttl"`
	Purpose  string `json:"purpose,omitempty"`
}

// PersonaRequest is the body of POST /phc/v1/personas.
// TODO(typedin): custodian's input type.
type PersonaRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// PersonaUpdate is the body of PUT /phc/v1/personas/{id}: each member
// given replaces the persona's, each left nil keeps it (a pointer to an
// empty list empties it).
// TODO(typedin): custodian's input type.
type PersonaUpdate struct {
	Name        string             `json:"name,omitempty"`
	Preferences *[]string          `json:"preferences,omitempty"`
	Guardrails  *[]json.RawMessage `json:"guardrails,omitempty"`
}

// GrantRequest is the body of POST /phc/v1/grants.
// TODO(typedin): custodian's input type.
type GrantRequest struct {
	Recipient  custodian.Recipient `json:"recipient"`
	Purpose    string              `json:"purpose"`
	Category   string              `json:"purpose_category,omitempty"`
	Operations []string            `json:"operations"`
	Selectors  custodian.Selectors `json:"selectors"`
	ExpiresAt  string              `json:"expires_at"` // RFC 3339
	Disclosure string              `json:"disclosure,omitempty"`
}

// NarrowRequest is the body of POST /phc/v1/grants/{id}/narrow: each
// member given replaces that term of the grant.
// TODO(typedin): custodian's input type.
type NarrowRequest struct {
	Operations []string           `json:"operations,omitempty"`
	Selectors  *NarrowedSelectors `json:"selectors,omitempty"`
	ExpiresAt  string             `json:"expires_at,omitempty"` // RFC 3339
}

// NarrowedSelectors are the selectors a narrowing replaces: each list that
// is not nil (even an empty one) replaces the grant's.
// TODO(typedin): custodian's input type.
type NarrowedSelectors struct {
	Keys     *[]string `json:"keys,omitempty"`
	Personas *[]string `json:"personas,omitempty"`
	Claims   *[]string `json:"claims,omitempty"`
}

// ProposalRequest is the body of POST /phc/v1/proposals.
// TODO(typedin): custodian's input type.
type ProposalRequest struct {
	Key       string            `json:"key"`
	Value     json.RawMessage   `json:"value"`
	Kind      string            `json:"kind"`
	Assertion string            `json:"assertion"`
	Subject   string            `json:"subject,omitempty"`
	Reported  map[string]string `json:"reported,omitempty"`
}

// ValueRequest is the body of PUT /context/fields/{id} (a field's new
// value) and of PUT /phc/v1/claims/{id} (a claim's corrected value).
// TODO(typedin): custodian's input type.
type ValueRequest struct {
	Value json.RawMessage `json:"value"`
}

// QuarantineRejectRequest is the body of POST /phc/v1/quarantine/reject.
// TODO(typedin): custodian's input type.
type QuarantineRejectRequest struct {
	IDs []string `json:"ids"`
	All bool     `json:"all"`
}

// SettingsPatch is the body of PUT /phc/v1/settings: the settings it
// changes, by name, each with its new value.
// TODO(typedin): custodian's input type.
type SettingsPatch map[string]any

// DecisionRequest is the body of POST /context/requests/{id}/approve or
// deny.
// TODO(typedin): custodian's input type.
type DecisionRequest struct {
	Password     string              `json:"password,omitempty"`
	Requires     *custodian.Requires `json:"requires,omitempty"`
	DropRequires bool                `json:"drop_requires,omitempty"`
	Disclosure   string              `json:"disclosure,omitempty"`
}

// VaultKeyRequest is the body of POST /phc/v1/vault-keys/activate or
// revoke.
// TODO(typedin): custodian's input type.
type VaultKeyRequest struct {
	Key string `json:"key"` // a kid or a vk_ id
}
