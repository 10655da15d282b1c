// Package engine is the custodian's storage engine: the mechanism under
// the core's rules. It holds the store's interfaces (Store, Tx and their
// optional capabilities), the claim metas (Meta) and their snapshot's
// binary form, the ordered claim indexes (Index), the claim cache that
// keeps the claims' content resident within a byte budget (Cache), the
// durability tracker that reads wait on (Durability) and the journal's
// queue that groups jobs for one commit (Journal).
//
// It knows nothing of claims' content, grants or receipts: the core
// (package custodian) instantiates its generic parts with its own types,
// and decides what a job writes. The engine never imports the core.
package engine
