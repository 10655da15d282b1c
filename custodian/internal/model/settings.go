package model

import (
	"time"
)

// Settings are the owner's policy switches.
type Settings struct {
	// AutoGrant names the highest tier granted to every approved consumer
	// without a request: "none", "public" (the default) or "standard" (PCP
	// compatibility). Sensitive and critical data always need a per-request
	// approval.
	AutoGrant string `json:"auto_grant"`
	// UserOnlyWrite lists key patterns (a key, prefix.*) only the owner may
	// write, besides the built-in ones (see userOnlyWrite).
	UserOnlyWrite []string `json:"user_only_write,omitempty"`
	// ReadsPerMinute and WritesPerMinute are the most a service token may
	// do, each token counted alone (0: the PCP defaults of 60 and 10); a
	// token may ask for less. An app's total is at most LiveTokens times
	// these.
	ReadsPerMinute  int `json:"reads_per_minute,omitempty"`
	WritesPerMinute int `json:"writes_per_minute,omitempty"`
	// LiveTokens is the most service tokens an app (a consumer, or an OIDC
	// subject) may hold unexpired and unrevoked at once (0: the default of
	// 10); PendingProposals the most of its proposals that may wait in the
	// review queue (0: the default of 100).
	LiveTokens       int `json:"live_tokens_per_app,omitempty"`
	PendingProposals int `json:"pending_proposals_per_app,omitempty"`
	// ElicitedApprovals lets the person approve an app's request for
	// sensitive data when the app's own MCP host asks them (an
	// elicitation). Off by default: the host relays the answer, so turning
	// it on trusts every approved app's host to ask truthfully. Critical
	// data is never approved that way.
	ElicitedApprovals bool `json:"elicited_approvals,omitempty"`
	// ReceiptRetentionDays is how long receipts are kept in full, with the
	// records each disclosed (0: the default of 365 days). Older ones are
	// rolled into checkpoints that keep the chain verifiable.
	ReceiptRetentionDays int `json:"receipt_retention_days,omitempty"`
	// LongLivedTokens lets a service token live up to one year (PCP's
	// "ttl": "8760h" for a personal AI daemon). Off by default: a longer ttl
	// is then clamped to 30 days, and the answer says so.
	LongLivedTokens bool `json:"long_lived_tokens,omitempty"`
	// Disclosure is how each tier's values reach a reader by default
	// (docs/formats/reference.md): "value", or "reference" for a ⟦TYPE_N:display⟧
	// reference that only the reader's local vault hook resolves. A tier
	// left out takes the default: reference for critical, value for the
	// others. A grant's own disclosure overrides it.
	Disclosure map[string]string `json:"disclosure,omitempty"`
	// LocalVaults turns on the Client-Vault v=1 resolve endpoint and its
	// client_vault_endpoint in the RFC 9728 metadata. Off by default.
	LocalVaults bool `json:"local_vaults,omitempty"`
}

// MaxTTL is the longest a service token may live under s.
func (s Settings) MaxTTL() time.Duration {
	if s.LongLivedTokens {
		return longLivedTokenTTL
	}
	return MaxTokenTTL
}

// defaultRetentionDays is how long receipts are kept in full by default.
const defaultRetentionDays = 365

func (s Settings) Retention() time.Duration {
	days := s.ReceiptRetentionDays
	if days <= 0 {
		days = defaultRetentionDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// ReadRate is a service token's reads per minute under s.
func (s Settings) ReadRate() int { return positiveOr(s.ReadsPerMinute, defaultReadsPerMinute) }

// WriteRate is a service token's writes per minute under s.
func (s Settings) WriteRate() int { return positiveOr(s.WritesPerMinute, defaultWritesPerMinute) }

// LiveTokenCap is how many live service tokens one app (a consumer, or
// an OIDC subject) may hold.
func (s Settings) LiveTokenCap() int { return positiveOr(s.LiveTokens, defaultLiveTokens) }

// PendingCap is how many proposals one app may have waiting for the owner.
func (s Settings) PendingCap() int { return positiveOr(s.PendingProposals, defaultPendingProposals) }

// positiveOr is v when the owner set it (above zero), else the default d.
func positiveOr(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// autoGranted reports whether tier is granted to every approved consumer.
// Warnings says in plain words what the settings let every approved app
// do that the owner may not expect; the answer to a settings change
// carries them.
func (s Settings) Warnings() []string {
	var out []string
	if s.AutoGrant == SensitivityStandard {
		out = append(out, "auto_grant standard: every app you approve may read every public and standard field in its token's scope without asking you, "+
			"and may write new public and standard fields without review (a change to a value you confirmed or another app wrote still waits for you). "+
			"Sensitive and critical data still need your approval of each request.")
	}
	return out
}

func (s Settings) AutoGranted(tier string) bool {
	switch s.AutoGrant {
	case SensitivityPublic:
		return tier == SensitivityPublic
	case SensitivityStandard:
		return tier == SensitivityPublic || tier == SensitivityStandard
	}
	return false
}

// Disclosure modes: how a served value reaches a reader. The format of a
// reference is package valueref's.
const (
	DisclosureValue     = "value"
	DisclosureReference = "reference"
)

// DisclosureFor is the owner's default mode for tier: the setting, else
// reference for critical and value for the other tiers.
func (s Settings) DisclosureFor(tier string) string {
	if m, ok := s.Disclosure[tier]; ok {
		return m
	}
	if tier == SensitivityCritical {
		return DisclosureReference
	}
	return DisclosureValue
}

// AllowsOp reports whether g names operation op.
func (g *Grant) AllowsOp(op string) bool {
	for _, o := range g.Operations {
		if o == op {
			return true
		}
	}
	return false
}

// SettingsInput is the body of [Service.PutSettings]: members left out
// keep their values.
type SettingsInput struct {
	AutoGrant         *string            `json:"auto_grant"`
	UserOnlyWrite     *[]string          `json:"user_only_write"`
	ReadsPerMinute    *int               `json:"reads_per_minute"`
	WritesPerMinute   *int               `json:"writes_per_minute"`
	LiveTokens        *int               `json:"live_tokens_per_app"`
	PendingProposals  *int               `json:"pending_proposals_per_app"`
	ElicitedApprovals *bool              `json:"elicited_approvals"`
	RetentionDays     *int               `json:"receipt_retention_days"`
	LongLivedTokens   *bool              `json:"long_lived_tokens"`
	Disclosure        *map[string]string `json:"disclosure"`
	LocalVaults       *bool              `json:"local_vaults"`
	decoded
}

func (*SettingsInput) spec() inputSpec { return inputSpec{} }
