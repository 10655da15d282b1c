// Package dectype holds the data of DEC 0.1 evidence chains and DCER
// admission (docs/formats/dec.md): the document and its entries' payloads, the
// pinned issuers and their keys, admission policies, and the answers of
// verification (a [Report]) and admission (an [Admission]).
//
// Package dec verifies and admits; the custodian stores pins, policies and
// presented documents and asks dec through an interface of these types.
// Both import this package, which imports nothing of phc and nothing that
// imports net/http (the custodian must not): it has no code beyond the
// types' own small methods.
//
// Two values carry their raw form, and say why: a document as presented
// ([RawDocument]) and a key set ([JWKS]).
package dectype

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits of docs/formats/dec.md.
const (
	Version         = "0.1"
	MaxEntries      = 1000
	MaxEntryBytes   = 64 << 10
	MaxDocumentSize = 4 << 20
	EntryType       = "dec-entry+json"
	// MaxPolicyBytes bounds a policy as JSON.
	MaxPolicyBytes = 64 << 10
)

// Entry types.
const (
	TypeRelease       = "release"
	TypeQualification = "qualification"
	TypeRunStart      = "run.start"
	TypeRunStep       = "run.step"
	TypeRunEnd        = "run.end"
	TypeKeyRevoke     = "key.revoke"
)

// Problem codes of a [Report]. They are stable: tests and callers compare
// them.
const (
	// structural
	CodeMalformedDocument = "malformed_document" // not one strict JSON object of the format
	CodeTooLarge          = "document_too_large"
	CodeVersion           = "unsupported_version"
	CodeChainID           = "bad_chain_id"
	CodeNoEntries         = "no_entries"
	CodeTooManyEntries    = "too_many_entries"
	CodeEntryTooLarge     = "entry_too_large"
	CodeMalformedEntry    = "malformed_entry" // not a compact JWS, or a payload that is not the format's
	CodeBadPayload        = "bad_payload"     // a payload member out of its form (detail names it)
	CodeChainIDMismatch   = "chain_id_mismatch"
	CodeMixedIssuers      = "mixed_issuers"
	CodeMixedSubjects     = "mixed_subjects"     // an entry about another client than entry 0
	CodeSeq               = "seq_not_contiguous" // missing, skipped or out of order
	CodeIatDecreasing     = "iat_decreasing"
	// signature
	CodeBadHeader      = "bad_header"       // a header member outside {alg, kid, typ}, or typ/kid wrong
	CodeKeyInHeader    = "key_in_header"    // jwk, jku, x5u or x5c
	CodeUnknownCrit    = "unknown_crit"     // any crit: no extension is understood
	CodeAlgNotAllowed  = "alg_not_allowed"  // none, HS256, …: only EdDSA and ES256
	CodeAlgKeyMismatch = "alg_key_mismatch" // alg does not match the pinned key's type
	CodeUnknownIssuer  = "unknown_issuer"   // no keys pinned for the issuer
	CodeUnknownKid     = "unknown_kid"
	CodeBadSignature   = "bad_signature"
	CodeRevokedKey     = "revoked_key" // signed by a key revoked before the entry's iat
	// chain
	CodePrevNotNull  = "prev_not_null" // entry 0 names a predecessor
	CodePrevMismatch = "prev_mismatch"
	CodeFork         = "fork" // two entries with one seq
)

// Condition codes of an [Admission]'s failures.
const (
	CondVerified      = "not_verified"          // a verdict failed
	CondQualification = "no_qualification"      // no release or qualification entry: run evidence only
	CondIssuer        = "issuer"                // another issuer
	CondClientID      = "client_id"             // another client
	CondReleaseDigest = "release_digest"        // a release the policy does not list
	CondMethod        = "method"                // another method
	CondPurpose       = "purpose"               // another purpose
	CondRuntimeDigest = "runtime_config_digest" // a runtime configuration the policy does not list
	CondMaxAge        = "max_age"               // the last entry is too old
	CondRevoked       = "revoked_key"           // a key that signed the chain is revoked now
)

// Decisions of an [Admission].
const (
	DecisionAdmit = "admit"
	DecisionDeny  = "deny"
)

// RawDocument is a DEC document as it was presented: its exact bytes.
// Verification takes these bytes rather than a decoded [Document] because
// its structural verdict is about them — a document that is not JSON, is
// too large, has a duplicate or unknown member or trailing data still gets
// a report saying so — and because each entry is signed and hashed over
// its exact compact JWS bytes. The custodian keeps a presented document
// in this form, to verify it again at every read.
type RawDocument []byte

// Document is a DEC document, decoded. Its wrapper is ordinary JSON; what
// is signed and hashed is each entry's compact JWS bytes, kept here as
// they were.
type Document struct {
	Version string   `json:"dec_version"`
	ChainID string   `json:"chain_id"`
	Entries []string `json:"entries"` // compact JWS, exactly as in the document
}

// Encode is the compact encoding of d, members in the order of docs/formats/dec.md
// §2. It is one encoding among many: the wrapper is ordinary JSON, whose
// member order and whitespace carry no meaning, and verification accepts
// any of them (what is signed and hashed is each entry's compact JWS
// bytes).
func (d *Document) Encode() RawDocument {
	raw, _ := json.Marshal(d)
	return raw
}

// Payload is one entry's payload. Prev links the entry to its predecessor:
// the "sha-256:…" hash of the predecessor's compact JWS bytes, nil for
// entry 0.
type Payload struct {
	ChainID string          `json:"chain_id"`
	Seq     *int            `json:"seq"`
	Prev    *string         `json:"prev"`
	Iat     string          `json:"iat"`
	Issuer  string          `json:"issuer"`
	Type    string          `json:"type"`
	Subject *Subject        `json:"subject"`
	Release *Release        `json:"release,omitempty"`
	Method  string          `json:"method,omitempty"`
	Purpose string          `json:"purpose,omitempty"`
	Runtime *Runtime        `json:"runtime,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"` // type-specific: {"kid"} for key.revoke, anything for the others
}

// Subject names the client an entry is about.
type Subject struct {
	ClientID string `json:"client_id"`
	Issuer   string `json:"issuer,omitempty"`
}

// Release names a client release by digest.
type Release struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
}

// Runtime names a runtime configuration by digest.
type Runtime struct {
	ConfigDigest string `json:"config_digest"`
}

// JWKS is an issuer's public keys: a JSON Web Key Set (RFC 7517), kept as
// JSON. Reading keys takes a JOSE library, whose key package imports
// net/http, which the custodian must not; package dec reads and checks
// them. The custodian stores and lists a pinned set as it was pinned.
type JWKS json.RawMessage

// MarshalJSON is the set's JSON ("null" for none).
func (k JWKS) MarshalJSON() ([]byte, error) { return json.RawMessage(k).MarshalJSON() }

// UnmarshalJSON keeps a copy of raw.
func (k *JWKS) UnmarshalJSON(raw []byte) error {
	return (*json.RawMessage)(k).UnmarshalJSON(raw)
}

// Pin is one issuer's pinned public keys and revocations: the entries of
// a chain by Issuer verify only under JWKS, and a key revoked verifies
// nothing dated from the revocation on.
type Pin struct {
	Issuer  string       `json:"issuer"`
	JWKS    JWKS         `json:"jwks"`
	Revoked []Revocation `json:"revoked,omitempty"`
}

// Revocation revokes a key from a moment on.
type Revocation struct {
	Kid string    `json:"kid"`
	At  time.Time `json:"at"`
}

// Problem is one thing wrong with a document. Entry is the index of the
// entry concerned, -1 for the document.
type Problem struct {
	Entry  int    `json:"entry"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Verdict is one of a report's three verdicts.
type Verdict struct {
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems"`
}

// Codes lists v's problem codes in order.
func (v Verdict) Codes() []string {
	out := make([]string, len(v.Problems))
	for i, p := range v.Problems {
		out[i] = p.Code
	}
	return out
}

// Report is the answer of verification (docs/formats/dec.md): three verdicts,
// never a bare boolean, and what the chain says. It establishes origin and
// integrity only: Replay is always "not_asserted" and GrantsAccess false.
type Report struct {
	Structural   Verdict  `json:"structural"`
	Signature    Verdict  `json:"signature"`
	Chain        Verdict  `json:"chain"`
	OK           bool     `json:"ok"` // all three verdicts pass
	ChainID      string   `json:"chain_id,omitempty"`
	Issuer       string   `json:"issuer,omitempty"`
	Subject      *Subject `json:"subject,omitempty"`
	Release      *Release `json:"release,omitempty"` // release, method, purpose and runtime: from release and qualification entries only
	Method       string   `json:"method,omitempty"`
	Purpose      string   `json:"purpose,omitempty"`
	Runtime      *Runtime `json:"runtime,omitempty"`
	QualifiedAt  string   `json:"qualified_at,omitempty"` // iat of the last release or qualification entry; "" if none (run evidence only)
	Head         string   `json:"head,omitempty"`
	LastIat      string   `json:"last_iat,omitempty"`
	Entries      int      `json:"entries"`
	Replay       string   `json:"replay"`
	GrantsAccess bool     `json:"grants_access"`
	// KeysUsed lists the kid of every entry, in order, for admission's
	// revocation checks.
	KeysUsed []string `json:"keys_used,omitempty"`
}

// Policy is a DCER admission policy (docs/formats/dec.md): what a verified chain
// must say, and how fresh it must be, for its recipient to be admitted.
// Empty lists and strings do not constrain.
type Policy struct {
	ID                   string   `json:"id"`
	Issuer               string   `json:"issuer"`
	ClientID             string   `json:"client_id"`
	ReleaseDigests       []string `json:"release_digests,omitempty"`
	Method               string   `json:"method,omitempty"`
	Purpose              string   `json:"purpose,omitempty"`
	RuntimeConfigDigests []string `json:"runtime_config_digests,omitempty"`
	MaxAge               Age      `json:"max_age,omitempty"` // the last entry may be at most this old
	RequireUnrevoked     bool     `json:"require_unrevoked,omitempty"`
}

// Age is a policy's max_age: a duration as Go writes it ("720h", "90m"),
// a number of days ("30d"), or, in JSON, a number of seconds (2592000,
// kept as "2592000s").
type Age string

// UnmarshalJSON takes a string, or a whole number of seconds.
func (a *Age) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		*a = Age(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("max_age: want a duration such as \"720h\" or a number of seconds")
	}
	secs, err := n.Int64()
	if err != nil || secs <= 0 || secs > math.MaxInt64/int64(time.Second) {
		return fmt.Errorf("max_age: want a positive whole number of seconds, or a duration such as \"720h\"")
	}
	*a = Age(strconv.FormatInt(secs, 10) + "s")
	return nil
}

// Duration is the age as a time.Duration.
func (a Age) Duration() (time.Duration, error) {
	s := string(a)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("max_age: want a number of days such as 30d")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// Admission is the answer of admission: admit or deny under Policy (its
// id), with every failed condition. It is an extra condition on top of
// consent, never a substitute: admission grants nothing by itself.
type Admission struct {
	Decision string      `json:"decision"` // DecisionAdmit or DecisionDeny
	Policy   string      `json:"policy"`
	Head     string      `json:"head,omitempty"`
	Failed   []Condition `json:"failed"`
}

// Admitted reports whether a admits.
func (a Admission) Admitted() bool { return a.Decision == DecisionAdmit }

// Codes lists the codes of a's failed conditions in order.
func (a Admission) Codes() []string {
	out := make([]string, len(a.Failed))
	for i, f := range a.Failed {
		out[i] = f.Code
	}
	return out
}

// Condition is one failed condition.
type Condition struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}
