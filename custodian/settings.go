package custodian

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// maxTTL is the longest a service token may live under s.
func (s Settings) maxTTL() time.Duration {
	if s.LongLivedTokens {
		return longLivedTokenTTL
	}
	return maxTokenTTL
}

// defaultRetentionDays is how long receipts are kept in full by default.
const defaultRetentionDays = 365

func (s Settings) retention() time.Duration {
	days := s.ReceiptRetentionDays
	if days <= 0 {
		days = defaultRetentionDays
	}
	return time.Duration(days) * 24 * time.Hour
}

func (s Settings) readsPerMinute() int {
	if s.ReadsPerMinute > 0 {
		return s.ReadsPerMinute
	}
	return defaultReadsPerMinute
}

func (s Settings) writesPerMinute() int {
	if s.WritesPerMinute > 0 {
		return s.WritesPerMinute
	}
	return defaultWritesPerMinute
}

func (s Settings) liveTokens() int {
	if s.LiveTokens > 0 {
		return s.LiveTokens
	}
	return defaultLiveTokens
}

func (s Settings) pendingProposals() int {
	if s.PendingProposals > 0 {
		return s.PendingProposals
	}
	return defaultPendingProposals
}

const metaSettings = "settings"

func defaultSettings() Settings { return Settings{AutoGrant: SensitivityPublic} }

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

func (s Settings) autoGranted(tier string) bool {
	switch s.AutoGrant {
	case SensitivityPublic:
		return tier == SensitivityPublic
	case SensitivityStandard:
		return tier == SensitivityPublic || tier == SensitivityStandard
	}
	return false
}

func loadSettings(tx Tx) (Settings, error) {
	set := defaultSettings()
	raw, ok, err := tx.Get(bucketMeta, metaSettings)
	if err != nil || !ok {
		return set, err
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return set, fmt.Errorf("settings: %w", err)
	}
	return set, nil
}

// GetSettings returns the owner's settings (owner only).
func (s *Service) GetSettings(ctx context.Context, p Principal) (Settings, error) {
	return ownerRead(s, "settings.get", p, func(st *state) (Settings, error) { return st.settings, nil })
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

// PutSettings changes the owner's settings (owner only): the members given
// replace their values, the others stay.
func (s *Service) PutSettings(ctx context.Context, p Principal, in SettingsInput) (Settings, uint64, error) {
	const op = "settings.put"
	if err := requireOwner(op, p); err != nil {
		return Settings{}, 0, err
	}
	if err := s.accept(op, &in); err != nil {
		return Settings{}, 0, err
	}
	if in.AutoGrant != nil {
		switch *in.AutoGrant {
		case "none", SensitivityPublic, SensitivityStandard:
		default:
			return Settings{}, 0, fail(op, KindInvalid, "auto_grant must be none, public or standard")
		}
	}
	for _, r := range []*int{in.ReadsPerMinute, in.WritesPerMinute} {
		if r != nil && (*r < 0 || *r > 10_000_000) {
			return Settings{}, 0, fail(op, KindInvalid, "rates are per minute, from 0 (the default) to 10,000,000")
		}
	}
	for _, r := range []*int{in.LiveTokens, in.PendingProposals} {
		if r != nil && (*r < 0 || *r > 10_000_000) {
			return Settings{}, 0, fail(op, KindInvalid, "live_tokens_per_app and pending_proposals_per_app are from 0 (the default) to 10,000,000")
		}
	}
	if r := in.RetentionDays; r != nil && (*r < 0 || *r > 36500) {
		return Settings{}, 0, fail(op, KindInvalid, "receipt_retention_days is from 1 to 36,500 (0: the default of 365)")
	}
	if in.Disclosure != nil {
		for tier, mode := range *in.Disclosure {
			if _, ok := tierRank[tier]; !ok || (mode != DisclosureValue && mode != DisclosureReference) {
				return Settings{}, 0, fail(op, KindInvalid, "disclosure maps a tier (public, standard, sensitive, critical) to value or reference")
			}
		}
	}
	if in.UserOnlyWrite != nil {
		if len(*in.UserOnlyWrite) > 256 {
			return Settings{}, 0, fail(op, KindInvalid, "user_only_write holds more than 256 patterns")
		}
		for _, pat := range *in.UserOnlyWrite {
			if pat == "*" || !validPattern(pat) {
				return Settings{}, 0, fail(op, KindInvalid, "user_only_write holds a malformed key pattern")
			}
		}
	}
	var (
		out Settings
		rev uint64
	)
	err := s.write(op, p, func(st *state, b *batch) error {
		set := st.settings
		if in.AutoGrant != nil {
			set.AutoGrant = *in.AutoGrant
		}
		if in.UserOnlyWrite != nil {
			set.UserOnlyWrite = *in.UserOnlyWrite
		}
		if in.ReadsPerMinute != nil {
			set.ReadsPerMinute = *in.ReadsPerMinute
		}
		if in.WritesPerMinute != nil {
			set.WritesPerMinute = *in.WritesPerMinute
		}
		if in.LiveTokens != nil {
			set.LiveTokens = *in.LiveTokens
		}
		if in.PendingProposals != nil {
			set.PendingProposals = *in.PendingProposals
		}
		if in.ElicitedApprovals != nil {
			set.ElicitedApprovals = *in.ElicitedApprovals
		}
		if in.RetentionDays != nil {
			set.ReceiptRetentionDays = *in.RetentionDays
		}
		if in.LongLivedTokens != nil {
			set.LongLivedTokens = *in.LongLivedTokens
		}
		if in.Disclosure != nil {
			set.Disclosure = maps.Clone(*in.Disclosure)
		}
		if in.LocalVaults != nil {
			set.LocalVaults = *in.LocalVaults
		}
		out = set
		if set.AutoGrant == st.settings.AutoGrant && slices.Equal(set.UserOnlyWrite, st.settings.UserOnlyWrite) &&
			set.ReadsPerMinute == st.settings.ReadsPerMinute && set.WritesPerMinute == st.settings.WritesPerMinute &&
			set.LiveTokens == st.settings.LiveTokens && set.PendingProposals == st.settings.PendingProposals &&
			set.ElicitedApprovals == st.settings.ElicitedApprovals && set.ReceiptRetentionDays == st.settings.ReceiptRetentionDays &&
			set.LongLivedTokens == st.settings.LongLivedTokens &&
			maps.Equal(set.Disclosure, st.settings.Disclosure) && set.LocalVaults == st.settings.LocalVaults {
			rev = st.revision // nothing changes: no write
			return nil
		}
		rev = b.nextRevision()
		st.settings = set
		b.put(bucketMeta, metaSettings, set)
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev})
		return nil
	})
	return out, rev, err
}
