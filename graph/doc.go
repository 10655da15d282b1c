// Package graph is the custodian's knowledge graph API: nodes, attributed
// edges, lineage, permission-checked traversal, the invalidation closure
// and N-Quads export. graph/cayley implements it on Cayley; graph/graphtest
// is the contract every implementation passes.
//
// The graph is a projection of the canonical store, never a source of
// truth: the custodian applies each committed change to it as a [Delta]
// carrying the revision it brings the graph to (its watermark), and can
// rebuild it from the store at any time. Quads hold opaque ids only — claim
// refs (clm_…@2), entity ids (ent_…), persona keys (per_…), summary refs —
// never a name or a value: those live in the encrypted store.
//
// This package has no dependencies, so that the core (which must not
// import net/http, as Cayley's metrics do) can use its types.
package graph
