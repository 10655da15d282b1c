// Package graph is the custodian's knowledge graph: Cayley behind a small
// API of nodes, attributed edges, lineage, permission-checked traversal,
// the invalidation closure and N-Quads export.
//
// The graph is a projection of the canonical store, never a source of
// truth: the custodian applies each committed change to it as a [Delta]
// carrying the revision it brings the graph to (its watermark), and can
// rebuild it from the store at any time. Quads hold opaque ids only — claim
// refs (clm_…@2), entity ids (ent_…), persona ids, summary refs — never a
// name or a value: those live in the encrypted store.
//
// Two backends pass the same contract (graph/graphtest): Cayley's memstore
// ([OpenMemory]) and Cayley's kv layer over a bbolt file that this package
// opens itself with mode 0600 ([Open]).
package graph
