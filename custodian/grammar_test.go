package custodian_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/schema"
)

// compileDef compiles definition name of the binding's common.json.
func compileDef(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, err := schema.File("common")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://phc.local/schema/0.1/common.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url + "#/$defs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// TestGrammarsAgreeWithSchema holds the core's validators of keys, key
// patterns and purposes to common.json's definitions: on the labelled
// vectors of schema/testdata/grammar.json and on random strings over the
// grammars' alphabet.
func TestGrammarsAgreeWithSchema(t *testing.T) {
	raw, err := os.ReadFile("../schema/testdata/grammar.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors map[string]struct{ Valid, Invalid []string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab09_-.*: Az\n"
	for _, g := range []struct {
		def   string
		valid func(string) bool
	}{
		{"key", custodian.ValidKey},
		{"keyPattern", custodian.ValidPattern},
		{"purpose", custodian.ValidPurpose},
	} {
		sch := compileDef(t, g.def)
		v := vectors[g.def]
		if len(v.Valid) == 0 || len(v.Invalid) == 0 {
			t.Fatalf("grammar.json has no %s vectors", g.def)
		}
		check := func(s string) {
			if got, want := g.valid(s), sch.Validate(s) == nil; got != want {
				t.Errorf("%s(%q): core says %v, common.json says %v", g.def, s, got, want)
			}
		}
		for _, s := range v.Valid {
			if !g.valid(s) {
				t.Errorf("%s(%q) = false; labelled valid", g.def, s)
			}
		}
		for _, s := range v.Invalid {
			if g.valid(s) {
				t.Errorf("%s(%q) = true; labelled invalid", g.def, s)
			}
		}
		for range 20000 {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			check(string(b))
		}
		for _, s := range append(v.Valid, v.Invalid...) {
			check(s)
		}
	}
}
