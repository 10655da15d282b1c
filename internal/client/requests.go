package client

import "encoding/json"

// The request bodies that custodian's input types do not serve (every
// other method takes custodian's: GrantInput, ProposalInput, …).

// TokenRequest is the body of POST /context/tokens/service: an app's
// consumer name and secret, and the token it asks for. (custodian's
// TokenRequest holds its scope in a type of its own that no other package
// can name, and so cannot build.)
type TokenRequest struct {
	Consumer string `json:"consumer"`
	Secret   string `json:"secret"`
	Scope    string `json:"scope"` // comma-separated key patterns
	Mode     string `json:"mode"`
	TTL      string `json:"ttl"`
	Purpose  string `json:"purpose,omitempty"`
}

// PersonaUpdate is the body of PUT /phc/v1/personas/{id}: each member
// given replaces the persona's, each left nil keeps it (a pointer to an
// empty list empties it). Its guardrails are JSON as the owner gave them,
// for the daemon's schema to judge: custodian.PersonaUpdateInput holds
// typed guardrails, which would drop a member the schema refuses before
// the daemon could refuse it.
type PersonaUpdate struct {
	Name        string             `json:"name,omitempty"`
	Preferences *[]string          `json:"preferences,omitempty"`
	Guardrails  *[]json.RawMessage `json:"guardrails,omitempty"`
}

// SettingsPatch is the body of PUT /phc/v1/settings: the settings it
// changes, by name, each with its new value; the others are left out.
// (custodian.SettingsInput writes each setting not changed as null; the
// CLI changes settings by the name the owner types.)
type SettingsPatch map[string]any

// VaultKeyRequest is the body of POST /phc/v1/vault-keys/activate or
// revoke, which the HTTP API decodes itself (custodian has no input type
// for it).
type VaultKeyRequest struct {
	Key string `json:"key"` // a kid or a vk_ id
}
