package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"strings"
	"time"

	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/internal/oidcrecipient"
	"github.com/phc-project/phc/internal/valueref"
	"github.com/phc-project/phc/schema"
)

// EntityInput creates an entity and, with a name, the claim naming it: the
// body of [Service.CreateEntity].
type EntityInput struct {
	Type        string   `json:"type"`
	Name        string   `json:"name,omitempty"`
	Key         string   `json:"key,omitempty"`         // the name claim's key; default "<type>.name"
	Sensitivity string   `json:"sensitivity,omitempty"` // the name claim's tier; default by key
	Personas    []string `json:"personas,omitempty"`
	decoded
}

func (*EntityInput) spec() inputSpec { return inputSpec{} }

// ResolveInput is a local vault hook's resolve request (Client-Vault
// v=1): K as the Authorization header presented it, and the body as
// valueref.ReadBody read it.
//
// It is not an [Input], and [Service.Decode] does not read its body: the
// protocol answers a body over 64 KB first, but a malformed one only once
// K is known, with its own codes (bad_request, too_many_refs) and a deny
// receipt; so the body is read before and judged by Resolve. A body
// built in Go gets the same judgement (valueref.Request.Check).
type ResolveInput struct {
	Bearer string
	Body   valueref.Body
}

// BulkConfirmInput is the owner's decision to confirm many proposals into
// the same personas: the body of [Service.ConfirmBulk].
type BulkConfirmInput struct {
	IDs      []string `json:"ids"`
	Personas []string `json:"personas"`
	decoded
}

func (*BulkConfirmInput) spec() inputSpec { return inputSpec{} }

// BulkRejectInput is the owner's decision to reject many proposals: the
// body of [Service.RejectBulk].
type BulkRejectInput struct {
	IDs    []string `json:"ids"`
	Reason string   `json:"reason"`
	decoded
}

func (*BulkRejectInput) spec() inputSpec { return inputSpec{} }

// FieldInput is the body of PUT /context/fields/{id}: the body of
// [Service.PutField].
type FieldInput struct {
	Value       json.RawMessage `json:"value"`
	Sensitivity string          `json:"sensitivity,omitempty"`
	decoded
}

func (*FieldInput) spec() inputSpec { return inputSpec{} }

// SensitivityInput is the body of [Service.SetSensitivity].
type SensitivityInput struct {
	Tier string `json:"tier"`
	decoded
}

func (*SensitivityInput) spec() inputSpec { return inputSpec{} }

// TrustInput is the body of POST /phc/v1/trust.
type TrustInput struct {
	Issuer            string   `json:"issuer"`
	Audience          string   `json:"audience"`
	AuthorizedParties []string `json:"authorized_parties,omitempty"`
	decoded
}

func (*TrustInput) spec() inputSpec { return inputSpec{} }

// ExchangeInput is an RFC 8693 token-exchange request (the form-encoded
// body of POST /phc/v1/token, as oidcrecipient.ParseForm reads it).
//
// It is not an [Input]: the body is a form, not JSON, so
// [Service.Decode] does not read it; an adapter parses it with
// ParseForm, which refuses at once, as the core always did, what only a
// form can break (a parameter repeated or unknown, a body over
// oidcrecipient.MaxForm). ExchangeToken then holds every request, parsed
// or built in Go, to the same rules (Request.Check: the size bound and
// the fixed values), so a hand-built one gets the answer its form gets.
type ExchangeInput = oidcrecipient.Request

// PersonaInput is the body of [Service.CreatePersona], per the persona
// schema.
type PersonaInput struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Preferences []string    `json:"preferences,omitzero"`
	Guardrails  []Guardrail `json:"guardrails,omitzero"`
	decoded
}

func (*PersonaInput) spec() inputSpec { return inputSpec{schema: schema.Persona} }

// PersonaUpdateInput is the body of [Service.UpdatePersona], per the
// persona_update schema: each member given replaces the persona's.
type PersonaUpdateInput struct {
	Name        *string      `json:"name,omitzero"`
	Preferences *[]string    `json:"preferences,omitzero"`
	Guardrails  *[]Guardrail `json:"guardrails,omitzero"`
	decoded
}

func (*PersonaUpdateInput) spec() inputSpec { return inputSpec{schema: schema.PersonaUpdate} }

// RequestInput is an application's request for context: the body of
// [Service.RequestContext].
type RequestInput struct {
	Scope    scopeList       `json:"scope"`
	Purpose  string          `json:"purpose"`
	Category string          `json:"purpose_category,omitempty"`
	Duration json.RawMessage `json:"duration,omitempty"`
	Usage    string          `json:"usage,omitempty"`
	// Disclosure "reference" asks for references in place of values
	// (docs/formats/reference.md); an app cannot ask for values the owner's settings
	// give as references.
	Disclosure string `json:"disclosure,omitempty"`
	decoded
}

func (*RequestInput) spec() inputSpec { return inputSpec{} }

// DecisionInput is the body of [Service.DecideRequest], which may be empty.
type DecisionInput struct {
	Password string    `json:"password,omitempty"`
	Requires *Requires `json:"requires,omitempty"` // the grant made also requires this qualification
	// DropRequires approves without the qualification the consumer's
	// earlier grants over the scope require (see inheritedRequires).
	DropRequires bool `json:"drop_requires,omitempty"`
	// Disclosure sets the grant's disclosure mode (value or
	// reference) over what the app asked and the tier defaults.
	Disclosure string `json:"disclosure,omitempty"`
	decoded
}

func (*DecisionInput) spec() inputSpec { return inputSpec{optional: true} }

// GrantInput is the body of a new grant, per the grant schema: the body of
// [Service.CreateGrant].
type GrantInput struct {
	Recipient  Recipient `json:"recipient"`
	Purpose    string    `json:"purpose"`
	Category   string    `json:"purpose_category,omitzero"`
	Operations []string  `json:"operations"`
	Selectors  Selectors `json:"selectors"`
	ExpiresAt  time.Time `json:"expires_at"`
	Usage      string    `json:"usage,omitzero"`
	Route      string    `json:"route,omitzero"`
	Requires   *Requires `json:"requires,omitzero"`
	Disclosure string    `json:"disclosure,omitzero"`
	decoded
}

func (*GrantInput) spec() inputSpec { return inputSpec{schema: schema.Grant} }

// GrantTerms are narrower terms for a grant in force: each one given
// replaces the grant's own, each one left out keeps it. A list given
// empty clears that term, which only a grant without it may do. It is the
// body of [Service.NarrowGrant].
type GrantTerms struct {
	Operations []string       `json:"operations,omitzero"` // nil keeps them; empty clears them
	Selectors  *TermSelectors `json:"selectors,omitzero"`
	ExpiresAt  *time.Time     `json:"expires_at,omitzero"`
	decoded
}

func (*GrantTerms) spec() inputSpec { return inputSpec{} }

// ProposalInput is a proposal document as the binding defines it (the
// proposal schema): the body of [Service.Propose].
type ProposalInput struct {
	Key          string            `json:"key"`
	Value        json.RawMessage   `json:"value"`
	Kind         string            `json:"kind"`
	Assertion    string            `json:"assertion"`
	Subject      string            `json:"subject,omitzero"`
	Evidence     []Evidence        `json:"evidence,omitzero"`
	Reported     map[string]string `json:"reported,omitzero"`
	ValidFrom    *time.Time        `json:"valid_from,omitzero"`
	ValidTo      *time.Time        `json:"valid_to,omitzero"`
	Sensitivity  string            `json:"sensitivity,omitzero"`
	Restrictions []Restriction     `json:"restrictions,omitzero"`
	PersonasHint []string          `json:"personas_hint,omitzero"`
	Note         string            `json:"note,omitzero"`
	decoded
}

func (*ProposalInput) spec() inputSpec { return inputSpec{schema: schema.Proposal} }

// ConfirmInput is the owner's decision to confirm a proposal: the body of
// [Service.Confirm].
type ConfirmInput struct {
	Personas []string `json:"personas"`
	Edits    *Edits   `json:"edits,omitempty"`
	decoded
}

func (*ConfirmInput) spec() inputSpec { return inputSpec{} }

// RejectInput is the owner's decision to reject a proposal: the body of
// [Service.Reject], which may be empty.
type RejectInput struct {
	Reason string `json:"reason"`
	decoded
}

func (*RejectInput) spec() inputSpec { return inputSpec{optional: true} }

// DECTrustInput is the input of [Service.PinDECIssuer], the body of POST
// /phc/v1/dec/trust: {issuer, jwks, revoked?: [{kid, at}]}, a dectype.Pin.
// The pin is embedded: its members are the body's, as they were when the
// input was the pin itself (dectype.Pin has no methods of its own to
// promote, and JWKS keeps its JSON as it came), and the strict decoder
// sees through the embedding to refuse unknown and duplicate members.
type DECTrustInput struct {
	dectype.Pin
	decoded
}

func (*DECTrustInput) spec() inputSpec { return inputSpec{utf8: true} }

// DECUnrevokeInput is the input of [Service.UnrevokeDECKey], the body of
// POST /phc/v1/dec/trust/unrevoke.
type DECUnrevokeInput struct {
	Issuer string `json:"issuer"`
	Kid    string `json:"kid"`
	decoded
}

func (*DECUnrevokeInput) spec() inputSpec { return inputSpec{utf8: true} }

// DECPolicyInput is the input of [Service.AddDECPolicy], the body of POST
// /phc/v1/dec/policies: a policy, as dectype.Policy reads it. The policy
// is embedded: its members are the body's, as they were when the input
// was the policy itself (dectype.Policy has no methods of its own to
// promote; Age reads max_age as before), and the strict decoder sees
// through the embedding to refuse unknown and duplicate members.
type DECPolicyInput struct {
	dectype.Policy
	decoded
}

func (*DECPolicyInput) spec() inputSpec { return inputSpec{utf8: true} }

// DECDocumentInput is the input of [Service.VerifyDEC] and
// [Service.PresentDEC]: a DEC document, the whole body of POST
// /phc/v1/dec/verify or /dec/present. It is not an [Input]: an adapter
// passes the body as it came, not through [Service.Decode], as the
// verifier reads the bytes itself and its report is about them, a
// malformed document included (see dectype.RawDocument).
type DECDocumentInput struct {
	Document dectype.RawDocument
}

// ConsumerInput registers a consumer: a name and the secret it will use to
// obtain service tokens. It is the body of [Service.AddConsumer] and
// [Service.RegisterConsumer].
type ConsumerInput struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
	decoded
}

func (*ConsumerInput) spec() inputSpec { return inputSpec{} }

// TokenRequest asks for a service token with a consumer's name and secret.
// TTL is seconds (a number) or a Go duration ("1h"); Scope is a
// comma-separated list of key patterns; Mode is read (default), write or
// read-write. It is the body of [Service.MintServiceToken].
type TokenRequest struct {
	Consumer  string          `json:"consumer"`
	Secret    string          `json:"secret"`
	Scope     scopeList       `json:"scope"`
	TTL       json.RawMessage `json:"ttl,omitempty"`
	Mode      string          `json:"mode,omitempty"`
	RateLimit *RateLimit      `json:"rate_limit,omitempty"`
	Purpose   string          `json:"purpose,omitempty"` // the one purpose the token reads under
	decoded
}

func (*TokenRequest) spec() inputSpec { return inputSpec{} }

// scopeList is a scope as a request body gives it: a comma-separated string
// ("identity.*, addresses.current", PCP §10) or an array of patterns
// (["identity.full_name", "addresses.current"], PCP §9), held as the string.
type scopeList string

func (l *scopeList) UnmarshalJSON(raw []byte) error {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		*l = scopeList(str)
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return Fail("token.create", KindInvalid, "scope must be a string of comma-separated key patterns or an array of them")
	}
	for _, p := range list {
		if strings.Contains(p, ",") {
			return Fail("token.create", KindInvalid, "scope holds a malformed key pattern")
		}
	}
	*l = scopeList(strings.Join(list, ","))
	return nil
}

// ImportInput is the body of an import.
type ImportInput struct {
	// Archive is the archive as GET /context/export answered it: that JSON
	// object, the same JSON as a string, or it base64-encoded.
	Archive   json.RawMessage `json:"archive"`
	Mode      string          `json:"mode"` // merge | replace
	Password  string          `json:"password"`
	SecretKey string          `json:"secret_key"`
	decoded
}

// ImportInput is decoded within the import limits (importLimits), and
// checked by its digest: its archive is not encoded again. The spec holds
// a copy of the limits: what a caller does with it changes no other.
func (*ImportInput) spec() inputSpec {
	lim := importLimits
	return inputSpec{limits: &lim, digest: importDigest}
}

// importDigest is the SHA-256 of an ImportInput's fields, each after its
// length.
func importDigest(in Input) [sha256.Size]byte {
	i := in.(*ImportInput)
	h := sha256.New()
	for _, f := range [][]byte{i.Archive, []byte(i.Mode), []byte(i.Password), []byte(i.SecretKey)} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f))))
		h.Write(f)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// importLimits bound an import body: an archive may be far larger than an
// ordinary request.
var importLimits = schema.Limits{MaxBytes: 64 << 20, MaxDepth: 8, MaxStringBytes: 64 << 20, MaxMembers: 16}

// ExportInput is the body of POST /phc/v1/export: the options of
// [Service.ExportBundle].
type ExportInput struct {
	To       json.RawMessage `json:"to"`
	Personas []string        `json:"personas,omitempty"`
	// PartClaims, if not 0, asks for a bundle in parts (format 0.2) of at
	// most this many claims each (1 to 1,000,000), each part signed and
	// sealed on its own: what a vault too large for one bundle sends.
	PartClaims int `json:"part_claims,omitempty"`
	decoded
}

func (*ExportInput) spec() inputSpec { return inputSpec{} }

// AdoptInput is the body of an adopt: which held records (bulk form), the
// personas to put them in (default: those of the source that exist here),
// and foreign identities mapped to local ones ("foreign:cus_…/tutor" →
// "tutor", a consumer here, or "owner"). The empty body of the
// single-record route, or one of white space only, is the zero AdoptInput.
type AdoptInput struct {
	IDs        []string          `json:"ids,omitempty"`
	All        bool              `json:"all,omitempty"`
	Personas   []string          `json:"personas,omitempty"`
	Identities map[string]string `json:"identities,omitempty"`
	decoded
}

func (*AdoptInput) spec() inputSpec { return inputSpec{optional: true, blank: true} }

// UnblockInput is the body of an unblock: the unknown restriction types to
// remove from a blocked record.
type UnblockInput struct {
	Remove []string `json:"remove"`
	decoded
}

func (*UnblockInput) spec() inputSpec { return inputSpec{} }
