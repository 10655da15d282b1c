package custodian

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian/internal/model"
)

// FuzzParseRef: model.ParseRef accepts exactly the refs it can print back, and
// summaryByRef agrees with it on every input.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"clm_AAAAAAAAAAAAAAAAAAAAAAAAAA@1", "sum_AAAAAAAAAAAAAAAAAAAAAAAAAA@12", "clm_A@0", "@", "sum_AAAAAAAAAAAAAAAAAAAAAAAAAA@", "x@01", "clm_AAAAAAAAAAAAAAAAAAAAAAAAAA@99999999999"} {
		f.Add(s)
	}
	st := newState()
	sm := &Summary{ID: "sum_AAAAAAAAAAAAAAAAAAAAAAAAAA", Version: 12}
	st.Summaries[sm.ID] = sm
	f.Fuzz(func(t *testing.T, ref string) {
		id, v, ok := model.ParseRef(ref)
		if ok && model.VersionRef(id, v) != ref {
			t.Fatalf("model.ParseRef(%q) = %q, %d; prints back as %q", ref, id, v, model.VersionRef(id, v))
		}
		if got := st.SummaryByRef(ref); (got != nil) != (ok && id == sm.ID && v == sm.Version) {
			t.Fatalf("summaryByRef(%q) = %v; model.ParseRef says %q %d %v", ref, got, id, v, ok)
		}
	})
}

// FuzzRelationship: relationshipOf never accepts a value whose ends are
// not nodes or whose relation is not a lower-case word, and what it
// accepts round-trips.
func FuzzRelationship(f *testing.F) {
	for _, s := range []string{
		`{"from": "self", "to": "ent_AAAAAAAAAAAAAAAAAAAAAAAAAA", "relation": "friend"}`,
		`{"from": "self", "to": "self", "relation": "x"}`, `null`, `"friend"`, `{"from": 1}`,
		`{"from": "Alice", "to": "self", "relation": "friend"}`, `{"from": "self", "to": "self", "relation": "Best Friend"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		c := &Claim{Kind: KindRelationship, Value: json.RawMessage(value)}
		rel, ok := model.RelationshipOf(c)
		if !ok {
			return
		}
		for _, n := range []string{rel.From, rel.To} {
			if n != "self" && (!strings.HasPrefix(n, "ent_") || len(n) != 30) {
				t.Fatalf("accepted end %q", n)
			}
		}
		if !model.ValidRelation(rel.Relation) || strings.ToLower(rel.Relation) != rel.Relation {
			t.Fatalf("accepted relation %q", rel.Relation)
		}
		raw, _ := json.Marshal(rel)
		if again, ok := model.RelationshipOf(&Claim{Kind: KindRelationship, Value: raw}); !ok || again != rel {
			t.Fatalf("%s does not round-trip", raw)
		}
	})
}

// FuzzCursor: a traversal cursor is a canonical decimal offset or refused.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"0", "1", "100", "-1", "01", "1e3", " 1", "999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		n, ok := parseCursor(cursor)
		if ok && (n < 0 || strconv.Itoa(n) != cursor) {
			t.Fatalf("parseCursor(%q) = %d", cursor, n)
		}
	})
}
