// Package dec verifies DEC 0.1 evidence chains exactly as FORMATS.md §2
// defines them: a document of compact JWS entries, each signed by a key
// pinned for its issuer, hash-linked to its predecessor.
//
// Verification gives three separate verdicts — structural, signature and
// chain — each with every problem found (entry index, stable code,
// detail), never a bare boolean. It establishes origin and integrity only:
// a report always says replay "not_asserted" and grants_access false.
// Callers (the custodian's admission, the CLI, the HTTP route) assert on
// problem codes, never on details.
package dec

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/phc-project/phc/schema"
)

// Limits of FORMATS.md §2.
const (
	Version         = "0.1"
	MaxEntries      = 1000
	MaxEntryBytes   = 64 << 10
	MaxDocumentSize = 4 << 20
	EntryType       = "dec-entry+json"
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

// Problem codes. They are stable: tests and callers compare them.
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

// Problem is one thing wrong with a document. Entry is the index of the
// entry concerned, -1 for the document.
type Problem struct {
	Entry  int    `json:"entry"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Verdict is one of the three verdicts.
type Verdict struct {
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems"`
}

func (v *Verdict) add(entry int, code, format string, args ...any) {
	v.Problems = append(v.Problems, Problem{Entry: entry, Code: code, Detail: fmt.Sprintf(format, args...)})
}

// Codes lists v's problem codes in order.
func (v Verdict) Codes() []string {
	out := make([]string, len(v.Problems))
	for i, p := range v.Problems {
		out[i] = p.Code
	}
	return out
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

// Payload is one entry's payload.
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
	Body    json.RawMessage `json:"body,omitempty"`
}

// Document is a DEC document.
type Document struct {
	Version string   `json:"dec_version"`
	ChainID string   `json:"chain_id"`
	Entries []string `json:"entries"`
}

// Encode is the compact encoding of d, members in the order of FORMATS.md
// §2. It is one encoding among many: the wrapper is ordinary JSON, whose
// member order and whitespace carry no meaning, and Verify accepts any of
// them (what is signed and hashed is each entry's compact JWS bytes).
func (d *Document) Encode() []byte {
	raw, _ := json.Marshal(d)
	return raw
}

// Report is the answer of Verify (FORMATS.md §2).
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

// Revocation revokes a key from a moment on.
type Revocation struct {
	Kid string    `json:"kid"`
	At  time.Time `json:"at"`
}

// Trust is the pinned trust store: per issuer, the keys that may sign its
// entries, and the keys revoked (with the moment from which they no longer
// verify anything).
type Trust struct {
	Keys    map[string]jwk.Set      // issuer → JWKS (public keys, each with a kid)
	Revoked map[string][]Revocation // issuer → revocations
}

// revokedAt returns when kid of issuer was revoked in the store, if it was.
func (t Trust) revokedAt(issuer, kid string) (time.Time, bool) {
	for _, r := range t.Revoked[issuer] {
		if r.Kid == kid {
			return r.At, true
		}
	}
	return time.Time{}, false
}

var (
	chainIDPattern = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	digestPattern  = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	prevPattern    = regexp.MustCompile(`^sha-256:[A-Za-z0-9_-]{43}$`)
	idPattern      = regexp.MustCompile(`^[\x21-\x7e]{1,256}$`) // printable ASCII, no spaces
	textPattern    = regexp.MustCompile(`^[^\x00-\x1f\x7f]{1,256}$`)
	knownTypes     = map[string]bool{TypeRelease: true, TypeQualification: true, TypeRunStart: true, TypeRunStep: true, TypeRunEnd: true, TypeKeyRevoke: true}
)

// Hash is the "sha-256:<base64url>" of an entry's compact JWS bytes.
func Hash(entry string) string {
	sum := sha256.Sum256([]byte(entry))
	return "sha-256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// entry is one parsed entry.
type entry struct {
	raw     string
	header  header
	payload Payload
	iat     time.Time
	ok      bool // structurally sound: the signature and chain checks may use it
}

// header is an entry's protected header: alg, kid and typ, and the
// members present beyond them (checked in checkSignatures).
type header struct {
	Alg, Kid, Typ string
	keyMember     bool // jwk, jku, x5u or x5c
	crit          bool
	other         bool // any other member
}

// limits for the strict decoder: a document of 1,000 entries of 64 KiB.
var docLimits = schema.Limits{MaxBytes: MaxDocumentSize, MaxDepth: 8, MaxStringBytes: MaxDocumentSize, MaxMembers: 2*MaxEntries + 16}
var partLimits = schema.Limits{MaxBytes: MaxEntryBytes, MaxDepth: 16, MaxStringBytes: 8 << 10, MaxMembers: 1000}

// Verify checks raw as a DEC 0.1 document against trust. It never fails:
// whatever raw holds, the report says what is wrong with it. A signature
// or chain verdict passes only over a structurally sound document.
func Verify(raw []byte, trust Trust) (rep Report) {
	rep = Report{Replay: "not_asserted", GrantsAccess: false,
		Structural: Verdict{Problems: []Problem{}}, Signature: Verdict{Problems: []Problem{}}, Chain: Verdict{Problems: []Problem{}}}
	defer func() {
		rep.Structural.OK = len(rep.Structural.Problems) == 0
		rep.Signature.OK = len(rep.Signature.Problems) == 0 && rep.Structural.OK
		rep.Chain.OK = len(rep.Chain.Problems) == 0 && rep.Structural.OK
		rep.OK = rep.Structural.OK && rep.Signature.OK && rep.Chain.OK
	}()
	st := &rep.Structural
	if len(raw) > MaxDocumentSize {
		st.add(-1, CodeTooLarge, "the document has %d bytes; at most %d", len(raw), MaxDocumentSize)
		rep.Signature.add(-1, CodeMalformedDocument, "not checked: the document is not readable")
		return rep
	}
	var doc Document
	if err := schema.DecodeInto(raw, docLimits, &doc); err != nil {
		st.add(-1, CodeMalformedDocument, "%v", err)
		return rep
	}
	if doc.Version != Version {
		st.add(-1, CodeVersion, "dec_version must be %q", Version)
	}
	if !chainIDPattern.MatchString(doc.ChainID) {
		st.add(-1, CodeChainID, "chain_id must be a lower-case urn:uuid")
	}
	rep.ChainID = doc.ChainID
	switch n := len(doc.Entries); {
	case n == 0:
		st.add(-1, CodeNoEntries, "the document has no entries")
		return rep
	case n > MaxEntries:
		st.add(-1, CodeTooManyEntries, "the document has %d entries; at most %d", n, MaxEntries)
		return rep
	}
	rep.Entries = len(doc.Entries)
	entries := make([]*entry, len(doc.Entries))
	for i, raw := range doc.Entries {
		entries[i] = parseEntry(i, raw, st)
	}
	checkStructure(doc, entries, st, &rep)
	checkSignatures(entries, trust, &rep.Signature)
	checkChain(entries, &rep.Chain)
	last := entries[len(entries)-1]
	rep.Head = Hash(last.raw)
	rep.LastIat = last.payload.Iat
	for _, e := range entries {
		if !e.ok {
			continue
		}
		p := e.payload
		rep.Issuer, rep.Subject = p.Issuer, p.Subject
		rep.KeysUsed = append(rep.KeysUsed, e.header.Kid)
		// Release, method, purpose and runtime qualify a client only as a
		// release or qualification entry states them: run.* entries are
		// evidence about a run, never a qualification (PHC draft §5).
		if p.Type != TypeRelease && p.Type != TypeQualification {
			continue
		}
		rep.QualifiedAt = p.Iat
		if p.Release != nil {
			rep.Release = p.Release
		}
		if p.Method != "" {
			rep.Method = p.Method
		}
		if p.Purpose != "" {
			rep.Purpose = p.Purpose
		}
		if p.Runtime != nil {
			rep.Runtime = p.Runtime
		}
	}
	return rep
}

// parseEntry reads one compact JWS: its header and payload, strictly.
func parseEntry(i int, raw string, st *Verdict) *entry {
	e := &entry{raw: raw}
	if len(raw) > MaxEntryBytes {
		st.add(i, CodeEntryTooLarge, "the entry has %d bytes; at most %d", len(raw), MaxEntryBytes)
		return e
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		st.add(i, CodeMalformedEntry, "not a compact JWS")
		return e
	}
	// Strict base64url, and each part exactly the encoding of its bytes:
	// no line breaks, no stray padding bits, so that one entry has one
	// form (and one hash) — jwx re-encodes what it verifies.
	var decoded [3][]byte
	for k, part := range parts {
		b, err := base64.RawURLEncoding.Strict().DecodeString(part)
		if err != nil || base64.RawURLEncoding.EncodeToString(b) != part {
			st.add(i, CodeMalformedEntry, "a part of the JWS is not canonical base64url without padding")
			return e
		}
		decoded[k] = b
	}
	hb, pb := decoded[0], decoded[1]
	hv, err := schema.Decode(hb, partLimits)
	hm, isObject := hv.(map[string]any)
	if err != nil || !isObject {
		st.add(i, CodeMalformedEntry, "the header is not one JSON object")
		return e
	}
	for k, v := range hm {
		s, _ := v.(string)
		switch k {
		case "alg":
			e.header.Alg = s
		case "kid":
			e.header.Kid = s
		case "typ":
			e.header.Typ = s
		case "jwk", "jku", "x5u", "x5c":
			e.header.keyMember = true
		case "crit":
			e.header.crit = true
		default:
			e.header.other = true
		}
	}
	if err := schema.DecodeInto(pb, partLimits, &e.payload); err != nil {
		st.add(i, CodeMalformedEntry, "payload: %v", err)
		return e
	}
	p := &e.payload
	bad := func(field, want string) {
		st.add(i, CodeBadPayload, "%s must be %s", field, want)
	}
	okBefore := len(st.Problems)
	if p.Seq == nil || *p.Seq < 0 {
		bad("seq", "an integer from 0")
	}
	if p.Prev != nil && !prevPattern.MatchString(*p.Prev) {
		bad("prev", `null or "sha-256:" and 43 base64url characters`)
	}
	t, err := time.Parse(time.RFC3339, p.Iat)
	if err != nil || !strings.HasSuffix(p.Iat, "Z") || t.Format(time.RFC3339Nano) != p.Iat {
		bad("iat", "an RFC 3339 UTC time (…Z)")
	}
	e.iat = t
	if !idPattern.MatchString(p.Issuer) {
		bad("issuer", "an identifier of printable ASCII")
	}
	if !knownTypes[p.Type] {
		bad("type", "release, qualification, run.start, run.step, run.end or key.revoke")
	}
	if p.Subject == nil || !idPattern.MatchString(p.Subject.ClientID) || (p.Subject.Issuer != "" && !idPattern.MatchString(p.Subject.Issuer)) {
		bad("subject", "{client_id, issuer?} of printable ASCII identifiers")
	}
	if r := p.Release; r != nil && (!textPattern.MatchString(r.Name) || !textPattern.MatchString(r.Version) || !digestPattern.MatchString(r.Digest)) {
		bad("release", `{name, version, digest: "sha256:<64 hex>"}`)
	}
	if p.Method != "" && !textPattern.MatchString(p.Method) {
		bad("method", "text of at most 256 bytes")
	}
	if p.Purpose != "" && !textPattern.MatchString(p.Purpose) {
		bad("purpose", "text of at most 256 bytes")
	}
	if r := p.Runtime; r != nil && !digestPattern.MatchString(r.ConfigDigest) {
		bad("runtime", `{config_digest: "sha256:<64 hex>"}`)
	}
	if p.Body != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(p.Body, &obj) != nil || obj == nil {
			bad("body", "an object")
		}
	}
	if p.Type == TypeKeyRevoke && revokedKid(p) == "" {
		bad("body", `{"kid": …} naming the key a key.revoke entry revokes`)
	}
	e.ok = len(st.Problems) == okBefore
	return e
}

// revokedKid is the kid a key.revoke entry revokes ("" if none).
func revokedKid(p *Payload) string {
	var b struct {
		Kid string `json:"kid"`
	}
	if p.Body == nil || json.Unmarshal(p.Body, &b) != nil || !idPattern.MatchString(b.Kid) {
		return ""
	}
	return b.Kid
}

func checkStructure(doc Document, entries []*entry, st *Verdict, rep *Report) {
	issuer := ""
	var subject *Subject
	var lastIat time.Time
	for i, e := range entries {
		if !e.ok {
			continue
		}
		p := e.payload
		if p.ChainID != doc.ChainID {
			st.add(i, CodeChainIDMismatch, "the entry's chain_id is not the document's")
		}
		if issuer == "" {
			issuer = p.Issuer
		} else if p.Issuer != issuer {
			st.add(i, CodeMixedIssuers, "the entry's issuer differs from entry 0's")
		}
		if subject == nil {
			subject = p.Subject
		} else if *p.Subject != *subject {
			st.add(i, CodeMixedSubjects, "the entry's subject differs from entry 0's: a chain is about one client")
		}
		if *p.Seq != i {
			st.add(i, CodeSeq, "seq %d at position %d: seq starts at 0 and is contiguous", *p.Seq, i)
		}
		if i > 0 && e.iat.Before(lastIat) {
			st.add(i, CodeIatDecreasing, "iat is before the previous entry's")
		}
		lastIat = e.iat
	}
}

// allowedAlgs are the signature algorithms and the key each needs.
var allowedAlgs = map[string]func(jwk.Key) bool{
	"EdDSA": func(k jwk.Key) bool {
		ok, isOKP := k.(jwk.OKPPublicKey)
		return isOKP && ok.Crv() == jwa.Ed25519
	},
	"ES256": func(k jwk.Key) bool {
		ec, isEC := k.(jwk.ECDSAPublicKey)
		return isEC && ec.Crv() == jwa.P256
	},
}

func checkSignatures(entries []*entry, trust Trust, sv *Verdict) {
	revokedInChain := map[string]int{} // kid → index of the key.revoke entry
	for i, e := range entries {
		if !e.ok {
			continue
		}
		h := e.header
		switch {
		case h.keyMember:
			sv.add(i, CodeKeyInHeader, "the header names a key (jwk, jku, x5u or x5c): keys are pinned, never taken from an entry")
			continue
		case h.crit:
			sv.add(i, CodeUnknownCrit, "the header has crit: no extension is understood")
			continue
		case h.other || h.Typ != EntryType || !idPattern.MatchString(h.Kid):
			sv.add(i, CodeBadHeader, "the header must be {alg, kid, typ: %q}", EntryType)
			continue
		}
		keyFits, allowed := allowedAlgs[h.Alg]
		if !allowed {
			sv.add(i, CodeAlgNotAllowed, "alg must be EdDSA or ES256")
			continue
		}
		set, ok := trust.Keys[e.payload.Issuer]
		if !ok || set == nil {
			sv.add(i, CodeUnknownIssuer, "no keys are pinned for the entry's issuer")
			continue
		}
		key, ok := set.LookupKeyID(h.Kid)
		if !ok {
			sv.add(i, CodeUnknownKid, "no pinned key of the issuer has the entry's kid")
			continue
		}
		pub, err := key.PublicKey()
		if err != nil || !keyFits(pub) {
			sv.add(i, CodeAlgKeyMismatch, "alg %s does not match the pinned key's type", h.Alg)
			continue
		}
		if _, err := jws.Verify([]byte(e.raw), jws.WithKey(jwa.SignatureAlgorithm(h.Alg), pub)); err != nil {
			sv.add(i, CodeBadSignature, "the signature does not verify under the pinned key")
			continue
		}
		if at, ok := trust.revokedAt(e.payload.Issuer, h.Kid); ok && !e.iat.Before(at) {
			sv.add(i, CodeRevokedKey, "the key was revoked in the trust store before the entry's iat")
			continue
		}
		if j, ok := revokedInChain[h.Kid]; ok && !e.iat.Before(entries[j].iat) {
			sv.add(i, CodeRevokedKey, "the key was revoked by entry %d", j)
			continue
		}
		if e.payload.Type == TypeKeyRevoke {
			if kid := revokedKid(&e.payload); kid != "" {
				if _, seen := revokedInChain[kid]; !seen {
					revokedInChain[kid] = i
				}
			}
		}
	}
}

func checkChain(entries []*entry, cv *Verdict) {
	seen := map[int][]int{}
	for i, e := range entries {
		if !e.ok {
			continue
		}
		seen[*e.payload.Seq] = append(seen[*e.payload.Seq], i)
		prev := e.payload.Prev
		switch {
		case i == 0 && prev != nil:
			cv.add(i, CodePrevNotNull, "entry 0 must have prev null")
		case i > 0 && (prev == nil || *prev != Hash(entries[i-1].raw)):
			cv.add(i, CodePrevMismatch, "prev is not the hash of entry %d", i-1)
		}
	}
	seqs := make([]int, 0, len(seen))
	for s := range seen {
		seqs = append(seqs, s)
	}
	sort.Ints(seqs)
	for _, s := range seqs {
		if at := seen[s]; len(at) > 1 {
			cv.add(at[1], CodeFork, "seq %d appears at entries %v", s, at)
		}
	}
}
