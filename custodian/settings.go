package custodian

import (
	"context"
	"maps"
	"slices"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
)

// GetSettings returns the owner's settings (owner only).
func (s *Service) GetSettings(ctx context.Context, p Principal) (Settings, error) {
	return ownerRead(s, "settings.get", p, func(st *state) (Settings, error) { return st.Settings, nil })
}

// PutSettings changes the owner's settings (owner only): the members given
// replace their values, the others stay.
func (s *Service) PutSettings(ctx context.Context, p Principal, in SettingsInput) (Settings, uint64, error) {
	const op = "settings.put"
	if err := p.RequireOwner(op); err != nil {
		return Settings{}, 0, err
	}
	if err := s.accept(op, &in); err != nil {
		return Settings{}, 0, err
	}
	if in.AutoGrant != nil {
		switch *in.AutoGrant {
		case "none", SensitivityPublic, SensitivityStandard:
		default:
			return Settings{}, 0, model.Fail(op, KindInvalid, "auto_grant must be none, public or standard")
		}
	}
	for _, r := range []*int{in.ReadsPerMinute, in.WritesPerMinute} {
		if r != nil && (*r < 0 || *r > 10_000_000) {
			return Settings{}, 0, model.Fail(op, KindInvalid, "rates are per minute, from 0 (the default) to 10,000,000")
		}
	}
	for _, r := range []*int{in.LiveTokens, in.PendingProposals} {
		if r != nil && (*r < 0 || *r > 10_000_000) {
			return Settings{}, 0, model.Fail(op, KindInvalid, "live_tokens_per_app and pending_proposals_per_app are from 0 (the default) to 10,000,000")
		}
	}
	if r := in.RetentionDays; r != nil && (*r < 0 || *r > 36500) {
		return Settings{}, 0, model.Fail(op, KindInvalid, "receipt_retention_days is from 1 to 36,500 (0: the default of 365)")
	}
	if in.Disclosure != nil {
		for tier, mode := range *in.Disclosure {
			if _, ok := model.TierRank[tier]; !ok || (mode != DisclosureValue && mode != DisclosureReference) {
				return Settings{}, 0, model.Fail(op, KindInvalid, "disclosure maps a tier (public, standard, sensitive, critical) to value or reference")
			}
		}
	}
	if in.UserOnlyWrite != nil {
		if len(*in.UserOnlyWrite) > 256 {
			return Settings{}, 0, model.Fail(op, KindInvalid, "user_only_write holds more than 256 patterns")
		}
		for _, pat := range *in.UserOnlyWrite {
			if pat == "*" || !validPattern(pat) {
				return Settings{}, 0, model.Fail(op, KindInvalid, "user_only_write holds a malformed key pattern")
			}
		}
	}
	var (
		out Settings
		rev uint64
	)
	err := s.write(op, p, func(st *state, b *batch) error {
		set := st.Settings
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
		if set.AutoGrant == st.Settings.AutoGrant && slices.Equal(set.UserOnlyWrite, st.Settings.UserOnlyWrite) &&
			set.ReadsPerMinute == st.Settings.ReadsPerMinute && set.WritesPerMinute == st.Settings.WritesPerMinute &&
			set.LiveTokens == st.Settings.LiveTokens && set.PendingProposals == st.Settings.PendingProposals &&
			set.ElicitedApprovals == st.Settings.ElicitedApprovals && set.ReceiptRetentionDays == st.Settings.ReceiptRetentionDays &&
			set.LongLivedTokens == st.Settings.LongLivedTokens &&
			maps.Equal(set.Disclosure, st.Settings.Disclosure) && set.LocalVaults == st.Settings.LocalVaults {
			rev = st.Revision // nothing changes: no write
			return nil
		}
		rev = b.NextRevision()
		st.Settings = set
		b.Put(engine.BucketMeta, engine.MetaSettings, set)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev})
		return nil
	})
	return out, rev, err
}
