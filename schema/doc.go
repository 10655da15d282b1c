// Package schema is the PHC JSON binding 0.1: strict decoding of untrusted
// JSON and its validation against the binding's JSON Schemas. Everything
// untrusted that arrives as JSON — request bodies, MCP tool arguments,
// imported records — passes through here before the custodian sees it.
//
// # Strict decoding
//
// [Decode] parses one JSON value and refuses what encoding/json would
// silently accept or repair: invalid UTF-8 (refused, not replaced), lone
// surrogates in \u escapes (refused), duplicate member names at any depth,
// trailing data, empty input. It bounds the input's size, nesting, string
// lengths and member count by [Limits] ([DefaultLimits]: 1 MiB, depth 32,
// 64 KiB strings, 10,000 members and elements), checking depth with a byte
// scan before building anything, and it bounds number literals (128 bytes,
// exponent within ±999). Numbers decode as [encoding/json.Number], so large
// integers keep every digit. [DecodeInto] applies the same checks and then
// fills a Go value, refusing unknown fields.
//
// Failures wrap [ErrInvalidJSON], or [ErrTooLarge] for input over
// Limits.MaxBytes. Their texts give offsets and limits but never input
// bytes; the only input they repeat is a field name, quoted with %q and cut
// to 64 bytes.
//
// # Schemas
//
// The binding is a set of JSON Schema (draft 2020-12) files embedded from
// v0.1/: proposal.json, claim.json, correction.json, grant.json,
// persona.json and persona_update.json, with shared definitions in common.json. Their $ids are
// https://phc.local/schema/0.1/<file>; they are registered with the
// compiler directly and nothing is ever fetched, from that host or any
// other. Formats (date-time, uri) are asserted. Every object is closed
// (additionalProperties false) except a restriction's params.
//
//   - proposal: what an application proposes (POST /phc/v1/proposals):
//     key, value, kind, assertion, and optionally subject, evidence,
//     reported producer information, valid_from, valid_to, sensitivity,
//     restrictions, personas_hint and note.
//   - claim: a stored or served claim version, as in docs/design.md §4.
//   - correction: the body of PUT /phc/v1/claims/{id}; at least one member.
//   - grant: the body of POST /phc/v1/grants.
//   - persona: the body of POST /phc/v1/personas. Its guardrails are
//     objects of a closed set of types (common.json#/$defs/guardrail);
//     any other type is a violation.
//   - persona_update: the body of PUT /phc/v1/personas/{id}; at least one
//     of name, preferences and guardrails, each replacing the persona's.
//
// Keys are dot notation of 1 to 16 segments matching
// ^[a-z0-9][a-z0-9_-]{0,63}$, at most 256 characters in all. Restrictions
// of the known types are checked further: purpose_only needs
// params.purposes, expires needs params.at (a date-time),
// source_controlled and third_party need holder. Other restriction types
// pass the schema; the custodian refuses to use a record under an unknown
// mandatory one.
//
// # Violations
//
// Build one [Validator] with [New] and share it: it is immutable and safe
// for concurrent use. [Validator.Validate] returns the document's
// [Violation]s — JSON Pointer path, failing keyword, message — flattened to
// the most specific failures, sorted by path then keyword, at most 50.
// [Validator.DecodeValid] decodes and validates in one call.
//
// Violation messages never echo the document's values. They are fixed
// lower-case texts of this package, such as "is required", "is not
// allowed", "must be a string", "must be one of the allowed values", in
// which only schema-defined bounds and format names vary. Values may be
// secrets, so they appear neither in messages nor in error texts; the
// paths name members, and a member name longer than 64 bytes is cut.
//
// # Compatibility
//
// Paths, keywords and messages are API: clients and the conformance suite
// read them, and the golden file testdata/violations.golden.json pins
// them. A binding that changes what is valid gets a new directory and $id
// base (v0.2/), never an edit of v0.1/.
package schema
