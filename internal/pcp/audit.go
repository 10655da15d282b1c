package pcp

import (
	"strconv"
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

// AuditAction is PCP's audit action for a receipt of operation with
// decision (allow | deny): a denial is DENY; a recipient's read, whatever
// the face it came through, READ; a change of the owner's data WRITE;
// what gives or takes access GRANT, REQUEST or REVOKE; the rest ADMIN.
func AuditAction(operation, decision string) string {
	if decision == "deny" {
		return "DENY"
	}
	switch operation {
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

// AuditDuration writes seconds as PCP's audit lines do: "30min", "1h",
// "8760h"; anything else as Go writes a duration ("1h30m0s").
func AuditDuration(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Hour && d%time.Minute == 0:
		return strconv.FormatInt(seconds/60, 10) + "min"
	case d%time.Hour == 0:
		return strconv.FormatInt(seconds/3600, 10) + "h"
	}
	return d.String()
}
