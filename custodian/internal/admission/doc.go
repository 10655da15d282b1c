// Package admission is the custodian's DEC glue (docs/formats/dec.md): the
// owner's trust store (pinned issuers, their keys and revocations) and
// admission policies, the verification of a DEC document against the
// pinned issuers, the documents recipients present with their service
// tokens (and the purge of those no token can use any more), and the
// admission answer a read consults, reused for a minute (Cache).
//
// The verifier is package dec's (Verifier; the core must not import dec,
// whose key package imports net/http), the data are package dectype's.
// Package admission never imports the core (package custodian); what it
// needs from it is Core: owner-only checks, the strict decoding of inputs,
// rate limits, the journal's writes and the owner's settled reads — and
// Rules, the core's rules on a view: whether a token may still act and the
// grants a recipient reads under. Which reads need an admission (a grant's
// requirement on sensitive data) and what a read refused for one answers
// stay the core's rules.
package admission
