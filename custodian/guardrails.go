package custodian

import (
	"encoding/json"
	"slices"
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

// readLevel reports whether the guardrail decides a whole read (its
// purpose and grant) rather than each claim.
func (g Guardrail) readLevel() bool {
	return g.Type != GuardMaxSensitivity && g.Type != GuardKeysOnly
}

// allows reports whether g allows a read for purpose under grant gr of the
// claim c; c nil asks about the read as a whole (claim-level guardrails
// then allow). An unknown type allows nothing.
func (g Guardrail) allows(c *Claim, purpose string, gr *Grant) bool {
	if gr.Auto {
		purpose = "" // as restrictionsAllow: an auto-approved grant's purpose is the app's word
	}
	switch g.Type {
	case GuardNoTraining:
		// As the restriction: the grant's purpose category decides, and an
		// auto-approved grant's category is the app's word.
		return !gr.Auto && notTraining(gr.Category)
	case GuardLocalProcessingOnly:
		return gr.Route == "local"
	case GuardPurposeOnly:
		return g.Params != nil && slices.Contains(g.Params.Purposes, purpose)
	case GuardMaxSensitivity:
		if c == nil {
			return true
		}
		return g.Params != nil && tierRank[c.Sensitivity] <= tierRank[g.Params.Tier] && g.Params.Tier != ""
	case GuardKeysOnly:
		if c == nil {
			return true
		}
		return g.Params != nil && matchAny(g.Params.Keys, c.Key)
	}
	return false
}

// guardrailsAllow reports whether the guardrails of every persona through
// which grant g reaches claim record r allow reading it for purpose. A read
// is under a persona when the grant that serves it selects by that persona
// and the claim is in it (a read that names a persona is served only by
// grants that select it). A claim reached by keys or ids alone is under no
// persona.
func (st *state) guardrailsAllow(g *Grant, r *claimRecord, purpose string) bool {
	c := r.head()
	for _, id := range g.Selectors.Personas {
		pe := st.personas[id]
		if pe == nil || len(pe.Guardrails) == 0 || !r.inPersona(id) {
			continue
		}
		for _, gr := range pe.Guardrails {
			if !gr.allows(c, purpose, g) {
				return false
			}
		}
	}
	return true
}

// personaReadAllowed reports whether the read-level guardrails of persona
// pe allow a read for purpose under grant g.
func personaReadAllowed(pe *Persona, purpose string, g *Grant) bool {
	for _, gr := range pe.Guardrails {
		if gr.readLevel() && !gr.allows(nil, purpose, g) {
			return false
		}
	}
	return true
}
