package mcpserver

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	binding "github.com/phc-project/phc/schema"
)

// inputSchema returns tool name's input schema.
func inputSchema(t *testing.T, name string) json.RawMessage {
	t.Helper()
	for _, tl := range (&Server{}).tools() {
		if tl.def.Name == name {
			raw, ok := tl.def.InputSchema.(json.RawMessage)
			if !ok {
				t.Fatalf("%s: input schema is a %T", name, tl.def.InputSchema)
			}
			return raw
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// compile compiles a schema literal, and, with it, the binding's
// documents, so that ref names one of them (as "proposal.json") instead.
func compile(t *testing.T, raw json.RawMessage, ref string) *jsonschema.Schema {
	t.Helper()
	const base = "https://phc.local/schema/0.1/"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, name := range []string{"common", binding.Proposal} {
		f, err := binding.File(name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(f)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(base+name+".json", doc); err != nil {
			t.Fatal(err)
		}
	}
	if ref != "" {
		sch, err := c.Compile(base + ref)
		if err != nil {
			t.Fatal(err)
		}
		return sch
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("mem://tool.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://tool.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func decode(t *testing.T, raw []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGrammarsAgreeWithSchema holds the tools' input schemas for a field id
// and a purpose to the binding's, on schema/testdata/grammar.json.
func TestGrammarsAgreeWithSchema(t *testing.T) {
	raw, err := os.ReadFile("../../schema/testdata/grammar.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors map[string]struct{ Valid, Invalid []string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	get := compile(t, inputSchema(t, "context_get"), "")
	for _, g := range []struct{ def, member string }{{"key", "id"}, {"purpose", "purpose"}} {
		v := vectors[g.def]
		if len(v.Valid) == 0 || len(v.Invalid) == 0 {
			t.Fatalf("grammar.json has no %s vectors", g.def)
		}
		args := func(s string) any {
			m := map[string]any{"id": "a.b", "purpose": "assist"}
			m[g.member] = s
			return m
		}
		for _, s := range v.Valid {
			if err := get.Validate(args(s)); err != nil {
				t.Errorf("context_get refuses %s %q, which the binding accepts: %v", g.member, s, err)
			}
		}
		for _, s := range v.Invalid {
			if err := get.Validate(args(s)); err == nil {
				t.Errorf("context_get accepts %s %q, which the binding refuses", g.member, s)
			}
		}
	}
}

// TestProposeSchemaAgrees holds memory_propose's input schema to
// proposal.json: the same members, the same required ones, the same
// definitions for those the tools share; every proposal the binding
// accepts passes it, and what is wrong at the top level (a member, a key,
// an enum) fails it as it fails the binding. It may be looser below that
// (the core validates every proposal against the binding).
func TestProposeSchemaAgrees(t *testing.T) {
	tool := inputSchema(t, "memory_propose")
	bindingRaw, err := binding.File(binding.Proposal)
	if err != nil {
		t.Fatal(err)
	}
	type shape struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional *bool                      `json:"additionalProperties"`
	}
	var got, want shape
	if err := json.Unmarshal(tool, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bindingRaw, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want.Properties)), slices.Sorted(maps.Keys(got.Properties))); diff != "" {
		t.Errorf("memory_propose members differ from proposal.json (-binding +tool):\n%s", diff)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want.Required)), slices.Sorted(slices.Values(got.Required))); diff != "" {
		t.Errorf("memory_propose required members differ from proposal.json (-binding +tool):\n%s", diff)
	}
	if got.Additional == nil || *got.Additional || want.Additional == nil || *want.Additional {
		t.Errorf("additionalProperties: tool %v, binding %v; want false in both", got.Additional, want.Additional)
	}
	for member, def := range map[string]string{"kind": "kind", "assertion": "assertion", "subject": "subject", "sensitivity": "sensitivity"} {
		d, err := binding.Def(def)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(d, &a)
		_ = json.Unmarshal(got.Properties[member], &b)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("memory_propose %s is not common.json's %s (-binding +tool):\n%s", member, def, diff)
		}
	}

	toolSch := compile(t, tool, "")
	bindingSch := compile(t, nil, "proposal.json")
	goods, _ := filepath.Glob("../../schema/testdata/good/proposal/*.json")
	bads, _ := filepath.Glob("../../schema/testdata/bad/proposal/*.json")
	if len(goods) == 0 || len(bads) == 0 {
		t.Fatal("no proposal vectors in schema/testdata")
	}
	for _, f := range goods {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := decode(t, raw)
		if err := bindingSch.Validate(doc); err != nil {
			t.Fatalf("%s: the binding refuses its own good vector: %v", f, err)
		}
		if err := toolSch.Validate(doc); err != nil {
			t.Errorf("%s: memory_propose refuses a proposal the binding accepts: %v", f, err)
		}
	}
	topLevel := []string{"assertion_bad_enum", "empty_object", "key_bad_pattern", "key_too_many_segments", "key_wrong_type",
		"kind_bad_enum", "missing_key", "not_an_object", "subject_bad_pattern", "unknown_field", "sensitivity_wrong_type"}
	for _, f := range bads {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := decode(t, raw)
		if err := bindingSch.Validate(doc); err == nil {
			t.Fatalf("%s: the binding accepts its own bad vector", f)
		}
		if slices.Contains(topLevel, strings.TrimSuffix(filepath.Base(f), ".json")) && toolSch.Validate(doc) == nil {
			t.Errorf("%s: memory_propose accepts a proposal whose top level the binding refuses", f)
		}
	}
}
