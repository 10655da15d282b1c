// Package dec verifies DEC 0.1 evidence chains exactly as docs/formats/dec.md
// defines them: a document of compact JWS entries, each signed by a key
// pinned for its issuer, hash-linked to its predecessor.
//
// Verification gives three separate verdicts — structural, signature and
// chain — each with every problem found (entry index, stable code,
// detail), never a bare boolean. It establishes origin and integrity only:
// a report always says replay "not_asserted" and grants_access false.
// Callers (the custodian's admission, the CLI, the HTTP route) assert on
// problem codes, never on details.
//
// The data — documents, reports, policies, admissions and their codes —
// are package dectype's, which the custodian shares; [Service] is the
// verifier the custodian is given.
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

	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/schema"
)

// add records a problem in v.
func add(v *dectype.Verdict, entry int, code, format string, args ...any) {
	v.Problems = append(v.Problems, dectype.Problem{Entry: entry, Code: code, Detail: fmt.Sprintf(format, args...)})
}

// Trust is the pinned trust store: per issuer, the keys that may sign its
// entries, and the keys revoked (with the moment from which they no longer
// verify anything).
type Trust struct {
	Keys    map[string]jwk.Set              // issuer → JWKS (public keys, each with a kid)
	Revoked map[string][]dectype.Revocation // issuer → revocations
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
	knownTypes     = map[string]bool{dectype.TypeRelease: true, dectype.TypeQualification: true, dectype.TypeRunStart: true, dectype.TypeRunStep: true, dectype.TypeRunEnd: true, dectype.TypeKeyRevoke: true}
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
	payload dectype.Payload
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
var docLimits = schema.Limits{MaxBytes: dectype.MaxDocumentSize, MaxDepth: 8, MaxStringBytes: dectype.MaxDocumentSize, MaxMembers: 2*dectype.MaxEntries + 16}
var partLimits = schema.Limits{MaxBytes: dectype.MaxEntryBytes, MaxDepth: 16, MaxStringBytes: 8 << 10, MaxMembers: 1000}

// Verify checks raw as a DEC 0.1 document against trust. It never fails:
// whatever raw holds, the report says what is wrong with it. A signature
// or chain verdict passes only over a structurally sound document.
func Verify(raw dectype.RawDocument, trust Trust) (rep dectype.Report) {
	rep = dectype.Report{Replay: "not_asserted", GrantsAccess: false,
		Structural: dectype.Verdict{Problems: []dectype.Problem{}}, Signature: dectype.Verdict{Problems: []dectype.Problem{}}, Chain: dectype.Verdict{Problems: []dectype.Problem{}}}
	defer func() {
		rep.Structural.OK = len(rep.Structural.Problems) == 0
		rep.Signature.OK = len(rep.Signature.Problems) == 0 && rep.Structural.OK
		rep.Chain.OK = len(rep.Chain.Problems) == 0 && rep.Structural.OK
		rep.OK = rep.Structural.OK && rep.Signature.OK && rep.Chain.OK
	}()
	st := &rep.Structural
	if len(raw) > dectype.MaxDocumentSize {
		add(st, -1, dectype.CodeTooLarge, "the document has %d bytes; at most %d", len(raw), dectype.MaxDocumentSize)
		add(&rep.Signature, -1, dectype.CodeMalformedDocument, "not checked: the document is not readable")
		return rep
	}
	var doc dectype.Document
	if err := schema.DecodeInto(raw, docLimits, &doc); err != nil {
		add(st, -1, dectype.CodeMalformedDocument, "%v", err)
		return rep
	}
	if doc.Version != dectype.Version {
		add(st, -1, dectype.CodeVersion, "dec_version must be %q", dectype.Version)
	}
	if !chainIDPattern.MatchString(doc.ChainID) {
		add(st, -1, dectype.CodeChainID, "chain_id must be a lower-case urn:uuid")
	}
	rep.ChainID = doc.ChainID
	switch n := len(doc.Entries); {
	case n == 0:
		add(st, -1, dectype.CodeNoEntries, "the document has no entries")
		return rep
	case n > dectype.MaxEntries:
		add(st, -1, dectype.CodeTooManyEntries, "the document has %d entries; at most %d", n, dectype.MaxEntries)
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
		if p.Type != dectype.TypeRelease && p.Type != dectype.TypeQualification {
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
func parseEntry(i int, raw string, st *dectype.Verdict) *entry {
	e := &entry{raw: raw}
	if len(raw) > dectype.MaxEntryBytes {
		add(st, i, dectype.CodeEntryTooLarge, "the entry has %d bytes; at most %d", len(raw), dectype.MaxEntryBytes)
		return e
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		add(st, i, dectype.CodeMalformedEntry, "not a compact JWS")
		return e
	}
	// Strict base64url, and each part exactly the encoding of its bytes:
	// no line breaks, no stray padding bits, so that one entry has one
	// form (and one hash) — jwx re-encodes what it verifies.
	var decoded [3][]byte
	for k, part := range parts {
		b, err := base64.RawURLEncoding.Strict().DecodeString(part)
		if err != nil || base64.RawURLEncoding.EncodeToString(b) != part {
			add(st, i, dectype.CodeMalformedEntry, "a part of the JWS is not canonical base64url without padding")
			return e
		}
		decoded[k] = b
	}
	hb, pb := decoded[0], decoded[1]
	hv, err := schema.Decode(hb, partLimits)
	hm, isObject := hv.(map[string]any)
	if err != nil || !isObject {
		add(st, i, dectype.CodeMalformedEntry, "the header is not one JSON object")
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
		add(st, i, dectype.CodeMalformedEntry, "payload: %v", err)
		return e
	}
	p := &e.payload
	bad := func(field, want string) {
		add(st, i, dectype.CodeBadPayload, "%s must be %s", field, want)
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
	if p.Type == dectype.TypeKeyRevoke && revokedKid(p) == "" {
		bad("body", `{"kid": …} naming the key a key.revoke entry revokes`)
	}
	e.ok = len(st.Problems) == okBefore
	return e
}

// revokedKid is the kid a key.revoke entry revokes ("" if none).
func revokedKid(p *dectype.Payload) string {
	var b struct {
		Kid string `json:"kid"`
	}
	if p.Body == nil || json.Unmarshal(p.Body, &b) != nil || !idPattern.MatchString(b.Kid) {
		return ""
	}
	return b.Kid
}

func checkStructure(doc dectype.Document, entries []*entry, st *dectype.Verdict, rep *dectype.Report) {
	issuer := ""
	var subject *dectype.Subject
	var lastIat time.Time
	for i, e := range entries {
		if !e.ok {
			continue
		}
		p := e.payload
		if p.ChainID != doc.ChainID {
			add(st, i, dectype.CodeChainIDMismatch, "the entry's chain_id is not the document's")
		}
		if issuer == "" {
			issuer = p.Issuer
		} else if p.Issuer != issuer {
			add(st, i, dectype.CodeMixedIssuers, "the entry's issuer differs from entry 0's")
		}
		if subject == nil {
			subject = p.Subject
		} else if *p.Subject != *subject {
			add(st, i, dectype.CodeMixedSubjects, "the entry's subject differs from entry 0's: a chain is about one client")
		}
		if *p.Seq != i {
			add(st, i, dectype.CodeSeq, "seq %d at position %d: seq starts at 0 and is contiguous", *p.Seq, i)
		}
		if i > 0 && e.iat.Before(lastIat) {
			add(st, i, dectype.CodeIatDecreasing, "iat is before the previous entry's")
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

func checkSignatures(entries []*entry, trust Trust, sv *dectype.Verdict) {
	revokedInChain := map[string]int{} // kid → index of the key.revoke entry
	for i, e := range entries {
		if !e.ok {
			continue
		}
		h := e.header
		switch {
		case h.keyMember:
			add(sv, i, dectype.CodeKeyInHeader, "the header names a key (jwk, jku, x5u or x5c): keys are pinned, never taken from an entry")
			continue
		case h.crit:
			add(sv, i, dectype.CodeUnknownCrit, "the header has crit: no extension is understood")
			continue
		case h.other || h.Typ != dectype.EntryType || !idPattern.MatchString(h.Kid):
			add(sv, i, dectype.CodeBadHeader, "the header must be {alg, kid, typ: %q}", dectype.EntryType)
			continue
		}
		keyFits, allowed := allowedAlgs[h.Alg]
		if !allowed {
			add(sv, i, dectype.CodeAlgNotAllowed, "alg must be EdDSA or ES256")
			continue
		}
		set, ok := trust.Keys[e.payload.Issuer]
		if !ok || set == nil {
			add(sv, i, dectype.CodeUnknownIssuer, "no keys are pinned for the entry's issuer")
			continue
		}
		key, ok := set.LookupKeyID(h.Kid)
		if !ok {
			add(sv, i, dectype.CodeUnknownKid, "no pinned key of the issuer has the entry's kid")
			continue
		}
		pub, err := key.PublicKey()
		if err != nil || !keyFits(pub) {
			add(sv, i, dectype.CodeAlgKeyMismatch, "alg %s does not match the pinned key's type", h.Alg)
			continue
		}
		if _, err := jws.Verify([]byte(e.raw), jws.WithKey(jwa.SignatureAlgorithm(h.Alg), pub)); err != nil {
			add(sv, i, dectype.CodeBadSignature, "the signature does not verify under the pinned key")
			continue
		}
		if at, ok := trust.revokedAt(e.payload.Issuer, h.Kid); ok && !e.iat.Before(at) {
			add(sv, i, dectype.CodeRevokedKey, "the key was revoked in the trust store before the entry's iat")
			continue
		}
		if j, ok := revokedInChain[h.Kid]; ok && !e.iat.Before(entries[j].iat) {
			add(sv, i, dectype.CodeRevokedKey, "the key was revoked by entry %d", j)
			continue
		}
		if e.payload.Type == dectype.TypeKeyRevoke {
			if kid := revokedKid(&e.payload); kid != "" {
				if _, seen := revokedInChain[kid]; !seen {
					revokedInChain[kid] = i
				}
			}
		}
	}
}

func checkChain(entries []*entry, cv *dectype.Verdict) {
	seen := map[int][]int{}
	for i, e := range entries {
		if !e.ok {
			continue
		}
		seen[*e.payload.Seq] = append(seen[*e.payload.Seq], i)
		prev := e.payload.Prev
		switch {
		case i == 0 && prev != nil:
			add(cv, i, dectype.CodePrevNotNull, "entry 0 must have prev null")
		case i > 0 && (prev == nil || *prev != Hash(entries[i-1].raw)):
			add(cv, i, dectype.CodePrevMismatch, "prev is not the hash of entry %d", i-1)
		}
	}
	seqs := make([]int, 0, len(seen))
	for s := range seen {
		seqs = append(seqs, s)
	}
	sort.Ints(seqs)
	for _, s := range seqs {
		if at := seen[s]; len(at) > 1 {
			add(cv, at[1], dectype.CodeFork, "seq %d appears at entries %v", s, at)
		}
	}
}
