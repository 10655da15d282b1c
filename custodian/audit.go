package custodian

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AuditEntry is one receipt in the shape PCP's audit log uses (PCP §4
// "Audit trail"): an action, the consumer concerned, the fields (keys)
// concerned, and when; for a token, a context request, its approval or
// denial and a grant, also the scope asked for or given and for how long
// (PCP's "identity.full_name, identity.ssn   30min").
type AuditEntry struct {
	Seq       uint64    `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
	Action    string    `json:"action"` // GRANT | REQUEST | READ | WRITE | DENY | EXPIRE | REVOKE | ADMIN
	Operation string    `json:"operation"`
	Consumer  string    `json:"consumer,omitempty"`
	Purpose   string    `json:"purpose,omitempty"`
	Fields    []string  `json:"fields"`
	// Scope and Duration are those of the token, request or grant the
	// receipt names (key patterns, never values); DurationSeconds is
	// Duration for machines.
	Scope           []string `json:"scope,omitempty"`
	Duration        string   `json:"duration,omitempty"`
	DurationSeconds int64    `json:"duration_seconds,omitempty"`
	Constraint      string   `json:"constraint,omitempty"`
}

// auditAction maps a receipt to PCP's audit action.
func auditAction(r *Receipt) string {
	if r.Decision == "deny" {
		return "DENY"
	}
	switch r.Operation {
	case "grant.create", "token.create", "token.exchange", "consumer.approve", "request.approve":
		return "GRANT"
	case "request.deny":
		return "DENY"
	case "request.create":
		return "REQUEST"
	case "grant.revoke", "grant.narrow", "token.revoke", "consumer.delete":
		return "REVOKE"
	case "claim.read", "context.read", "field.get", "field.list", "field.category", "field.context",
		"graph.read", "summary.read", "vault.resolve":
		// A recipient's read, whatever the face it came through.
		return "READ"
	case "proposal.create", "proposal.confirm", "proposal.reject", "claim.correct", "claim.delete", "claim.personas",
		"claim.dispute", "claim.undispute", "claim.retract", "field.put", "field.delete", "field.sensitivity":
		return "WRITE"
	}
	return "ADMIN"
}

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
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make([]AuditEntry, 0, len(rs))
	for i := range rs {
		r := &rs[i]
		e := AuditEntry{Seq: r.Seq, Timestamp: r.At, Action: auditAction(r), Operation: r.Operation,
			Purpose: r.Purpose, Constraint: r.Constraint, Fields: []string{}}
		if strings.HasPrefix(r.Actor, "consumer:") {
			e.Consumer = strings.TrimPrefix(r.Actor, "consumer:")
		} else if r.Recipient != "" {
			e.Consumer = r.Recipient
		}
		e.Scope, e.DurationSeconds = st.auditScope(r.Records)
		if e.DurationSeconds > 0 {
			e.Duration = auditDuration(e.DurationSeconds)
		}
		seen := map[string]bool{}
		for _, ref := range r.Records {
			id, _, ok := strings.Cut(ref, "@")
			if !ok || !strings.HasPrefix(id, "clm_") {
				continue
			}
			field := id
			if rec, ok := st.claims[id]; ok && rec.meta.Key != "" {
				field = rec.meta.Key
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
	now := s.clock.Now()
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
	for _, g := range st.grants {
		if g.RevokedAt == nil && g.SpentAt == nil {
			expired(g.ExpiresAt, "grant.expire", g.Recipient.ID, g.Purpose)
		}
	}
	for _, t := range st.tokenByID {
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
		if r, ok := st.requests[id]; ok {
			return r.Scope, r.Duration
		}
	}
	for _, id := range records {
		if t, ok := st.tokenByID[id]; ok {
			return t.Scope, int64(t.ExpiresAt.Sub(t.CreatedAt) / time.Second)
		}
	}
	for _, id := range records {
		if g, ok := st.grants[id]; ok {
			return g.Selectors.Keys, int64(g.ExpiresAt.Sub(g.CreatedAt) / time.Second)
		}
	}
	return nil, 0
}

// auditDuration writes seconds as PCP's audit lines do: "30min", "1h",
// "8760h"; anything else as Go writes a duration ("1h30m0s").
func auditDuration(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Hour && d%time.Minute == 0:
		return strconv.FormatInt(seconds/60, 10) + "min"
	case d%time.Hour == 0:
		return strconv.FormatInt(seconds/3600, 10) + "h"
	}
	return d.String()
}
