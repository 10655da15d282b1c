package admission

import (
	"sync"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// Cache is one open vault's admission of presented documents: the
// verifier it asks, and its answers, each reused for a minute. Its mutex
// is a leaf, taken under the view's lock held shared (see package engine's
// lock order).
type Cache struct {
	dec   Verifier   // the Service's; nil answers "no_verifier"
	mu    sync.Mutex // guards cache (readers share the view's lock)
	cache map[admissionKey]admission
}

// NewCache returns an empty Cache that asks dec, which may be nil.
func NewCache(dec Verifier) *Cache {
	return &Cache{dec: dec, cache: make(map[admissionKey]admission)}
}

// Qualified reports whether p's presented document is admitted now under
// the policy g requires: the failed condition codes, and the chain head.
// Callers hold st.Mu (shared is enough).
func (c *Cache) Qualified(st *engine.State, p model.Principal, g *model.Grant, now time.Time) (bool, []string, string) {
	if g.Requires == nil {
		return true, nil, ""
	}
	pol := st.DecPolicies[g.Requires.Qualification]
	if pol == nil {
		return false, []string{"unknown_policy"}, ""
	}
	if p.Token() == nil {
		return false, []string{"no_presentation"}, ""
	}
	pres := st.Presentations[p.Token().ID]
	if pres == nil {
		return false, []string{"no_presentation"}, ""
	}
	if pres.Subject == nil || *pres.Subject != presenterSubject(st, p) {
		return false, []string{"recipient"}, "" // not bound to this recipient
	}
	if c.dec == nil {
		return false, []string{"no_verifier"}, ""
	}
	// Verifying a chain costs up to 1,000 signatures: an answer is reused
	// for a minute, unless the presentation, the policy or the trust store
	// changed (a revocation takes effect at once; max_age within a minute).
	key := admissionKey{token: p.Token().ID, policy: pol.ID}
	trustRev := uint64(0)
	for _, d := range st.DecTrust {
		trustRev = max(trustRev, d.Revision)
	}
	c.mu.Lock()
	a, ok := c.cache[key]
	c.mu.Unlock()
	if ok && a.presentedAt.Equal(pres.PresentedAt) && a.policyRev == pol.Revision && a.trustRev == trustRev &&
		!now.Before(a.at) && now.Sub(a.at) < admissionTTL {
		return a.ok, a.failed, a.head
	}
	adm := c.dec.Admit(pres.Document, pol.Policy, pins(st), now)
	admitted, failed, head := adm.Admitted(), adm.Codes(), adm.Head
	c.mu.Lock()
	if len(c.cache) >= maxAdmissionCache {
		clear(c.cache)
	}
	c.cache[key] = admission{ok: admitted, failed: failed, head: head, presentedAt: pres.PresentedAt,
		policyRev: pol.Revision, trustRev: trustRev, at: now}
	c.mu.Unlock()
	return admitted, failed, head
}

// admissionTTL bounds how long an admission answer is reused.
const (
	admissionTTL      = time.Minute
	maxAdmissionCache = 4096
)

type admissionKey struct{ token, policy string }

// admission is a cached answer of Qualified.
type admission struct {
	ok                  bool
	failed              []string
	head                string
	presentedAt, at     time.Time
	policyRev, trustRev uint64
}
