// Package custodian is the service core of phc: the only place with business
// rules. It holds a person's context as attributed, versioned claims grouped
// into personas; takes proposals from applications into the owner's review
// queue; records the owner's confirmations, corrections, deletions and
// grants; serves recipients exactly what their grants allow; and leaves a
// hash-chained receipt for every decision and disclosure.
//
// # Using it
//
// The daemon builds a [Store] (internal/store), a [Vault] (internal/vault), a
// schema validator and a logger, and hands them to [New]. Adapters (HTTP,
// MCP, CLI) authenticate a bearer credential with [Service.AuthenticateOn],
// naming the [Channel] it came through, and call one Service method per
// request with the resulting [Principal]; the rules that differ by channel
// are the core's (see channel.go). Every
// failure is an [*Error] whose [Kind] maps, through the single table in
// internal/model/errors.go, to an HTTP status and a PCP constraint code.
//
// # Consistency
//
// All writes go through one journal goroutine that applies them in order to
// the in-memory view and commits them to the store in groups (one fsync per
// group). A write returns only once it is durable, with the monotonically
// increasing revision it was assigned. Reads of recipients are receipted
// through the same journal, so any data disclosed is durable before the
// disclosure is answered. A failed commit locks the vault: the store is the
// truth and the next unlock reloads from it.
//
// # Existence hiding
//
// A record a principal may not see answers exactly like one that does not
// exist: the same [Kind], the same public text, the same receipt path.
//
// # Facade and protocol glue
//
// The rules of the protocols phc speaks are here; their formats are in the
// packages named for them. The PCP facade is in the files pcp_*.go
// (context reads, scope reads, the audit log, well-known keys), with PCP's
// vocabulary in internal/pcp. Value references and Client-Vault v=1 are
// references.go and internal/localvault, with the reference format and the
// resolve wire in internal/valueref. OIDC recipients are trust.go, with
// the token exchange's plumbing in internal/oidcrecipient. Migration
// bundles, archives and the quarantine (hold, adopt, reject, unblock) are
// custodian/internal/migration, with the bundle format and the judgement
// of imported records in package quarantine. DEC admission (presentations,
// the trust store, the admission cache) is custodian/internal/admission;
// whether a read needs a qualification is decided here (dec.go).
//
// # Caveats
//
// Deletion erases the content of every version of a claim (versions are
// otherwise immutable): the right to erasure outranks immutability. Tombstones
// keep ids and version numbers only.
package custodian
