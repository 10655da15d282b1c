// Package pcp is the vocabulary of the Portable Context Protocol (PCP
// 0.1.0) that phc's facade speaks, where it needs no vault: the table of
// well-known keys with their default tiers and synonyms, the hints a
// field write gets when its key looks like another name for a well-known
// one, the wire shape of a field and of the context bundle (encoded from
// each field's cached JSON), and the shape of PCP's audit log (entries,
// actions, durations).
//
// Package custodian serves PCP with it — its Context, ReadScope and Audit
// (in files named pcp_*.go) decide what a reader gets — and the adapters
// (internal/httpapi, internal/mcpserver) put it on the wire. This package
// imports nothing of phc.
//
// # Well-known keys
//
// [WellKnownKeys] is the one table: the README's "Well-known keys" table
// is this table, and a test keeps them equal. A key at or below a
// well-known key takes its tier by default; every other key is standard.
// [FieldHints] names the well-known key a written key is a synonym of, or
// a near miss of (one or two edits away, at the same depth, where the
// well-known key's last segment has at least four characters).
//
// # Audit log
//
// An [AuditEntry] is one receipt as PCP §4's audit trail shows it: an
// action ([AuditAction]: GRANT, REQUEST, READ, WRITE, DENY, EXPIRE, REVOKE
// or ADMIN), the consumer, the fields concerned and, for a token, request
// or grant, its scope and duration ([AuditDuration]: "30min", "1h").
package pcp
