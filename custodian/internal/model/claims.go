package model

import (
	"encoding/json"
	"time"

	"github.com/phc-project/phc/internal/jsondiff"
	"github.com/phc-project/phc/internal/pcp"
	"github.com/phc-project/phc/schema"
)

// ClaimRead is one claim as read, with the revision it was read at.
type ClaimRead struct {
	Claim    Claim  `json:"claim"`
	Revision uint64 `json:"revision"`
}

// ClaimList is a list of claims at a revision.
type ClaimList struct {
	Claims   []Claim `json:"claims"`
	Revision uint64  `json:"revision"`
}

// PCPVersion is the Personal Context Protocol version the /context facade
// speaks.
const PCPVersion = pcp.Version

// FieldList is the discovery answer: fields without values.
type FieldList struct {
	ContextVersion string      `json:"context_version"`
	Fields         []pcp.Field `json:"fields"`
	Revision       uint64      `json:"revision"`
}

// FieldRead is one field with its value, at a revision. The field's members
// are at the top level of its JSON, as PCP clients read them.
type FieldRead struct {
	pcp.Field
	Revision uint64   `json:"revision"`
	Warnings []string `json:"warnings,omitempty"`
}

// CategoryFields lists the fields of one category, with values.
type CategoryFields struct {
	Category string      `json:"category"`
	Fields   []pcp.Field `json:"fields"`
	Revision uint64      `json:"revision"`
	Warnings []string    `json:"warnings,omitempty"`
}

// ContextBundle is every field, with values, grouped by category.
type ContextBundle = pcp.ContextBundle

// The outcomes of a field write (PUT /context/fields/{id}, context_set).
const (
	WriteCommitted = "committed" // written: the answer carries the field and its revision
	WritePending   = "pending"   // a proposal waits for the owner: the answer carries its id
)

// FieldWritten answers a committed field write: the field as written, with
// status "committed" (which stands in for the field's own status member).
type FieldWritten struct {
	FieldRead
	Status string `json:"status"`
}

// BulkItem is the outcome of one proposal of a bulk decision: the claim it
// became (confirm), or why it was not decided (the constraint code of the
// error it would have answered alone).
type BulkItem struct {
	ProposalID string `json:"proposal_id"`
	ClaimID    string `json:"claim_id,omitempty"`
	Version    int    `json:"version,omitempty"`
	Constraint string `json:"constraint,omitempty"`
	Error      string `json:"error,omitempty"`
}

// BulkDecision answers a bulk review decision: one item per id, in the
// order given, and the revision after it.
type BulkDecision struct {
	Decided  int        `json:"decided"`
	Items    []BulkItem `json:"items"`
	Revision uint64     `json:"revision"`
}

// ReviewItem is a proposal in the owner's review queue, with what it would
// change: when its key (about the same subject) already has an active
// claim, that claim's current version, how the proposed value differs from
// it, and Conflict set.
type ReviewItem struct {
	Proposal
	Current  *ReviewCurrent `json:"current,omitempty"`
	Diff     []ValueChange  `json:"diff,omitempty"`
	Conflict bool           `json:"conflict,omitempty"`
}

// ReviewCurrent is the active claim a proposal would supersede.
type ReviewCurrent struct {
	ClaimID      string          `json:"claim_id"`
	Version      int             `json:"version"`
	Value        json.RawMessage `json:"value"`
	Sensitivity  string          `json:"sensitivity"`
	Restrictions []Restriction   `json:"restrictions"`
	WrittenBy    string          `json:"written_by"`
}

// Proposed is the answer to a proposal.
type Proposed struct {
	ProposalID string `json:"proposal_id,omitempty"`
	Status     string `json:"status"`
	Revision   uint64 `json:"revision"`
}

// Edits are what the owner may change while confirming.
type Edits struct {
	Value       json.RawMessage `json:"value,omitempty"`
	Sensitivity string          `json:"sensitivity,omitempty"`
	ValidFrom   *time.Time      `json:"valid_from,omitempty"`
	ValidTo     *time.Time      `json:"valid_to,omitempty"`
}

// Written is the answer to a write that produced a claim version.
type Written struct {
	Claim    Claim  `json:"claim"`
	Revision uint64 `json:"revision"`
}

// ProposalStatus is what an app may know of one of its own proposals: its
// id, whether it is still proposed (waiting for the owner), confirmed,
// rejected or withdrawn, and when. While it waits, the key it proposed is
// shown; once decided, nothing of the owner's decision but the outcome is
// — not the value confirmed, which the owner may have edited, nor the
// owner's reason for a rejection.
type ProposalStatus struct {
	ProposalID string     `json:"proposal_id"`
	Status     string     `json:"status"`
	Key        string     `json:"key,omitempty"`
	ProposedAt time.Time  `json:"proposed_at"`
	DecidedAt  *time.Time `json:"decided_at,omitempty"`
}

// OwnProposals is the answer to an app's question about its proposals.
type OwnProposals struct {
	Proposals []ProposalStatus `json:"proposals"`
	Revision  uint64           `json:"revision"`
}

// SearchResult is the answer to a field search: the best matches first,
// each with its value, as a read of them would return it.
type SearchResult struct {
	Query    string      `json:"query"`
	Fields   []pcp.Field `json:"fields"`
	Revision uint64      `json:"revision"`
	Warnings []string    `json:"warnings,omitempty"`
}

// ValueChange is one difference between two JSON values: the JSON Pointer
// (RFC 6901) of the member that differs, its value before (absent when it
// was added) and after (absent when it was removed).
type ValueChange = jsondiff.Change

// Readable is what one recipient may read right now, purpose by purpose.
type Readable struct {
	Recipient string            `json:"recipient"`
	Purposes  []ReadablePurpose `json:"purposes"`
	Revision  uint64            `json:"revision"`
}

// ReadablePurpose is what a context read for Purpose would serve now, and
// the grants it would be served under.
type ReadablePurpose struct {
	Purpose string   `json:"purpose"`
	Claims  []Claim  `json:"claims"`
	Grants  []string `json:"grants"`
}

// PersonaDeleted is the answer to DeletePersona.
type PersonaDeleted struct {
	ID string `json:"id"`
	// Claims are the claims taken out of the persona (they stay, in any
	// other personas they are in).
	Claims []string `json:"claims"`
	// GrantsNarrowed no longer select the persona; they keep their other
	// persona selectors. GrantsRevoked selected no other persona: left
	// without one they would cover every persona, so they are revoked.
	GrantsNarrowed []string `json:"grants_narrowed"`
	GrantsRevoked  []string `json:"grants_revoked"`
	Revision       uint64   `json:"revision"`
}

// EntityCreated is the answer to CreateEntity.
type EntityCreated struct {
	Entity   Entity `json:"entity"`
	Claim    *Claim `json:"claim,omitempty"`
	Revision uint64 `json:"revision"`
}

// NeighborQuery asks for the relationships around a node.
type NeighborQuery struct {
	Node        string // self or ent_…
	Relation    string // only edges with this relation; empty for all
	Depth       int    // hops, 1 to MaxDepth; 0 means 1
	Purpose     string // a consumer's purpose
	Cursor      string // from a previous page's next_cursor
	Limit       int    // edges per page, 1 to 500; 0 means 100
	MinRevision uint64
}

// MaxDepth bounds a traversal.
const MaxDepth = 3

// NeighborEdge is one relationship a traversal discloses.
type NeighborEdge struct {
	Edge     string `json:"edge"` // the relationship claim's ref
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
	Depth    int    `json:"depth"`
}

// Neighbors is one page of a traversal.
type Neighbors struct {
	Node       string         `json:"node"`
	Edges      []NeighborEdge `json:"edges"`
	NextCursor string         `json:"next_cursor,omitempty"`
	Revision   uint64         `json:"revision"`
}

// GraphReport is what [Service.Check] found about the graph.
type GraphReport struct {
	OK        bool     `json:"ok"`
	Edges     int      `json:"edges"`
	Watermark uint64   `json:"watermark"`
	Revision  uint64   `json:"revision"`
	Missing   int      `json:"missing"` // in the store's projection, not in the graph
	Extra     int      `json:"extra"`   // in the graph, not in the projection
	Problems  []string `json:"problems"`
	// Sync says what the last unlock did to bring the graph up to the
	// store (replayed the outbox, or rebuilt it), if anything.
	Sync string `json:"sync,omitempty"`
}

// CheckReport is the answer of phc check.
type CheckReport struct {
	OK        bool         `json:"ok"`
	Graph     GraphReport  `json:"graph"`
	Receipts  Verification `json:"receipts"`
	Summaries []string     `json:"summaries"` // current summaries with a parent that is not current
	// Claims lists the claims whose meta in the view (loaded from the
	// metas snapshot and the metas written since) differs from their meta
	// in the store.
	Claims []string `json:"claims"`
}

// CorrectionInput is the body of a correction, per the correction schema:
// the body of [Service.Correct].
type CorrectionInput struct {
	Value           json.RawMessage `json:"value,omitzero"`
	ValidFrom       *time.Time      `json:"valid_from,omitzero"`
	ValidTo         *time.Time      `json:"valid_to,omitzero"`
	Sensitivity     string          `json:"sensitivity,omitzero"`
	Restrictions    []Restriction   `json:"restrictions,omitzero"` // added to those the claim has
	Remove          []string        `json:"remove_restrictions,omitzero"`
	Kind            string          `json:"kind,omitzero"`
	Assertion       string          `json:"assertion,omitzero"`
	Note            *string         `json:"note,omitzero"`
	ExpectedVersion int             `json:"expected_version,omitzero"`
	decoded
}

func (*CorrectionInput) spec() inputSpec { return inputSpec{schema: schema.Correction} }

// PersonasInput sets a claim's persona associations: the body of
// [Service.SetPersonas].
type PersonasInput struct {
	Personas []string `json:"personas"`
	decoded
}

func (*PersonasInput) spec() inputSpec { return inputSpec{} }
