package schema

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
)

// Def returns the JSON Schema of definition name of the binding's shared
// definitions (common.json's $defs: "key", "keyPattern", "purpose",
// "personaId", "subject", "kind", …), as its file holds it, or an error if
// there is none. Other faces of the custodian (the MCP tools' input
// schemas, say) build theirs from it rather than keep a copy.
func Def(name string) (json.RawMessage, error) {
	raw, err := fs.ReadFile(files, path.Join(filesDir, "common.json"))
	if err != nil {
		return nil, fmt.Errorf("schema: reading common.json: %w", err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema: decoding common.json: %w", err)
	}
	d, ok := doc.Defs[name]
	if !ok {
		return nil, fmt.Errorf("schema: common.json has no definition %q", name)
	}
	return d, nil
}

// File returns the embedded schema document called name ([Proposal],
// [Claim], [Correction], [Grant], [Persona] or "common") as it stands.
func File(name string) (json.RawMessage, error) {
	raw, err := fs.ReadFile(files, path.Join(filesDir, name+".json"))
	if err != nil {
		return nil, fmt.Errorf("schema: no document %q: %w", name, err)
	}
	return raw, nil
}
