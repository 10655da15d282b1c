package schema

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Names of the documents of the binding, for [Validator.Validate] and
// [Validator.DecodeValid].
const (
	Proposal   = "proposal"   // body of POST /phc/v1/proposals
	Claim      = "claim"      // a stored or served claim version
	Correction = "correction" // body of PUT /phc/v1/claims/{id}
	Grant      = "grant"      // body of POST /phc/v1/grants
	Persona    = "persona"    // body of POST /phc/v1/personas
	// PersonaUpdate is the body of PUT /phc/v1/personas/{id}.
	PersonaUpdate = "persona_update"
	// The documents of migration (docs/formats/bundle.md): a bundle's
	// signed payload, its manifest and its records (also what an import
	// yields), and a record held in the quarantine.
	BundlePayload  = "bundle_payload"
	BundleManifest = "bundle_manifest"
	BundleRecords  = "bundle_records"
	Held           = "held"
)

// Names lists the documents a Validator knows.
var Names = []string{Proposal, Claim, Correction, Grant, Persona, PersonaUpdate, BundlePayload, BundleManifest, BundleRecords, Held}

// baseURL is the base of the $id of every schema file of binding 0.1; the
// proposal schema, for example, is baseURL + "proposal.json". Nothing is
// ever fetched from it.
const baseURL = "https://phc.local/schema/0.1/"

//go:embed v0.1/*.json
var files embed.FS

const filesDir = "v0.1"

// A Validator checks decoded documents against the compiled schemas of the
// binding. Build one with [New] when the daemon starts; it is immutable and
// safe for concurrent use.
type Validator struct {
	schemas map[string]*jsonschema.Schema
}

// New compiles the embedded schemas. It fails only if the embedded files
// are broken, which the package's tests rule out.
func New() (*Validator, error) {
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	v := &Validator{schemas: make(map[string]*jsonschema.Schema)}
	for _, name := range Names {
		sch, err := c.Compile(baseURL + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("schema: compiling %s: %w", name, err)
		}
		v.schemas[name] = sch
	}
	return v, nil
}

// newCompiler returns a compiler for draft 2020-12 with format assertions
// on, holding every embedded file as a resource and unable to load
// anything else.
func newCompiler() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	entries, err := fs.ReadDir(files, filesDir)
	if err != nil {
		return nil, fmt.Errorf("schema: reading embedded schemas: %w", err)
	}
	for _, e := range entries {
		raw, err := fs.ReadFile(files, path.Join(filesDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("schema: reading %s: %w", e.Name(), err)
		}
		doc, err := Decode(raw, DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("schema: decoding %s: %w", e.Name(), err)
		}
		url := baseURL + e.Name()
		if obj, _ := doc.(map[string]any); obj == nil || obj["$id"] != url {
			return nil, fmt.Errorf("schema: %s: $id is not %s", e.Name(), url)
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("schema: adding %s: %w", e.Name(), err)
		}
	}
	return c, nil
}

// refusingLoader is the compiler's loader for every URL that is neither an
// embedded file nor a JSON Schema meta-schema (which the library embeds):
// schemas never cause a network or file access.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema: refusing to load %s: only the embedded schemas are available", url)
}

// Validate checks doc, a value as returned by [Decode], against the schema
// called name ([Proposal], [Claim], [Correction], [Grant], [Persona] or
// [PersonaUpdate]). It returns nil when doc is valid, and otherwise at most
// 50 violations, sorted by path, then keyword, then message; see [Violation]. An unknown name
// yields the single violation {Path: "", Keyword: "$schema", Message:
// "unknown schema"}.
func (v *Validator) Validate(name string, doc any) []Violation {
	sch, ok := v.schemas[name]
	if !ok {
		return []Violation{{Path: "", Keyword: "$schema", Message: "unknown schema"}}
	}
	return (&Schema{s: sch}).Validate(doc)
}

// DecodeValid decodes raw with [Decode] and validates the result with
// [Validator.Validate]. It returns exactly one of: the document (valid),
// violations (decoded but invalid; the document is then withheld), or an
// error (not decodable: it wraps [ErrInvalidJSON] or [ErrTooLarge]; or name
// is unknown).
func (v *Validator) DecodeValid(name string, raw []byte, lim Limits) (any, []Violation, error) {
	if _, ok := v.schemas[name]; !ok {
		return nil, nil, fmt.Errorf("schema: unknown schema %q", name)
	}
	doc, err := Decode(raw, lim)
	if err != nil {
		return nil, nil, err
	}
	if vs := v.Validate(name, doc); vs != nil {
		return nil, vs, nil
	}
	return doc, nil, nil
}

// A Schema is one standalone schema compiled by [Compile]. It is
// immutable and safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// Compile compiles raw, a JSON Schema (draft 2020-12, format assertions
// on) that refers to nothing but itself and the binding's files — an MCP
// tool's input schema, say — under name, a unique name used only to tell
// schemas apart. It fails if raw is not a valid schema.
func Compile(name string, raw []byte) (*Schema, error) {
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	doc, err := Decode(raw, DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("schema: decoding %s: %w", name, err)
	}
	url := baseURL + "adhoc/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: adding %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: compiling %s: %w", name, err)
	}
	return &Schema{s: sch}, nil
}

// Validate checks doc, a value as returned by [Decode], as
// [Validator.Validate] does: nil when valid, else at most 50 violations.
func (s *Schema) Validate(doc any) []Violation {
	err := s.s.Validate(doc)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Violation{{Path: "", Keyword: "$schema", Message: "cannot be validated"}}
	}
	return violations(verr)
}

// Kind tells which document of [Names] doc (as [Decode] returns it) is
// from its members, or "" when it cannot.
func Kind(doc any) string {
	m, ok := doc.(map[string]any)
	if !ok {
		return ""
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("manifest", "records"):
		return BundlePayload
	case has("bundle_version"):
		return BundleManifest
	case has("claims"):
		return BundleRecords
	case has("bundle_id", "problems"):
		return Held
	case has("assertion", "producer"), has("recorded_at"):
		return Claim
	case has("key", "value"):
		return Proposal
	case has("recipient", "purpose"):
		return Grant
	case has("id", "name"):
		return Persona
	}
	return ""
}
