package custodian

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/pcp"
)

// Audit returns the newest receipts, newest first, as PCP audit entries:
// claim references become the keys they are about (a deleted claim's key is
// gone, and shows as its id). Owner only.
func (s *Service) Audit(ctx context.Context, p Principal, limit int) ([]AuditEntry, error) {
	rs, err := s.Receipts(ctx, p, limit)
	if err != nil {
		return nil, err
	}
	st, release, err := s.enter("audit", p)
	if err != nil {
		return nil, err
	}
	defer release()
	st.Mu.RLock()
	defer st.Mu.RUnlock()
	out := make([]AuditEntry, 0, len(rs))
	for i := range rs {
		r := &rs[i]
		e := AuditEntry{Seq: r.Seq, Timestamp: r.At, Action: pcp.AuditAction(r.Operation, r.Decision), Operation: r.Operation,
			Purpose: r.Purpose, Constraint: r.Constraint, Fields: []string{}}
		if strings.HasPrefix(r.Actor, "consumer:") {
			e.Consumer = strings.TrimPrefix(r.Actor, "consumer:")
		} else if r.Recipient != "" {
			e.Consumer = r.Recipient
		}
		e.Scope, e.DurationSeconds = st.auditScope(r.Records)
		if e.DurationSeconds > 0 {
			e.Duration = pcp.AuditDuration(e.DurationSeconds)
		}
		seen := map[string]bool{}
		for _, ref := range r.Records {
			id, _, ok := strings.Cut(ref, "@")
			if !ok || !strings.HasPrefix(id, "clm_") {
				continue
			}
			field := id
			if rec, ok := st.Claims[id]; ok && rec.Meta.Key != "" {
				field = rec.Meta.Key
			}
			if !seen[field] {
				seen[field] = true
				e.Fields = append(e.Fields, field)
			}
		}
		out = append(out, e)
	}
	// Expiry is no event anyone performs, so it leaves no receipt: the
	// grants and tokens that have run out appear as EXPIRE entries at their
	// expiry, among the receipts of the same period.
	now := s.eng.Clock.Now()
	oldest := time.Time{}
	if len(rs) == limitOrDefault(limit) && len(rs) > 0 {
		oldest = rs[len(rs)-1].At
	}
	expired := func(at time.Time, operation, consumer, purpose string) {
		if at.After(now) || at.Before(oldest) {
			return
		}
		out = append(out, AuditEntry{Timestamp: at, Action: "EXPIRE", Operation: operation, Consumer: consumer,
			Purpose: purpose, Fields: []string{}})
	}
	for _, g := range st.Grants {
		if g.RevokedAt == nil && g.SpentAt == nil {
			expired(g.ExpiresAt, "grant.expire", g.Recipient.ID, g.Purpose)
		}
	}
	for _, t := range st.TokenByID {
		if t.RevokedAt == nil {
			expired(t.ExpiresAt, "token.expire", t.Consumer, "")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp.After(out[j].Timestamp) })
	if n := limitOrDefault(limit); len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// auditScope is the scope and duration (in seconds) of what records name:
// a context request (what it asked for, and for how long), else a token
// (its scope and lifetime), else a grant (its key selectors and lifetime).
// Callers hold st.mu.
func (st *state) auditScope(records []string) ([]string, int64) {
	for _, id := range records {
		if r, ok := st.Requests[id]; ok {
			return r.Scope, r.Duration
		}
	}
	for _, id := range records {
		if t, ok := st.TokenByID[id]; ok {
			return t.Scope, int64(t.ExpiresAt.Sub(t.CreatedAt) / time.Second)
		}
	}
	for _, id := range records {
		if g, ok := st.Grants[id]; ok {
			return g.Selectors.Keys, int64(g.ExpiresAt.Sub(g.CreatedAt) / time.Second)
		}
	}
	return nil, 0
}
