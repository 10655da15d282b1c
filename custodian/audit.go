package custodian

import (
	"context"
	"strings"
	"time"
)

// AuditEntry is one receipt in the shape PCP's audit log uses: an action,
// the consumer concerned, the fields (keys) concerned, and when.
type AuditEntry struct {
	Seq        uint64    `json:"seq"`
	Timestamp  time.Time `json:"timestamp"`
	Action     string    `json:"action"` // GRANT | READ | WRITE | DENY | REVOKE | ADMIN
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
	case "grant.revoke", "token.revoke", "consumer.delete":
		return "REVOKE"
	case "claim.read", "context.read":
		return "READ"
	case "proposal.create", "proposal.confirm", "proposal.reject", "claim.correct", "claim.delete", "claim.personas":
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
	return out, nil
}
