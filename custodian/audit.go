package custodian

import (
	"context"
	"sort"
	"strings"
	"time"
)

// AuditEntry is one receipt in the shape PCP's audit log uses: an action,
// the consumer concerned, the fields (keys) concerned, and when.
type AuditEntry struct {
	Seq        uint64    `json:"seq"`
	Timestamp  time.Time `json:"timestamp"`
	Action     string    `json:"action"` // GRANT | READ | WRITE | DENY | EXPIRE | REVOKE | ADMIN
	Operation  string    `json:"operation"`
	Consumer   string    `json:"consumer,omitempty"`
	Purpose    string    `json:"purpose,omitempty"`
	Fields     []string  `json:"fields"`
	Constraint string    `json:"constraint,omitempty"`
}

// auditAction maps a receipt to PCP's audit action.
func auditAction(r *Receipt) string {
	if r.Decision == "deny" {
		return "DENY"
	}
	switch r.Operation {
	case "grant.create", "token.create", "consumer.approve":
		return "GRANT"
	case "grant.revoke", "grant.narrow", "token.revoke", "consumer.delete":
		return "REVOKE"
	case "claim.read", "context.read":
		return "READ"
	case "proposal.create", "proposal.confirm", "proposal.reject", "claim.correct", "claim.delete", "claim.personas",
		"claim.dispute", "claim.undispute", "claim.retract":
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
		seen := map[string]bool{}
		for _, ref := range r.Records {
			id, _, ok := strings.Cut(ref, "@")
			if !ok || !strings.HasPrefix(id, "clm_") {
				continue
			}
			field := id
			if rec, ok := st.claims[id]; ok && rec.head().Key != "" {
				field = rec.head().Key
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
