package custodian

import (
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/localvault"
	"github.com/phc-project/phc/custodian/internal/model"
)

// referenceMode reports whether claim c, served to p under g (nil: the
// owner's auto_grant), goes as a reference: the grant's disclosure, else
// the owner's setting for the claim's tier, says so, or p asked for one.
func (st *state) referenceMode(p Principal, g *Grant, c *Claim) bool {
	if p.Disclosure() == DisclosureReference {
		return true
	}
	mode := st.Settings.DisclosureFor(c.Sensitivity)
	if g != nil && g.Disclosure != "" {
		mode = g.Disclosure
	}
	return mode == DisclosureReference
}

// references returns, for each claim of wants, the reference text that
// stands for its value for reader (localvault.References): what it mints
// is durable before it returns.
func (s *Service) references(st *state, reader string, wants []localvault.Want) (map[string]string, error) {
	return localvault.References(vaultCore{s}, st.localVault(), reader, wants)
}

// refAllowed reports whether reader's grants still allow it the value of
// r that m was minted for: r is active, and a grant in force for the
// reader, for m's purpose (or, for a key served under the owner's
// auto_grant, that policy), still covers it with its tier, restrictions
// and guardrails. A single-use grant that served the read still counts:
// the resolve delivers that read.
func (st *state) refAllowed(reader string, r *claimRecord, m *localvault.Ref, now time.Time) bool {
	if r.Meta.Status != StatusActive || m.MintedAt.Before(st.consumerSince(reader)) {
		return false
	}
	// The reader must still be an approved app (or an OIDC recipient,
	// which has no record): a removed app's references resolve to nothing,
	// whatever they were served under (found in review: those minted under
	// auto_grant outlived the app).
	if con, ok := st.Consumers[reader]; ok {
		if con.Status != ConsumerApproved {
			return false
		}
	} else if !strings.HasPrefix(reader, "oidc:") {
		return false
	}
	c := r.Head()
	if m.Grant == "" {
		return st.Settings.AutoGranted(c.Sensitivity) && restrictionsAllow(c.Restrictions, "", &Grant{}, now)
	}
	for _, g := range st.GrantsBy[reader] {
		if g.RevokedAt != nil || !now.Before(g.ExpiresAt) || (g.SpentAt != nil && g.ID != m.Grant) || g.Purpose != m.Purpose {
			continue
		}
		if !g.AllowsOp(OpRead) || !grantCovers(g, r) || model.TierRank[c.Sensitivity] > model.TierRank[g.EffectiveTier()] {
			continue
		}
		if restrictionsAllow(c.Restrictions, m.Purpose, g, now) && st.guardrailsAllow(g, r, m.Purpose) {
			return true
		}
	}
	return false
}
