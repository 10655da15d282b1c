package model

import (
	"encoding/json"
	"time"

	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/valueref"
	"github.com/phc-project/phc/quarantine"
)

// ImportResult counts what an import did.
type ImportResult struct {
	Imported int `json:"imported"` // claims
	Skipped  int `json:"skipped"`  // claims held here already
	Removed  int `json:"removed"`
	// Entities and Summaries count the entities and summaries restored
	// (those held here already are kept as they are).
	Entities  int `json:"entities,omitempty"`
	Summaries int `json:"summaries,omitempty"`
	// RemovedClaims lists what replace erased.
	RemovedClaims []string `json:"removed_claims,omitempty"`
	// Held counts the records of another vault's archive held in the
	// quarantine (nothing of such an archive is used, or erased, at once).
	Held int `json:"held,omitempty"`
	// LossReport lists, by id and reason (never a value), what of another
	// vault's archive did not come: claims that stay with the custodian
	// that made it (no_export, source_controlled, third_party), and unknown
	// advisory restrictions dropped.
	LossReport []quarantine.Loss `json:"loss_report,omitempty"`
	Revision   uint64            `json:"revision"`
}

// Adopted is what an adopt did: how many held records it adopted, at
// which revision (the last, when it took several writes), and which
// approved apps read how many of the adopted claims right now — by a read
// grant in force, or by the owner's auto_grant.
type Adopted struct {
	Adopted  int            `json:"adopted"`
	Revision uint64         `json:"revision"`
	ReadBy   map[string]int `json:"read_by"`
}

// Card is a custodian's public identity: its id and its public keys.
type Card struct {
	CustodianID string          `json:"custodian_id"`
	JWKS        json.RawMessage `json:"jwks"`
	CreatedAt   time.Time       `json:"created_at"`
}

// PinnedCustodian is another custodian whose card the owner pinned: only
// bundles it signs can be imported.
type PinnedCustodian struct {
	Card
	PinnedAt time.Time `json:"pinned_at"`
	Revision uint64    `json:"revision"`
}

// BundleVersion is the bundle format this custodian writes.
const BundleVersion = quarantine.BundleVersion

// BundleManifest describes a bundle: who made it for whom, what it holds
// and what stayed behind.
type BundleManifest = quarantine.Manifest

// Loss is a record that did not travel: its id and why, never its value.
type Loss = quarantine.Loss

// BundleRecords is what a bundle carries: never grants, tokens, consumers,
// secrets, keys or receipts.
type BundleRecords struct {
	Claims     []BundleClaim `json:"claims"`
	Personas   []Persona     `json:"personas"`
	Entities   []Entity      `json:"entities"`
	Summaries  []Summary     `json:"summaries"`
	Identities []IdentityRef `json:"identities"`
}

// BundleClaim is one claim with every version and its personas.
type BundleClaim struct {
	ID       string   `json:"id"`
	Personas []string `json:"personas"`
	Versions []*Claim `json:"versions"`
}

// IdentityRef names a producer at the source; it stays foreign at the
// destination until its owner maps it.
type IdentityRef = quarantine.IdentityRef

// Quarantine statuses.
const (
	StatusQuarantined = quarantine.StatusQuarantined
	StatusBlocked     = quarantine.StatusBlocked // an unknown mandatory restriction: no adopt until the owner removes it
)

// ImportReport is the answer of an import.
type ImportReport = quarantine.Report

// QuarantineQuery selects held records (see quarantine.Query).
type QuarantineQuery = quarantine.Query

// QuarantinePage is a page of held records, oldest first, without bodies.
type QuarantinePage = quarantine.Page

// Binding states of a vault key.
const (
	VaultKeyPending = "pending"
	VaultKeyActive  = "active"
	VaultKeyBlocked = "blocked" // shown by a second reader, before such a showing was refused instead: blocked for both
	VaultKeyRevoked = "revoked"
)

// Limits of the Client-Vault v=1 protocol.
const (
	MaxVaultKeysPerReader = 5                // bindings a reader may hold (not revoked)
	MaxResolveRefs        = valueref.MaxRefs // keys in one resolve
	MaxResolveBody        = valueref.MaxBody // bytes of one resolve body
	VaultValuesPerDay     = 100              // values resolved per reader and UTC day
	VaultValuesPerDayAll  = 1000             // values resolved per UTC day, all readers together
	MaxClockSkew          = 5 * time.Minute
	BucketVaultKeys       = "vault_keys" // vk_… → VaultKey
	MetaVaultQuota        = "vault_quota"
)

// VaultKey is the binding of one local vault's kid to a reader.
type VaultKey struct {
	ID          string     `json:"id"`     // vk_…
	Kid         string     `json:"kid"`    // base64(SHA-256(K)), as the header carries it
	Reader      string     `json:"reader"` // the reader it is bound to
	Status      string     `json:"status"` // pending | active | blocked | revoked
	FirstSeen   time.Time  `json:"first_seen"`
	ActivatedAt *time.Time `json:"activated_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	// BlockedBy is the second reader that showed the kid (bindings blocked
	// before a second reader's showing was refused instead).
	BlockedBy string `json:"blocked_by,omitempty"`
}

// ResolveResult is the 200 answer of a resolve: one string per key.
type ResolveResult struct {
	Values map[string]string `json:"values"`
}

// DECTrust is the trust store as the owner lists it.
type DECTrust struct {
	Issuers  []DECIssuer `json:"issuers"`
	Policies []DECPolicy `json:"policies"`
}

// PresentationView is a stored presentation as the owner lists it: ids,
// never the document.
type PresentationView struct {
	Token       string    `json:"token"`
	Recipient   string    `json:"recipient"`
	PresentedAt time.Time `json:"presented_at"`
}

// Presented is the answer to PresentDEC: the admission under each policy
// the recipient's grants require.
type Presented struct {
	Admissions []dectype.Admission `json:"admissions"`
	Revision   uint64              `json:"revision"`
}

// TrustAdded is the answer of AddTrust: the new entry, what the issuer's
// discovery document and key set said, and warnings when they could not be
// read (the entry is made all the same: an issuer may be down for a while).
type TrustAdded struct {
	TrustedIssuer
	Discovery *identity.Discovery `json:"discovery,omitempty"`
	Warnings  []string            `json:"warnings,omitempty"`
}

// Exchanged is the RFC 8693 answer of POST /phc/v1/token.
type Exchanged struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope"`
	Mode            string `json:"mode"`
	Revision        uint64 `json:"revision"`
}
