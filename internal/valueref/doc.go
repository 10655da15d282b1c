// Package valueref is the format of phc's value references and the wire
// of Client-Vault v=1 that the custodian and the local vault hook
// (internal/clientvault) share. It knows nothing of a vault: who may see
// which value, and which reference stands for it, is package custodian's.
//
// # References
//
// A value served in reference mode goes out as a reference in its place:
//
//	⟦TYPE_N:display⟧   or, for a secret, ⟦TYPE_N⟧
//
// The key TYPE_N is what the custodian minted for one reader ([ValidKey]):
// TYPE is one to 32 upper-case letters and "_", taken from the claim's key
// and never from its value ([Type]: identity.passport_number → PASSPORT,
// contact.email → EMAIL), N a decimal number from 1 to 999999. The display
// is a hint that hides at least three characters behind ••• ([Mask]): an
// address keeps two characters of its local part and its domain
// (ma•••@example.com), any other text its first and last two characters
// from seven characters on (X1•••89), one of each with five or six, none
// below. An object or array, and the value of a secret key ([Secret]:
// credentials, passwords, PINs, tokens…) have no display. [Pattern] finds
// references in a text, [Keys] lists their keys.
//
// # Client-Vault v=1
//
// A local vault holds a 256-bit secret K per server origin and reader; its
// requests show kid = base64(SHA-256(K)) ([Kid]), and its resolve request
// presents K itself, base64url without padding ([ParseBearer]). The
// resolve body is
//
//	{"now": "<RFC 3339>", "refs": [{"key": "EMAIL_1", "seen_at": "<RFC 3339>"}, …]}
//
// with at most [MaxRefs] keys, each minted by the custodian and listed
// once, in at most [MaxBody] bytes; [ParseRequest] reads it and
// [Request.Check] holds a request built in Go to the same rules. The
// answer is {"values": {"EMAIL_1": "…"}}: every value, or one error.
package valueref
