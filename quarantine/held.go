package quarantine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/jsondiff"
)

// Statuses of a held record.
const (
	StatusQuarantined = "quarantined"
	StatusBlocked     = "blocked" // an unknown mandatory restriction: no adopt until the owner removes it
)

// Held is one imported record held for the owner: apart from every claim,
// it answers exactly like an absent record to everyone else.
type Held struct {
	ID       string `json:"id"`
	BundleID string `json:"bundle_id"`
	Source   string `json:"source"` // the exporting custodian
	Kind     string `json:"kind"`   // claim | persona | entity | summary
	Record   string `json:"record"` // its id at the source
	Key      string `json:"key,omitempty"`
	// Sensitivity and Restrictions are what the record would be adopted
	// with: for a claim, its tier raised to at least the key's default
	// here, and the types of every restriction any of its versions
	// carried. The owner sees them before adopting.
	Sensitivity  string   `json:"sensitivity,omitempty"`
	Restrictions []string `json:"restrictions,omitempty"`
	Status       string   `json:"status"`
	Problems     []string `json:"problems"`
	// Body is the record as imported (for a claim: its versions and
	// personas). A vault may keep it apart from the description.
	Body json.RawMessage `json:"body,omitempty"`
	// Value and Here are for the owner's review, in a page of held
	// records, never stored: a held claim's value as it would be adopted,
	// and, when its key holds a claim here now, that claim and its value.
	// Adopting it adds a claim beside the one here, which becomes the
	// key's field; nothing is merged.
	Value      json.RawMessage `json:"value,omitempty"`
	Here       *Here           `json:"here,omitempty"`
	ImportedAt time.Time       `json:"imported_at"`
	Revision   uint64          `json:"revision"`
}

// Here is the claim a held claim's key holds in the vault now, its value,
// and how the held value differs from it.
type Here struct {
	Claim string            `json:"claim"`
	Value json.RawMessage   `json:"value"`
	Diff  []jsondiff.Change `json:"diff,omitempty"`
}

// Report is the answer of an import.
type Report struct {
	BundleID   string         `json:"bundle_id"`
	Source     string         `json:"source"`
	Counts     map[string]int `json:"counts"`
	LossReport []Loss         `json:"loss_report"` // the source's, then what the import dropped
	Records    []Held         `json:"records"`     // without bodies
	Revision   uint64         `json:"revision"`
}

// ForeignID names a producer of another custodian (or of another vault's
// archive, source "archive") until the owner maps it to a local identity.
func ForeignID(source, id string) string { return "foreign:" + source + "/" + id }

// Identities maps a source's producers, by their display (KIND:ID), to
// their foreign names.
type Identities map[string]string

// MapIdentities returns the foreign names of the producers refs lists.
func MapIdentities(source string, refs []IdentityRef) Identities {
	out := make(Identities, len(refs))
	for _, r := range refs {
		out[r.Display] = ForeignID(source, r.SourceID)
	}
	return out
}

// Problem is the problem a record produced by display (KIND:ID) has, or ""
// when the producer is not foreign.
func (m Identities) Problem(display string) string {
	if f, ok := m[display]; ok {
		return "identity unmapped: " + f
	}
	return ""
}

// Restriction is what the import judges of a record's restriction.
type Restriction struct {
	Type      string
	Mandatory bool
}

// Version is what the import judges of one version of a claim: its number
// and restrictions.
type Version struct {
	Version      int
	Restrictions []Restriction
}

// Verdict is the judgement of a claim's restrictions.
type Verdict struct {
	Blocked  bool
	Problems []string
	// Drop lists the unknown restriction types whose advisory instances
	// are dropped, from every version: each is listed once in Loss.
	Drop map[string]bool
	Loss []Loss
}

// JudgeClaim judges the restrictions of claim id, whose versions are
// oldest first, against the restriction types known says this custodian
// knows. An unknown mandatory restriction blocks the claim (on any
// version: adoption keeps every version); an unknown advisory one, on any
// version, is dropped and reported once. The restrictions a claim is
// adopted with are the union over its versions (a later version never
// lowers what an earlier one carried), so none of them is judged alone.
func JudgeClaim(id string, versions []Version, known func(string) bool) Verdict {
	v := Verdict{Drop: map[string]bool{}}
	last := len(versions) - 1
	for i, ver := range versions {
		for _, r := range ver.Restrictions {
			switch {
			case known(r.Type):
			case r.Mandatory:
				v.Blocked = true
				pr := blockedBy(r.Type)
				if i != last {
					pr = fmt.Sprintf("%s (version %d)", pr, ver.Version)
				}
				v.Problems = append(v.Problems, pr)
			case !v.Drop[r.Type]:
				v.Drop[r.Type] = true
				v.Loss = append(v.Loss, Loss{Record: id, Dropped: "restriction " + r.Type, Reason: "unknown advisory restriction"})
			}
		}
	}
	return v
}

// NeverSent returns the problems of a claim whose versions carry a
// restriction that stays says keeps a record with its source (no_export,
// source_controlled, third_party): a source must never have sent it, so it
// is blocked, and no unblock removes a restriction this custodian knows.
func NeverSent(versions []Version, stays func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, ver := range versions {
		for _, r := range ver.Restrictions {
			if stays(r.Type) && !seen[r.Type] {
				seen[r.Type] = true
				out = append(out, fmt.Sprintf("blocked: restriction %s: it should never have left its source (version %d)", r.Type, ver.Version))
			}
		}
	}
	return out
}

// Blocking returns the problems of a record (a summary, say) with
// restrictions rs: one for each unknown mandatory restriction, which
// blocks it.
func Blocking(rs []Restriction, known func(string) bool) []string {
	var out []string
	for _, r := range rs {
		if !known(r.Type) && r.Mandatory {
			out = append(out, blockedBy(r.Type))
		}
	}
	return out
}

func blockedBy(typ string) string { return "blocked: unknown mandatory restriction " + typ }

// Unblocked returns problems without those the removal of the restriction
// types removed settles.
func Unblocked(problems, removed []string) []string {
	return slices.DeleteFunc(slices.Clone(problems), func(pr string) bool {
		for _, t := range removed {
			if pr == blockedBy(t) || strings.HasPrefix(pr, blockedBy(t)+" (") {
				return true
			}
		}
		return false
	})
}
