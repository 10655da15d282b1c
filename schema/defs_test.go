package schema

import (
	"encoding/json"
	"testing"
)

func TestDef(t *testing.T) {
	for _, name := range []string{"key", "keyPattern", "purpose", "personaId", "subject", "kind", "assertion", "sensitivity"} {
		raw, err := Def(name)
		if err != nil {
			t.Errorf("Def(%q) = %v", name, err)
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil || v["type"] != "string" {
			t.Errorf("Def(%q) = %s; want a string schema", name, raw)
		}
	}
	if _, err := Def("nope"); err == nil {
		t.Errorf("Def(nope) = nil error")
	}
	for _, name := range []string{Proposal, Claim, Correction, Grant, Persona, "common"} {
		if raw, err := File(name); err != nil || !json.Valid(raw) {
			t.Errorf("File(%q) = %v", name, err)
		}
	}
	if _, err := File("../x"); err == nil {
		t.Errorf("File(../x) = nil error")
	}
}

// grammarVectors are testdata/grammar.json: per definition of common.json,
// strings it accepts and refuses. The custodian's validators and the MCP
// tools' input schemas are checked against the same file.
type grammarVectors map[string]struct {
	Valid   []string `json:"valid"`
	Invalid []string `json:"invalid"`
}

// TestGrammarVectors checks the vectors' labels against the schema
// itself, so that the file the other implementations are held to says
// what common.json says.
func TestGrammarVectors(t *testing.T) {
	raw := readFile(t, "testdata/grammar.json")
	var vs grammarVectors
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	c, err := newCompiler()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"key", "keyPattern", "purpose"} {
		v, ok := vs[name]
		if !ok || len(v.Valid) == 0 || len(v.Invalid) == 0 {
			t.Errorf("grammar.json lacks valid and invalid %s vectors", name)
			continue
		}
		sch, err := c.Compile(baseURL + "common.json#/$defs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Valid {
			if err := sch.Validate(s); err != nil {
				t.Errorf("common.json %s refuses %q, labelled valid", name, s)
			}
		}
		for _, s := range v.Invalid {
			if err := sch.Validate(s); err == nil {
				t.Errorf("common.json %s accepts %q, labelled invalid", name, s)
			}
		}
	}
}
