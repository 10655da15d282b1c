package model

import (
	"encoding/json"
	"strings"

	"github.com/phc-project/phc/internal/identity"
)

// IDOfRef is the claim id of a version ref "id@version".
func IDOfRef(ref string) string {
	id, _, _ := strings.Cut(ref, "@")
	return id
}

// EntityTypes maps each entity type to its class in the graph.
var EntityTypes = map[string]string{
	"person": "Person", "project": "Project", "goal": "Goal", "event": "Event", "organisation": "Organisation",
}

// KindRelationship is the claim kind of an attributed edge.
const KindRelationship = "relationship"

// Relationship is the value of a relationship claim.
type Relationship struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
}

// RelationshipOf returns the edge a relationship claim asserts; ok is false
// for another kind or a value that is not a well-formed relationship.
func RelationshipOf(c *Claim) (Relationship, bool) {
	var rel Relationship
	if c.Kind != KindRelationship || len(c.Value) == 0 {
		return rel, false
	}
	if err := json.Unmarshal(c.Value, &rel); err != nil {
		return rel, false
	}
	if !ValidNode(rel.From) || !ValidNode(rel.To) || !ValidRelation(rel.Relation) {
		return rel, false
	}
	return rel, true
}

// ValidNode reports whether n names a node claims can be about.
func ValidNode(n string) bool {
	return n == SubjectSelf || identity.ValidID(n, "ent_")
}

// ValidRelation: a lower-case word of at most 64 bytes, as the binding
// says.
func ValidRelation(r string) bool {
	return ValidSegment(r) && !strings.Contains(r, ".")
}

// ValidSegment also serves persona ids.
func ValidSegment(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
