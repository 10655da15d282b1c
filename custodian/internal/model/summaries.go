package model

import (
	"encoding/json"
	"time"
)

// Summary is derived context: a value made from exact versions of claims
// and other summaries, recorded as prov:wasDerivedFrom lineage. It inherits
// the union of its parents' restrictions and their highest tier. A change
// to any ancestor makes it stale in the same revision; a stale or
// ineligible summary is never served.
type Summary struct {
	ID           string          `json:"id"`
	Version      int             `json:"version"`
	Value        json.RawMessage `json:"value"`
	DerivedFrom  []string        `json:"derived_from"`
	Restrictions []Restriction   `json:"restrictions"`
	Sensitivity  string          `json:"sensitivity"`
	Status       string          `json:"status"`
	Ineligible   string          `json:"ineligible_reason,omitempty"`
	Stale        *Staleness      `json:"stale,omitempty"`
	Producer     *Authenticated  `json:"producer,omitempty"` // for the owner only
	Origin       string          `json:"origin,omitempty"`   // the bundle it was adopted from; for the owner only
	CreatedAt    time.Time       `json:"created_at"`
	Revision     uint64          `json:"revision"`
}

// Staleness says what made a summary stale: the parent through which the
// invalidation reached it (Cause parent_stale when that parent is itself a
// summary), the claim version whose change started it and how it changed,
// and the revision of that change.
type Staleness struct {
	Parent    string     `json:"parent"`
	Cause     string     `json:"cause"`
	Root      string     `json:"root"`
	RootCause string     `json:"root_cause"`
	Revision  uint64     `json:"revision"`
	At        *time.Time `json:"at,omitempty"`
}

// Ref is the "id@version" form used in lineage.
func (s *Summary) Ref() string { return VersionRef(s.ID, s.Version) }

// Entity is a node claims can be about and relationships can join: a
// person, project, goal, event or organisation. It is an opaque id and a
// type; its name, like everything said about it, is a claim with the entity
// as subject, so that a grant decides who may see it.
type Entity struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Revision  uint64    `json:"revision"`
}

// Summary statuses.
const (
	SummaryCurrent    = "current"
	SummaryStale      = "stale"
	SummaryIneligible = "ineligible"
)

// Invalidation causes, as GET /phc/v1/summaries/{id} reports them.
const (
	CauseCorrected           = "corrected"
	CauseDeleted             = "deleted"
	CauseRetracted           = "retracted"
	CauseDisputed            = "disputed"
	CausePersonasNarrowed    = "personas_narrowed"
	CauseRestrictionsChanged = "restrictions_changed"
	CauseSensitivityChanged  = "sensitivity_changed"
	CauseParentStale         = "parent_stale"
)

// SummaryWritten is the answer to CreateSummary.
type SummaryWritten struct {
	Summary  Summary `json:"summary"`
	Revision uint64  `json:"revision"`
}

// SummaryRead is one summary as read, with the revision it was read at.
type SummaryRead struct {
	Summary  Summary `json:"summary"`
	Revision uint64  `json:"revision"`
}

// SummaryInput is the body of POST /phc/v1/summaries: the body of
// [Service.CreateSummary].
type SummaryInput struct {
	Value       json.RawMessage `json:"value"`
	DerivedFrom []string        `json:"derived_from"`
	Purpose     string          `json:"purpose,omitempty"` // a consumer's: the purpose its grants cover the parents for
	decoded
}

func (*SummaryInput) spec() inputSpec { return inputSpec{} }
