// Package httpapi is the HTTP face of phc: the PHC API under /phc/v1 and the
// PCP-compatible facade under /context. It is a thin adapter: each handler
// decodes the request, calls one custodian.Service method and encodes the
// answer.
//
// # Errors
//
// Handlers return errors instead of writing them. One translator,
// [Server.writeError], turns every error into the wire form
//
//	{"error": "<public text>", "constraint": "<code>", "violations"?: [...]}
//
// with the status and constraint code from the custodian's single error
// table (custodian.Kind.Row). The wrapped cause goes only to the log; an
// error that is not a *custodian.Error becomes a bare 500 "internal".
//
// # Hygiene
//
// The server answers only requests whose Host is a loopback name or address
// and refuses browser requests from a foreign Origin, so a web page cannot
// reach it by DNS rebinding or cross-site requests. Every body is bounded
// ([MaxBody]); paths must be clean. A record the caller may not see answers
// exactly like a record that does not exist.
package httpapi
