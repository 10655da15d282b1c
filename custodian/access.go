package custodian

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/schema"
)

// coversKey reports whether scope pattern p covers key. A scope (of a
// token, a grant's key selectors, a request, a setting) names "*", a
// prefix followed by ".*" (every key below it), or a field, which covers
// that key and every key below it: "addresses.current" covers
// "addresses.current" and "addresses.current.city" (PCP §4, §10).
func coversKey(p, key string) bool {
	if p == "*" || strings.HasSuffix(p, ".*") {
		return engine.MatchKey(p, key)
	}
	return underKey(p, key)
}

// scopePatterns rewrites scope patterns into the pattern language of
// matchKey and scanPattern: a field "a.b" becomes "a.b" and "a.b.*".
func scopePatterns(scope []string) []string {
	out := make([]string, 0, 2*len(scope))
	for _, p := range scope {
		out = append(out, p)
		if p != "*" && !strings.HasSuffix(p, ".*") {
			out = append(out, p+".*")
		}
	}
	return out
}

// matchAny reports whether one of the scope patterns covers key (see
// coversKey).
func matchAny(patterns []string, key string) bool {
	for _, p := range patterns {
		if coversKey(p, key) {
			return true
		}
	}
	return false
}

// validPattern reports whether p is a key pattern: "*", a key, or a key
// followed by ".*".
func validPattern(p string) bool {
	if p == "*" {
		return true
	}
	return model.ValidKey(strings.TrimSuffix(p, ".*"))
}

// maxPurposeLen is the longest purpose, in characters (code points, as
// JSON Schema's maxLength counts them).
const maxPurposeLen = 200

// validPurpose reports whether p is a purpose as the grant binding defines
// it: free text of 1–200 characters of valid UTF-8 that neither begins nor
// ends with a space and holds none of the characters that could make what
// the owner sees differ from what was sent (schema.Disguises). A purpose is
// shown literally everywhere, never interpreted.
func validPurpose(p string) bool {
	if p == "" || !utf8.ValidString(p) || utf8.RuneCountInString(p) > maxPurposeLen {
		return false
	}
	if p[0] == ' ' || p[len(p)-1] == ' ' {
		return false
	}
	return !strings.ContainsFunc(p, schema.Disguises)
}

// grantCovers reports whether the selectors of g cover claim record r.
func grantCovers(g *Grant, r *claimRecord) bool {
	sel := g.Selectors
	if len(sel.Keys) == 0 && len(sel.Personas) == 0 && len(sel.Claims) == 0 {
		return false
	}
	if len(sel.Keys) > 0 && !matchAny(sel.Keys, r.Meta.Key) {
		return false
	}
	if len(sel.Personas) > 0 {
		in := false
		for _, p := range sel.Personas {
			if r.InPersona(p) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	if len(sel.Claims) > 0 {
		in := false
		for _, id := range sel.Claims {
			if id == r.Meta.ID {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// grantsFor returns the grants in force at now that name consumer as
// recipient and allow op.
// They come in a fixed order — multi-use before single-use, then oldest
// first — so that the same read at the same revision always picks the same
// grant, and a single-use grant is spent only when nothing else covers.
func (st *state) grantsFor(consumer, op string, now time.Time) []*Grant {
	var out []*Grant
	for _, g := range st.GrantsBy[consumer] {
		if g.Allows(op, now) {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		si, sj := out[i].Usage == "single", out[j].Usage == "single"
		if si != sj {
			return sj
		}
		if out[i].Revision != out[j].Revision {
			return out[i].Revision < out[j].Revision
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// readGrant returns the grant under which consumer principal p may read r
// for purpose at now, or nil. It applies, in order: the token's read mode
// and scope, the claim's status, its sensitivity tier (sensitive and
// critical data need a per-request approval, which owner grants are not),
// its restrictions, the guardrails of the personas the grant reaches it
// through, and a grant for this recipient, operation and purpose whose
// selectors cover the claim.
func (st *state) readGrant(grants []*Grant, p Principal, r *claimRecord, purpose string, now time.Time) *Grant {
	if p.Token() == nil || !p.Token().CanRead() || r.Meta.Status != StatusActive {
		return nil
	}
	// Key and tier are in the record: a claim no grant selects is passed
	// over without reading its content from the store.
	if !matchAny(p.Token().Scope, r.Meta.Key) {
		return nil
	}
	for _, g := range grants {
		if g.Purpose != purpose || !grantCovers(g, r) || model.TierRank[r.Meta.Tier] > model.TierRank[g.EffectiveTier()] {
			continue
		}
		if !restrictionsAllow(r.Head().Restrictions, purpose, g, now) || !st.guardrailsAllow(g, r, purpose) {
			continue
		}
		if g.Requires != nil && model.TierRank[r.Meta.Tier] >= model.TierRank[SensitivitySensitive] {
			if ok, _, _ := st.qualified(p, g, now); !ok {
				continue // the extra condition on sensitive data is not met
			}
		}
		return g
	}
	return nil
}

// defaultSensitivity is the tier a key gets unless the owner overrides it.
func defaultSensitivity(key string) string {
	tier := SensitivityStandard
	for _, r := range tierRoots {
		if underKey(r.root, key) {
			tier = model.RaiseTier(tier, r.tier)
		}
	}
	return tier
}

// patternTier is the highest default tier of any key scope pattern p
// covers (a field covers the keys below it too). It is computed from the
// defaults alone, never from what exists, so that an answer that depends on
// it discloses nothing.
func patternTier(p string) string {
	if p == "*" {
		return SensitivityCritical
	}
	prefix, isPrefix := strings.CutSuffix(p, ".*")
	if !isPrefix {
		return model.RaiseTier(defaultSensitivity(p), patternTier(p+".*"))
	}
	tier := SensitivityStandard
	for _, r := range tierRoots {
		if underKey(r.root, prefix) || strings.HasPrefix(r.root, prefix+".") {
			tier = model.RaiseTier(tier, r.tier)
		}
	}
	return tier
}

// live reports whether consumer principal p may still act at now: its token
// is the current record of that token (revocation replaces the record),
// unrevoked and unexpired, and its consumer is registered and approved.
// Callers hold st.mu.
func (st *state) live(p Principal, now time.Time) bool {
	if p.Kind() != PrincipalConsumer || p.Token() == nil {
		return false
	}
	t := st.TokenByID[p.Token().ID]
	return t == p.Token() && st.tokenLive(t, now)
}

// tokenLive is the one rule of a service token's life, which authentication,
// the owner's token list and the live-token cap share: neither revoked nor
// expired, and its recipient still there — an approved consumer, or, for
// an OIDC recipient's token, an issuer still on the trust list.
func (st *state) tokenLive(t *ServiceToken, now time.Time) bool {
	if t.RevokedAt != nil || !now.Before(t.ExpiresAt) {
		return false
	}
	if t.Trust != "" {
		_, ok := st.Trust[t.Trust]
		return ok
	}
	c, ok := st.Consumers[t.Consumer]
	return ok && c.Status == ConsumerApproved
}

// recipientRead decides a recipient's read and records it. decide runs on
// the view under st.mu and returns the refs it discloses and the grants it
// used; it must set its outputs afresh on every call. It runs first on a
// read-locked snapshot and then, when any write has come in between or a
// single-use grant is involved, again inside the journal in commit order:
// no revocation, deletion or narrowing acknowledged before the read's
// receipt is ever bypassed, and a single-use grant serves one read. When it
// discloses nothing, decide may name the refusal (qualification_required,
// where the recipient may know the record is there); nil means not_found.
// The receipt rc (allow with the refs, or deny with the refusal's
// constraint) and the spending of single-use grants commit before the
// answer, so that receipt and answer come from one decision. disclosed
// reports whether anything was disclosed; err is the refusal decide named,
// if any, when nothing was.
func (s *Service) recipientRead(st *state, p Principal, rc Receipt, decide func(st *state, now time.Time) (records []string, used []*Grant, refused *Error)) (disclosed bool, err error) {
	return s.recipientReadAs(st, p, &rc, decide)
}

// recipientReadAs is recipientRead with the receipt read from *rc once the
// last call of decide has returned, so that decide may set what the read
// settled (its purpose).
func (s *Service) recipientReadAs(st *state, p Principal, rc *Receipt, decide func(st *state, now time.Time) (records []string, used []*Grant, refused *Error)) (disclosed bool, err error) {
	var snap uint64
	var records []string
	var used []*Grant
	var refused *Error
	if err := st.ReadLocked(func() {
		snap = st.Revision
		records, used, refused = decide(st, s.eng.Clock.Now())
	}); err != nil {
		return false, err
	}
	err = s.commit(st, func(st *state, b *batch) error {
		if st.Revision != snap || anySingle(used) {
			records, used, refused = decide(st, b.Now)
		}
		r := *rc
		r.Revision = st.Revision
		if len(records) == 0 {
			r.Decision, r.Constraint, r.Records = "deny", KindNotFound.Row().Constraint, nil
			if refused != nil {
				r.Constraint = refused.Kind.Row().Constraint
			}
			b.Receipt(r)
			return nil
		}
		r.Decision, r.Records = "allow", records
		for _, g := range used {
			r.Records = append(r.Records, g.ID) // the grant that authorised it
			if g.Usage != "single" {
				continue
			}
			ng := *g
			at := b.Now
			ng.SpentAt = &at
			st.SetGrant(&ng)
			b.Put(engine.BucketGrants, g.ID, &ng)
			r.Revision = b.NextRevision()
		}
		b.Receipt(r)
		disclosed = true
		return nil
	})
	if err == nil && !disclosed && refused != nil {
		return false, refused
	}
	return disclosed, err
}

func anySingle(gs []*Grant) bool {
	for _, g := range gs {
		if g.Usage == "single" {
			return true
		}
	}
	return false
}
