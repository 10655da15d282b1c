package custodian

import (
	"context"
	"encoding/json"
	"fmt"
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
}

const metaSettings = "settings"

func defaultSettings() Settings { return Settings{AutoGrant: SensitivityPublic} }

// autoGranted reports whether tier is granted to every approved consumer.
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

// PutSettings replaces the owner's settings (owner only).
func (s *Service) PutSettings(ctx context.Context, p Principal, raw []byte) (Settings, uint64, error) {
	const op = "settings.put"
	if err := requireOwner(op, p); err != nil {
		return Settings{}, 0, err
	}
	var in Settings
	if err := decodeStrict(op, raw, &in); err != nil {
		return Settings{}, 0, err
	}
	switch in.AutoGrant {
	case "none", SensitivityPublic, SensitivityStandard:
	default:
		return Settings{}, 0, fail(op, KindInvalid, "auto_grant must be none, public or standard")
	}
	if len(in.UserOnlyWrite) > 256 {
		return Settings{}, 0, fail(op, KindInvalid, "user_only_write holds more than 256 patterns")
	}
	for _, pat := range in.UserOnlyWrite {
		if pat == "*" || !validPattern(pat) {
			return Settings{}, 0, fail(op, KindInvalid, "user_only_write holds a malformed key pattern")
		}
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		rev = b.nextRevision()
		st.settings = in
		b.put(bucketMeta, metaSettings, in)
		b.receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Revision: rev})
		return nil
	})
	return in, rev, err
}
