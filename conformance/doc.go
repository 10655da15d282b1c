// Package conformance is the black-box conformance suite of a phc
// custodian: cases with stable requirement ids, kept as data in
// conformance/testdata, and a small runner that sends them to any
// [Target] and reports pass, fail or skip for each.
//
// It needs nothing but a target URL and the owner's session token: every
// consumer, persona, grant and claim a case uses is made by the case's own
// setup steps through the API. Run it with
//
//	phc conformance --target http://127.0.0.1:7200 [--owner-token ctx_…]
//
// or from Go with [Run] (a [Report]), [Start] (a [Session] whose driver
// runs each case), or conformancetest.RunT (one subtest per case).
//
// # Requirement ids
//
// A case id is PREFIX-SECTION-name and matches [IDPattern]:
//
//   - PHC-n[.m]: a requirement of the project's design (docs/design.md) by
//     section: PHC-4 the domain model (claims, versions, revisions,
//     restrictions, receipts); PHC-5.2 tokens, PHC-5.3 authority (grants,
//     token scope and mode, sensitivity tiers), PHC-5.5 existence hiding,
//     PHC-5.7 local API hygiene; PHC-6.1 the error form and routing, PHC-6.2
//     the PHC API routes.
//   - PCP-7.n: the PCP 0.1.0 HTTP facade under /context (§7): PCP-7.1
//     status, lock and unlock; PCP-7.2 service tokens (minted, listed,
//     revoked); PCP-7.3 consumers (self-registration, list, removal);
//     PCP-7.4 the audit log; PCP-7.5 fields (read, written, discovered,
//     by category, as a grouped context, tier overrides); PCP-7.6 context
//     requests and the owner's approval; PCP-7.7 export and import.
//
// Ids are stable: a case may be corrected, never renumbered; a new
// requirement gets a new id.
//
// # Case files
//
// Each testdata/*.json file is one group, decoded strictly (unknown or
// duplicate members are errors):
//
//	{"group": "proposals", "description": "…", "cases": [case, …]}
//
// A case:
//
//	{"id": "PHC-6.2-propose-created", "title": "…",
//	 "requires": ["owner", "lockable"],   // optional
//	 "setup": [step, …],                  // optional; builds what it needs
//	 "steps": [step, …],                  // the assertions
//	 "known_bug": "…"}                    // optional, see below
//
// "owner" means the case acts as the owner; "lockable" that it locks the
// vault or re-enters the owner's password (it then needs the password and
// Secret Key, runs after every other case, and the runner unlocks the
// vault again afterwards if need be). A case whose
// requirement cannot be met is skipped with the reason — never silently.
// A case marked known_bug declares that the reference custodian fails it
// today: it still runs, its failure is reported as XFAIL (not failing the
// run) and its success as a failure, so the mark is removed with the fix.
//
// A step is one request and its expected outcome:
//
//	{"as": "owner" | "anonymous" | "<alias>" | "raw-token:<literal>",
//	 "method": "POST", "path": "/phc/v1/proposals?x=${var}",
//	 "headers": {"Origin": "…", "Host": "…"},          // optional
//	 "body": {…JSON…} | "body_raw": "…", "repeat": N,  // optional
//	 "retry": {"while": expect, "max": N},             // optional
//	 "expect": expect,                                 // optional in setup
//	 "capture": {"var": "/json/pointer", "@owner": "/token"}}
//
// "as" defaults to anonymous; an alias sends the token in variable
// tok_<alias> (captured by an earlier step that minted it). "headers"
// override what "as" implies; "Host" sets the request's Host. "body_raw"
// is sent as is ("repeat" times over, for oversized bodies), for input
// that is not JSON. "retry" resends the request while its answer matches
// "while", at most max times; the last answer must match "expect".
// "capture" stores values of the JSON answer; "@owner" replaces the
// owner's session (after an unlock).
//
// An expectation:
//
//	{"class": "schema-violation",       // outcome class (or status + constraint)
//	 "status": 400, "constraint": "…",  // optional refinements
//	 "json": {"/violations": {"$contains": {"path": "/kind", "keyword": "required"}}},
//	 "headers": {"Retry-After": {"$pattern": "^[0-9]+$"}},
//	 "same_as_step": 2,                 // byte-identical status and body
//	 "body_excludes": ["${secret}"]}    // strings the answer must not hold
//
// Outcome classes are "ok" (any 2xx unless status says which, and no
// constraint code) and one per constraint code of docs/design.md §6
// ("invalid-request", "schema-violation", "unauthenticated",
// "vault-locked", "session-required", "scope-exceeded", "mode-denied",
// "not-found", "conflict", "too-large", "rate-limited", …) plus
// "method-not-allowed" (405 invalid_request); see [Classes]. An error
// class checks the status, the constraint code and the error form
// {"error": text, "constraint": code} as JSON; "schema-violation" also
// checks that violations [{path, keyword, message}] is not empty,
// "rate-limited" that Retry-After is a positive number of seconds. Message
// texts are never asserted.
//
// Each "json" member maps a JSON Pointer (RFC 6901; "" is the whole
// answer) to an expected value. A plain value must be equal (objects with
// the same members, numbers by value). An object whose members all start
// with $ is a matcher, all of whose operators must hold: $exists
// (true/false), $type (string, number, integer, boolean, null, array,
// object), $pattern (a regular expression), $len (of an array, object or
// string), $contains and $none (some / no array element matches; objects
// there match when they hold at least the given members, which may be
// matchers themselves), $gt, $gte, $lt, $lte (numbers) and $ne.
//
// # Variables
//
// ${name} is replaced in paths, headers, bodies and expectations. A JSON
// string that is exactly "${name}" becomes the captured value with its
// type (a number stays a number). Built in: ${run}, random per run;
// ${case}, unique per case within a run (${run}-N) — cases name their
// consumers, personas and keys with it, so that they never meet another
// case's data on a target that keeps its state; ${host}, the host[:port]
// of the target URL (for same-origin checks); ${owner_token}, the
// owner's session when the case starts; ${password} and ${secret_key} in
// lockable cases. Load checks that every variable is defined by an
// earlier step.
//
// # Output
//
// Reports never show secrets: the password, the Secret Key and every
// ctx_ and ctxs_ token are redacted from failure details.
package conformance
