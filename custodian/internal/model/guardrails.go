package model

import (
	"encoding/json"
)

// Guardrail types: the closed set a persona's guardrails are drawn from
// (schema common.json#/$defs/guardrail). A guardrail is a restriction on
// every read under its persona; see [state.guardrailsAllow] for when a read
// is under a persona.
const (
	// GuardNoTraining: no read for the purpose "training" (as the claim
	// restriction no_training).
	GuardNoTraining = "no_training"
	// GuardLocalProcessingOnly: only under a grant whose route is local.
	GuardLocalProcessingOnly = "local_processing_only"
	// GuardPurposeOnly: only for one of params.purposes.
	GuardPurposeOnly = "purpose_only"
	// GuardMaxSensitivity: no claim above params.tier.
	GuardMaxSensitivity = "max_sensitivity"
	// GuardKeysOnly: only claims whose key matches one of params.keys.
	GuardKeysOnly = "keys_only"
)

// Guardrail is one restriction a persona puts on reads under it.
type Guardrail struct {
	Type   string           `json:"type"`
	Params *GuardrailParams `json:"params,omitempty"`
}

// GuardrailParams are a guardrail's parameters; which one a type takes is
// fixed by the type.
type GuardrailParams struct {
	Purposes []string `json:"purposes,omitempty"`
	Tier     string   `json:"tier,omitempty"`
	Keys     []string `json:"keys,omitempty"`
}

// UnmarshalJSON also reads a guardrail stored before guardrails were typed:
// free text, kept as a guardrail of that (unknown) type, which blocks every
// read under its persona until the owner replaces it.
func (g *Guardrail) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err == nil {
		*g = Guardrail{Type: text}
		return nil
	}
	type plain Guardrail
	return json.Unmarshal(b, (*plain)(g))
}

// ReadLevel reports whether the guardrail decides a whole read (its
// purpose and grant) rather than each claim.
func (g Guardrail) ReadLevel() bool {
	return g.Type != GuardMaxSensitivity && g.Type != GuardKeysOnly
}
