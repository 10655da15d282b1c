package custodian

import (
	"encoding/json"
	"testing"

	"github.com/phc-project/phc/custodian/internal/model"
)

// TestContextResultJSONPersona: with a persona and without, the encoding
// from cached claims is what encoding/json writes.
func TestContextResultJSONPersona(t *testing.T) {
	c := &Claim{ID: "clm_A", Version: 1, Key: "a.b", Value: json.RawMessage(`"x"`)}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range []*PersonaContext{nil, {ID: "work", Preferences: AdvisoryPreferences{Advisory: true, Items: []string{"be brief"}}}} {
		res := ContextResult{Revision: 9, Persona: pc}
		model.AppendContextClaim(&res, c, raw)
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		type plain ContextResult
		want, _ := json.Marshal(plain(res))
		if string(got) != string(want) {
			t.Errorf("ContextResult JSON = %s; want %s", got, want)
		}
	}
}
