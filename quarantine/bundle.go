package quarantine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

// BundleVersion is the bundle format this package reads and phc writes.
const BundleVersion = "0.1"

// PartsVersion is the format of a bundle in parts: several payloads, each
// signed and sealed on its own, under one bundle id (see [Part]).
const PartsVersion = "0.2"

// MaxParts bounds the parts of one bundle.
const MaxParts = 10000

// Part places one payload of a bundle in parts: the index-th (1-based) of
// count. Every part carries the whole bundle's manifest, but for
// records_digest, which is over its own records.
type Part struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Manifest describes a bundle: who made it for whom, what it holds and
// what stayed behind.
type Manifest struct {
	BundleVersion string         `json:"bundle_version"`
	BundleID      string         `json:"bundle_id"`
	CreatedAt     time.Time      `json:"created_at"`
	Source        CustodianRef   `json:"source"`
	Recipient     CustodianRef   `json:"recipient"`
	Counts        map[string]int `json:"counts"`
	LossReport    []Loss         `json:"loss_report"`
	RecordsDigest string         `json:"records_digest"` // sha256: over the records' JSON
}

// CustodianRef names a custodian in a manifest.
type CustodianRef struct {
	CustodianID string `json:"custodian_id"`
}

// Loss is a record that did not travel, or part of one an import dropped:
// its id and why, never its value.
type Loss struct {
	Record  string `json:"record"`
	Dropped string `json:"dropped"` // claim | summary | restriction TYPE
	Reason  string `json:"reason"`
}

// IdentityRef names a producer at the source; it stays foreign at the
// destination until its owner maps it.
type IdentityRef struct {
	SourceIssuer string `json:"source_issuer"`
	SourceID     string `json:"source_id"`
	Display      string `json:"display"`
}

// Payload is what a bundle's source signs: the manifest, and the records
// as the bytes its digest is over.
type Payload struct {
	Manifest Manifest        `json:"manifest"`
	Part     *Part           `json:"part,omitempty"` // a bundle in parts (format 0.2) only
	Records  json.RawMessage `json:"records"`
}

// Records is what an import holds, before validation: a bundle's records,
// or what an importer of another memory format yields. Each claim,
// persona, entity and summary is a document of the PHC JSON binding.
type Records struct {
	Claims     []Claim           `json:"claims"`
	Personas   []json.RawMessage `json:"personas"`
	Entities   []json.RawMessage `json:"entities"`
	Summaries  []json.RawMessage `json:"summaries"`
	Identities []IdentityRef     `json:"identities"`
}

// Claim is one claim of [Records]: its id at the source, the personas it
// was in there, and every version, oldest first.
type Claim struct {
	ID       string            `json:"id"`
	Personas []string          `json:"personas"`
	Versions []json.RawMessage `json:"versions"`
}

// Error is why a bundle or one of its records is refused, in words its
// user can act on; it never quotes the bundle's content.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func refuse(msg string) error { return &Error{msg: msg} }

// Digest is the records_digest of records: "sha256:" and the hex of
// SHA-256 over the bytes.
func Digest(records []byte) string {
	sum := sha256.Sum256(records)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Open checks payload, the content of a bundle whose signature the codec
// verified as signer's, as recipient reads it: strict members, the
// manifest first — bundle format [BundleVersion], signer as its source,
// recipient as its recipient, a well-formed bundle id, the records'
// digest. It returns the manifest and the records' JSON (see
// [ParseRecords]). Every refusal is an [*Error]; the manifest is returned
// with it once it decoded.
func Open(payload []byte, signer, recipient string) (Manifest, []byte, error) {
	m, part, records, err := OpenPart(payload, signer, recipient)
	if err == nil && part != nil {
		return m, nil, refuse("this is one part of a bundle in parts: import all its parts together (a zip of them)")
	}
	return m, records, err
}

// OpenPart is [Open] for a payload that may be one part of a bundle in
// parts (format 0.2): it returns the part too (nil for a bundle of one
// payload, format 0.1).
func OpenPart(payload []byte, signer, recipient string) (Manifest, *Part, []byte, error) {
	var p Payload
	if err := Strict(payload, &p); err != nil {
		return Manifest{}, nil, nil, refuse("the bundle's content is not a manifest and records")
	}
	m, err := openPayload(p, signer, recipient)
	return m, p.Part, p.Records, err
}

func openPayload(p Payload, signer, recipient string) (Manifest, error) {
	m := p.Manifest
	switch {
	case m.BundleVersion == BundleVersion && p.Part != nil, m.BundleVersion == PartsVersion && p.Part == nil:
		return m, refuse("bundle_version " + m.BundleVersion + " does not match the payload's parts")
	case m.BundleVersion != BundleVersion && m.BundleVersion != PartsVersion:
		return m, refuse("bundle_version " + m.BundleVersion + " is not one this custodian reads (0.1, or 0.2 in parts)")
	case p.Part != nil && (p.Part.Count < 1 || p.Part.Count > MaxParts || p.Part.Index < 1 || p.Part.Index > p.Part.Count):
		return m, refuse("the part's index and count are out of range")
	case m.Source.CustodianID != signer:
		return m, refuse("the manifest names another source than the signature")
	case m.Recipient.CustodianID != recipient:
		return m, refuse("the bundle is for another custodian")
	case !identity.ValidID(m.BundleID, "bnd_"):
		return m, refuse("the manifest's bundle_id is malformed")
	}
	if m.RecordsDigest != Digest(p.Records) {
		return m, refuse("records_digest does not match the records")
	}
	return m, nil
}

// SamePart reports whether part b belongs to the bundle of part a (the
// same bundle, count and manifest but for the records' digest), or says
// why not.
func SamePart(a, b Manifest, pa, pb Part) error {
	a.RecordsDigest, b.RecordsDigest = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if pa.Count != pb.Count || !bytes.Equal(ja, jb) {
		return refuse("the parts are not of one bundle: their manifests or counts differ")
	}
	return nil
}

// ParseRecords decodes the records of a bundle that [Open] returned, with
// strict members. The records are not validated against the binding: that
// is the caller's.
func ParseRecords(raw []byte) (Records, error) {
	var recs Records
	if err := Strict(raw, &recs); err != nil {
		return Records{}, refuse("the bundle's records are not in the bundle format 0.1")
	}
	return recs, nil
}

// Strict decodes one document of a bundle into v, refusing members v does
// not have. (A bundle is larger than the request limits of a body; each
// record is checked against the binding's schema besides.)
func Strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
