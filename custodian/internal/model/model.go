package model

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// Claim kinds, assertions, sensitivities and statuses (docs/design.md §4).
const (
	AssertionReported = "reported"

	ConfirmationConfirmed   = "confirmed"
	ConfirmationUnconfirmed = "unconfirmed"
	ConfirmationDisputed    = "disputed"

	SensitivityPublic    = "public"
	SensitivityStandard  = "standard"
	SensitivitySensitive = "sensitive"
	SensitivityCritical  = "critical"

	StatusProposed   = "proposed"
	StatusActive     = "active"
	StatusSuperseded = "superseded"
	StatusRetracted  = "retracted"
	StatusDeleted    = "deleted"
	StatusRejected   = "rejected"
	StatusConfirmed  = "confirmed"
	// StatusWithdrawn is a proposal its app withdrew before the owner
	// decided it.
	StatusWithdrawn = "withdrawn"

	SubjectSelf = "self"

	WrittenByUser = "user"
)

// Operations a grant can allow. Each is a separate decision.
const (
	OpRead       = "read"
	OpContribute = "contribute"
	OpConfirm    = "confirm"
	OpShare      = "share"
)

// Operations is every operation a grant can allow, in the order they are
// shown to the owner.
var Operations = []string{OpRead, OpContribute, OpConfirm, OpShare}

// Claim is one version of an attributed claim, the unit of portability.
// Versions are immutable; a correction is a new version.
type Claim struct {
	ID           string          `json:"id"`
	Version      int             `json:"version"`
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value,omitempty"`
	Subject      string          `json:"subject"`
	Kind         string          `json:"kind"`
	Assertion    string          `json:"assertion"`
	Confirmation Confirmation    `json:"confirmation"`
	Producer     Producer        `json:"producer"`
	Evidence     []Evidence      `json:"evidence"`
	ValidFrom    *time.Time      `json:"valid_from,omitempty"`
	ValidTo      *time.Time      `json:"valid_to,omitempty"`
	RecordedAt   time.Time       `json:"recorded_at"`
	Sensitivity  string          `json:"sensitivity"`
	Restrictions []Restriction   `json:"restrictions"`
	Personas     []string        `json:"personas"`
	Status       string          `json:"status"`
	WrittenBy    string          `json:"written_by"`
	Revision     uint64          `json:"revision"`
	Note         string          `json:"note,omitempty"`
}

// Ref is the "id@version" form used in receipts and lineage.
func (c *Claim) Ref() string { return VersionRef(c.ID, c.Version) }

// Confirmation records the owner's decision about a claim. It never turns a
// reported statement into an observed one.
type Confirmation struct {
	Status string     `json:"status"`
	By     string     `json:"by,omitempty"`
	At     *time.Time `json:"at,omitempty"`
}

// Producer keeps what the custodian verified apart from what the producer
// said about itself.
type Producer struct {
	Authenticated Authenticated     `json:"authenticated"`
	Reported      map[string]string `json:"reported,omitempty"`
}

// Authenticated names a verified party.
type Authenticated struct {
	Kind   string `json:"kind"` // owner | consumer | oidc | custodian
	ID     string `json:"id"`
	Issuer string `json:"issuer,omitempty"`
}

// Evidence is a reference only; it is never fetched automatically.
type Evidence struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest,omitempty"`
}

// Restriction limits the use of a claim. An unknown mandatory restriction
// blocks use.
type Restriction struct {
	Type      string         `json:"type"`
	Mandatory bool           `json:"mandatory"`
	Holder    string         `json:"holder,omitempty"`
	Params    map[string]any `json:"params,omitempty"`
}

// Persona selects context and response preferences for a role. It is not an
// identity, a tenant or a permission. Its preferences are advisory: they
// are delivered, labelled so, with context read under it. Its guardrails
// are restrictions on every read under it, and are enforced (see
// guardrails.go).
type Persona struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Preferences []string    `json:"preferences"`
	Guardrails  []Guardrail `json:"guardrails"`
	CreatedAt   time.Time   `json:"created_at"`
	// Node is the persona's opaque key (per_…): its node in the graph and
	// its key in the store. The id is the owner's own word and stays
	// encrypted.
	Node string `json:"node,omitempty"`
}

// Proposal is an application's memory waiting in the owner's review queue.
// Once decided, its draft value is erased: the claim (if any) holds it.
type Proposal struct {
	ID           string          `json:"proposal_id"`
	Status       string          `json:"status"` // proposed | confirmed | rejected
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value,omitempty"`
	Subject      string          `json:"subject"`
	Kind         string          `json:"kind"`
	Assertion    string          `json:"assertion"`
	Producer     Producer        `json:"producer"`
	Evidence     []Evidence      `json:"evidence"`
	ValidFrom    *time.Time      `json:"valid_from,omitempty"`
	ValidTo      *time.Time      `json:"valid_to,omitempty"`
	Sensitivity  string          `json:"sensitivity"`
	Restrictions []Restriction   `json:"restrictions"`
	PersonasHint []string        `json:"personas_hint,omitempty"`
	Note         string          `json:"note,omitempty"`
	ProposedAt   time.Time       `json:"proposed_at"`
	Revision     uint64          `json:"revision"`
	DecidedAt    *time.Time      `json:"decided_at,omitempty"`
	ClaimID      string          `json:"claim_id,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	// Blind marks an app's write to a field it may not read, where a write
	// to a field that does not exist would have been committed: the app
	// was answered so (committed), since a hidden field answers exactly
	// like an absent one, and it never sees this proposal among its own.
	// Blind proposals count against their own per-app cap (BlindBy).
	Blind bool `json:"blind,omitempty"`
}

// Recipient names who a grant is for.
type Recipient struct {
	Kind   string `json:"kind"` // consumer | oidc
	ID     string `json:"id"`
	Issuer string `json:"issuer,omitempty"`
}

// Selectors choose the claims a grant covers. A claim is covered when it
// matches every non-empty selector.
type Selectors struct {
	Keys     []string `json:"keys,omitempty"`
	Personas []string `json:"personas,omitempty"`
	Claims   []string `json:"claims,omitempty"`
}

// Grant is a sharing decision, the only source of authority.
type Grant struct {
	ID        string    `json:"id"`
	Recipient Recipient `json:"recipient"`
	Purpose   string    `json:"purpose"`
	// Category is what kind of use Purpose is (PurposeCategories), shown
	// to the owner; no_training tests it, never the purpose's free text.
	// "" is unspecified: it may be any use.
	Category   string     `json:"purpose_category,omitempty"`
	Operations []string   `json:"operations"`
	Selectors  Selectors  `json:"selectors"`
	ExpiresAt  time.Time  `json:"expires_at"`
	Usage      string     `json:"usage"`
	Route      string     `json:"route,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	Revision   uint64     `json:"revision"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	RevokedRev uint64     `json:"revoked_revision,omitempty"`
	// NarrowedAt and NarrowedRev say when the owner last narrowed the
	// grant's terms (NarrowGrant); Revision stays the one it was made at.
	NarrowedAt  *time.Time `json:"narrowed_at,omitempty"`
	NarrowedRev uint64     `json:"narrowed_revision,omitempty"`
	// MadeWith are the selectors the grant was made with, kept from its
	// first narrowing on. They authorise nothing: a qualification the
	// grant requires still binds later requests over what it first
	// selected (inheritedRequires), so narrowing cannot walk around it.
	MadeWith *Selectors `json:"made_with,omitempty"`
	SpentAt  *time.Time `json:"spent_at,omitempty"` // a single-use grant, once it has served its read
	// Request names the context request whose approval made this grant.
	// Only such a grant — a per-request approval — may cover sensitive
	// fields, and critical ones when the approval re-entered the password.
	Request string `json:"request,omitempty"`
	MaxTier string `json:"max_tier,omitempty"`
	// Auto marks a grant made by the owner's auto_grant policy from an
	// app's request, not by the owner: its purpose and category are the
	// app's own words, so they satisfy no purpose_only restriction and
	// prove nothing to no_training (as on the auto_grant read path).
	Auto bool `json:"auto_approved,omitempty"`
	// Requires adds a condition on reads of sensitive and critical data:
	// a current DCER admission of the presenting token under the policy.
	Requires *Requires `json:"requires,omitempty"`
	// Disclosure is how the values this grant serves reach the reader:
	// "value" or "reference" (docs/formats/reference.md); "" follows the owner's
	// per-tier setting.
	Disclosure string `json:"disclosure,omitempty"`
}

// Requires names the qualification a grant requires (docs/formats/dec.md).
type Requires struct {
	Qualification string `json:"qualification"`
}

// Allows reports whether g is in force at now for operation op.
func (g *Grant) Allows(op string, now time.Time) bool {
	if g.RevokedAt != nil || g.SpentAt != nil || !now.Before(g.ExpiresAt) {
		return false
	}
	for _, o := range g.Operations {
		if o == op {
			return true
		}
	}
	return false
}

// Consumer is a registered application that authenticates with a name and
// a secret. Only the secret's Argon2id hash is kept.
type Consumer struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"` // approved | pending
	SecretHash string    `json:"secret_hash,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Token modes.
const (
	ModeRead      = "read"
	ModeWrite     = "write"
	ModeReadWrite = "read-write"
)

// ServiceToken is a consumer's scoped ctxs_ token. Only its hash is kept.
type ServiceToken struct {
	ID        string     `json:"id"`
	Hash      []byte     `json:"hash"`
	Prefix    string     `json:"prefix"` // first characters of the token, for listing and revocation
	Consumer  string     `json:"consumer"`
	Scope     []string   `json:"scope"`
	Mode      string     `json:"mode"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RateLimit *RateLimit `json:"rate_limit,omitempty"` // lower rates the token asked for
	// Purpose is the one purpose the token reads under: the purpose of the
	// request it came from, or the one named when it was minted; "" for a
	// token bound to none, whose reads that name no purpose are served
	// under the purpose of the app's grants that serve them, where they
	// share one (else purpose_required), and what the owner's auto_grant
	// gives every approved app.
	Purpose string `json:"purpose,omitempty"`
	// Trust names the trust-list entry whose ID token this token was
	// exchanged for (an OIDC recipient's token); "" for a consumer's.
	Trust string `json:"trust,omitempty"`
}

// RateLimit is a token's own request rates, per minute (0: the owner's).
type RateLimit struct {
	Reads  int `json:"reads,omitempty"`
	Writes int `json:"writes,omitempty"`
}

func (t *ServiceToken) CanRead() bool { return t.Mode == ModeRead || t.Mode == ModeReadWrite }

func (t *ServiceToken) CanWrite() bool { return t.Mode == ModeWrite || t.Mode == ModeReadWrite }

// Receipt is the minimized, hash-chained record of one decision or
// disclosure: ids and versions, never values.
type Receipt struct {
	Seq        uint64    `json:"seq"`
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	Operation  string    `json:"operation"`
	Recipient  string    `json:"recipient,omitempty"`
	Purpose    string    `json:"purpose,omitempty"`
	Decision   string    `json:"decision"` // allow | deny
	Constraint string    `json:"constraint,omitempty"`
	Records    []string  `json:"records"`
	// Set, when present, names the disclosed set that stands for Records in
	// the stored receipt: the digest of the refs (see setDigest), each
	// distinct set stored once; Count is its number of refs. The hash
	// covers the stored form (records empty, set and count present); a
	// listing fills Records back in from the set.
	Set      string `json:"set,omitempty"`
	Count    int    `json:"count,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
	Prev     string `json:"prev"`
	Hash     string `json:"hash"`
}

// EffectiveTier is the highest tier g may disclose: standard for a grant the
// owner made, more only for a per-request approval that said so.
func (g *Grant) EffectiveTier() string {
	if g.Request != "" && g.MaxTier != "" {
		return g.MaxTier
	}
	return SensitivityStandard
}

const (
	DefaultTokenTTL   = time.Hour
	MinTokenTTL       = time.Minute
	MaxTokenTTL       = 30 * 24 * time.Hour
	longLivedTokenTTL = 365 * 24 * time.Hour // with the owner's long_lived_tokens
	TTLCeiling        = 10 * 365 * 24 * time.Hour
)

// Sanitize makes every string of r valid UTF-8, so that its JSON encoding
// round-trips byte for byte and its hash verifies after a reload. Callers
// validate what they record; this is the backstop.
func (r *Receipt) Sanitize() {
	fix := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	r.Actor, r.Operation, r.Recipient, r.Purpose, r.Constraint =
		fix(r.Actor), fix(r.Operation), fix(r.Recipient), fix(r.Purpose), fix(r.Constraint)
	for i := range r.Records {
		r.Records[i] = fix(r.Records[i])
	}
}

// WithLists returns a copy of c with empty lists where the view keeps nil:
// the binding's arrays are never null.
func (c *Claim) WithLists() *Claim {
	out := *c
	if out.Evidence == nil {
		out.Evidence = []Evidence{}
	}
	if out.Restrictions == nil {
		out.Restrictions = []Restriction{}
	}
	if out.Personas == nil {
		out.Personas = []string{}
	}
	return &out
}

// Decided is what remains of a proposal once the owner has decided it: its
// id, who proposed it and when, and the decision. The draft (key, value,
// evidence, note, …) is erased: a confirmed claim holds it, and deleting
// that claim must leave nothing of it behind.
func (pr *Proposal) Decided(status string, at time.Time) Proposal {
	return Proposal{
		ID: pr.ID, Status: status,
		Producer:   Producer{Authenticated: pr.Producer.Authenticated},
		Evidence:   []Evidence{},
		ProposedAt: pr.ProposedAt, Revision: pr.Revision, DecidedAt: &at, Blind: pr.Blind,
	}
}

// Default request rates of a service token, per minute (PCP §7: "60
// requests/minute per token", "10 requests/minute per token"): reads and
// writes are counted apart, for each token alone. The owner's settings may
// change the defaults; a token may ask for less, never more. An app holds
// at most its live-token quota of tokens at once, so its total is at most
// that many times a token's rate.
const (
	defaultReadsPerMinute  = 60
	defaultWritesPerMinute = 10
)

// Default quotas of an app (a consumer, or an OIDC subject), whichever of
// its tokens it uses; the owner's settings may change them.
const (
	defaultLiveTokens       = 10  // service tokens unexpired and unrevoked at once
	defaultPendingProposals = 100 // proposals waiting in the review queue
)

// VersionRef is the "id@version" form of a claim version (see Claim.Ref).
func VersionRef(id string, v int) string { return id + "@" + strconv.Itoa(v) }

// ContextRequest is a consumer's request for context (PCP): a scope of key
// patterns, a purpose, a duration and a usage. Where the owner's auto_grant
// covers the tier its scope may reach (see requestTier), it is granted at
// once; else it waits for the owner, whose approval becomes a short,
// narrow grant.
type ContextRequest struct {
	ID          string     `json:"request_id"`
	Consumer    string     `json:"consumer"`
	Scope       []string   `json:"scope"`
	Purpose     string     `json:"purpose"`
	Category    string     `json:"purpose_category,omitempty"` // as the app states it; shown to the owner
	Duration    int64      `json:"duration_seconds"`
	Usage       string     `json:"usage"`
	Tier        string     `json:"tier"` // the highest tier the scope may reach, as the app may know it (requestTier)
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
	GrantID     string     `json:"grant_id,omitempty"`
	TokenIssued bool       `json:"token_issued,omitempty"`
	// Disclosure is the disclosure mode of the grant an approval makes:
	// "reference" when the app asked for references or the owner approved
	// so, "value" when the owner approved so, "" for the tier defaults.
	Disclosure string `json:"disclosure,omitempty"`
}

// QuarantineRecord is one imported record held for the owner (package
// quarantine keeps it: its description and body in the store, an index of
// it in the view).
type QuarantineRecord = quarantine.Held

// Verification is the result of checking the receipt chain.
type Verification struct {
	OK    bool   `json:"ok"`
	Count uint64 `json:"count"` // receipts kept in full, checked one by one
	// Rolled counts the receipts that checkpoints stand for; Checkpoints
	// counts the checkpoints.
	Rolled      uint64   `json:"rolled,omitempty"`
	Checkpoints int      `json:"checkpoints,omitempty"`
	Problems    []string `json:"problems,omitempty"`
}
