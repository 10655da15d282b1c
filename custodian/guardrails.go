package custodian

import (
	"slices"

	"github.com/phc-project/phc/custodian/internal/model"
)

// guardrailAllows reports whether g allows a read for purpose under grant gr of the
// claim c; c nil asks about the read as a whole (claim-level guardrails
// then allow). An unknown type allows nothing.
func guardrailAllows(g Guardrail, c *Claim, purpose string, gr *Grant) bool {
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
		return g.Params != nil && model.TierRank[c.Sensitivity] <= model.TierRank[g.Params.Tier] && g.Params.Tier != ""
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
	c := r.Head()
	for _, id := range g.Selectors.Personas {
		pe := st.Personas[id]
		if pe == nil || len(pe.Guardrails) == 0 || !r.InPersona(id) {
			continue
		}
		for _, gr := range pe.Guardrails {
			if !guardrailAllows(gr, c, purpose, g) {
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
		if gr.ReadLevel() && !guardrailAllows(gr, nil, purpose, g) {
			return false
		}
	}
	return true
}
