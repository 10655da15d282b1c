package engine

// The projection's store records: the outbox holds each committed group's
// graph delta under its revision until the graph has it; meta/graph_floor
// is the highest revision whose delta was applied and pruned.
const (
	BucketOutbox        = "graph_outbox" // %016x revision → graph.Delta
	MetaGraphFloor      = "graph_floor"
	MetaGraphProjection = "graph_projection" // the projectionVersion the graph was built with
)

// ProjectionVersion numbers what claimEdges and its siblings project. A
// graph built with another (a store without the record: 1) is rebuilt at
// unlock. 2: an About edge has no label (it was the claim's head ref, which
// made every correction two graph writes).
const ProjectionVersion = 2
