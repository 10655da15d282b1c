package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// cognee reads Cognee's JSON export of a dataset's knowledge graph
// (cognee.export(dataset, format="json"), written to
// <dataset>_export.json). Its format was checked in topoteretes/cognee at
// commit a8f9760bb6da: cognee/api/v1/export/export.py (the formats:
// pydantic, cogx, json, graphml, cypher), cognee/modules/migration/export.py
// and formats.py (write_json: {"nodes": [{"id", …the node's properties}],
// "edges": [{"source", "target", "relationship_name", …the edge's
// properties}]}), cognee/modules/engine/models/Entity.py (an Entity has a
// name and a description) and cognee/infrastructure/engine/models/
// DataPoint.py (created_at, updated_at: epoch milliseconds). Only the
// json format is read; the cogx archive, GraphML and Cypher are not.
//
// Cognee's graph is what its language model extracted from the documents
// it was given, so every memory is an inference. An Entity node (type
// "Entity", with a name) is a memory "<name>: <description>" of category
// "entity"; an edge between two such entities is a fact "<name>
// <relationship_name> <name>" of category "relations" (a relationship
// claim needs entities, which an import does not make). The other nodes —
// documents, chunks of their text, entity types, summaries — are not
// memories: they are counted and reported by type, as are edges that do
// not join two entities.
type cognee struct{}

func init() { Register(cognee{}) }

func (cognee) Name() string { return "cognee" }

func (cognee) Detect(name string, head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 || h[0] != '{' || !bytes.Contains(h, []byte(`"nodes"`)) {
		return false
	}
	for _, m := range []string{`"relationship_name"`, `"DocumentChunk"`, `"TextDocument"`, `"EntityType"`, `"TextSummary"`} {
		if bytes.Contains(h, []byte(m)) {
			return true
		}
	}
	return false
}

type cogneeNode struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   any    `json:"created_at"`
	UpdatedAt   any    `json:"updated_at"`
}

type cogneeEdge struct {
	Source       string `json:"source"`
	Target       string `json:"target"`
	Relationship string `json:"relationship_name"`
	CreatedAt    any    `json:"created_at"`
	UpdatedAt    any    `json:"updated_at"`
}

func (cognee) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	if in.Size > in.Limits.MaxBytes {
		return refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
	}
	names := map[string]string{} // entity id → name
	left := map[string]int{}     // what is not read, by kind
	leave := func(kind string) {
		if _, ok := left[kind]; ok || len(left) < 64 {
			left[kind]++
		} else {
			left["other"]++
		}
	}
	err := StreamMembers(in.Reader(), in.Limits, map[string]func(int, json.RawMessage) error{"nodes": func(i int, raw json.RawMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var n cogneeNode
		if err := Strict(raw, &n); err != nil {
			return err
		}
		if n.Type != "Entity" || strings.TrimSpace(n.Name) == "" {
			leave("nodes of type " + Clip(n.Type, 64))
			return nil
		}
		if len(names) < omMaxHistory {
			names[n.ID] = Clip(n.Name, 1024)
		}
		text := n.Name
		if d := strings.TrimSpace(n.Description); d != "" {
			text += ": " + d
		}
		m := Memory{SourceID: n.ID, Text: text, Category: "entity"}
		m.At, m.RawTime, _ = ParseTime(firstTime(n.CreatedAt, n.UpdatedAt))
		return emit(m)
	}})
	if err != nil {
		return err
	}
	err = StreamMembers(in.Reader(), in.Limits, map[string]func(int, json.RawMessage) error{"edges": func(i int, raw json.RawMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var e cogneeEdge
		if err := Strict(raw, &e); err != nil {
			return err
		}
		from, to := names[e.Source], names[e.Target]
		if from == "" || to == "" || strings.TrimSpace(e.Relationship) == "" {
			leave("edges not between two entities")
			return nil
		}
		m := Memory{SourceID: e.Source + ":" + e.Relationship + ":" + e.Target, Text: from + " " + e.Relationship + " " + to,
			Category: "relations", Refs: []string{Ref("cognee", "node", e.Source), Ref("cognee", "node", e.Target)}}
		m.At, m.RawTime, _ = ParseTime(firstTime(e.CreatedAt, e.UpdatedAt))
		return emit(m)
	}})
	kinds := make([]string, 0, len(left))
	for k := range left {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		drop(Drop{Location: in.Name + ": " + k, Reason: fmt.Sprintf("%d not memories (documents, chunks, types, summaries, links)", left[k])})
	}
	return err
}

func firstTime(ts ...any) any {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return nil
}
