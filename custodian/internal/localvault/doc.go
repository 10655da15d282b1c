// Package localvault is the server side of Client-Vault v=1 (the wire is
// package valueref's; the hook's side is internal/clientvault): a reader's
// local vault hook holds a 256-bit secret K and shows kid =
// base64(SHA-256(K)) on its MCP requests. A kid first seen binds, pending,
// to the reader that showed it; once the owner activates the binding, the
// hook may resolve that reader's references with K. Only the kid is
// stored, never K.
//
// What it holds: the Client-Vault state beside the view (State: bindings
// by kid, each reader's minted references, the day's count of resolved
// values) and its load; binding kids (SeeKey), the owner's list and
// activation or revocation of bindings (Keys, SetKey); resolving
// references (Resolve); minting the reference keys a read serves
// (References, AsReference).
//
// What it needs from the core (package custodian, which it never
// imports), through Core and Rules: entering the open vault, owner-only
// settled reads, the owner check, committing in the journal, the reads
// rate of a vault key and the log; and the rules over one view — whether
// a consumer may still act, when a consumer's record was created, and
// whether a reader's grants still allow it a reference's value
// (Rules.RefAllowed). Who may see what is decided there, not here.
package localvault
