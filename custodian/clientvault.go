package custodian

import (
	"context"
	"log/slog"
	"time"

	"github.com/phc-project/phc/custodian/internal/localvault"
)

// The Client-Vault v=1 server side is package localvault's; the core gives
// it what it needs (vaultCore, vaultRules) and keeps the rule of which
// references a reader may still resolve (refAllowed, references.go).

// LocalVaults reports whether local vaults are on: the vault is unlocked
// and the owner's local_vaults setting is true (localvault.On).
func (s *Service) LocalVaults() bool { return localvault.On(vaultCore{s}) }

// SeeVaultKey records that reader p showed kid (from its Client-Vault
// header) on an MCP request, while local vaults are on
// (localvault.SeeKey).
func (s *Service) SeeVaultKey(ctx context.Context, p Principal, kid string) error {
	return localvault.SeeKey(ctx, vaultCore{s}, p, kid)
}

// VaultKeys lists the vault key bindings, oldest first (owner only).
func (s *Service) VaultKeys(ctx context.Context, p Principal) ([]VaultKey, error) {
	return localvault.Keys(ctx, vaultCore{s}, p)
}

// SetVaultKey activates (status "active") or revokes ("revoked") the
// binding named by its kid or its vk_ id (owner only; localvault.SetKey).
func (s *Service) SetVaultKey(ctx context.Context, p Principal, ref, status string) (VaultKey, uint64, error) {
	return localvault.SetKey(ctx, vaultCore{s}, p, ref, status)
}

// Resolve answers a local vault hook's resolve request (Client-Vault v=1;
// localvault.Resolve says how).
func (s *Service) Resolve(ctx context.Context, in ResolveInput) (ResolveResult, error) {
	return localvault.Resolve(ctx, vaultCore{s}, in)
}

// vaultCore is the Service as package localvault needs it.
type vaultCore struct{ s *Service }

func (c vaultCore) Enter(op string, p Principal) (localvault.View, func(), error) {
	st, release, err := c.s.enter(op, p)
	if err != nil {
		return localvault.View{}, nil, err
	}
	return st.localVault(), release, nil
}

func (c vaultCore) OwnerRead(op string, p Principal, fn func(v localvault.View) error) error {
	_, err := ownerRead(c.s, op, p, func(st *state) (struct{}, error) { return struct{}{}, fn(st.localVault()) })
	return err
}

func (c vaultCore) Commit(st *view, fn func(b *batch) error) error {
	return c.s.eng.Queue(&job{St: st, Apply: fn}) // commit's, for the view alone
}

func (c vaultCore) TakeRate(l limit) time.Duration { return c.s.rates.Take(c.s.eng.Clock.Now(), l) }

func (c vaultCore) Log() *slog.Logger { return c.s.eng.Log }

// vaultRules are the rules over st that package localvault needs.
type vaultRules struct{ *state }

func (r vaultRules) Live(p Principal, now time.Time) bool { return r.live(p, now) }
func (r vaultRules) ConsumerSince(name string) time.Time  { return r.consumerSince(name) }
func (r vaultRules) RefAllowed(reader string, rec *claimRecord, m *localvault.Ref, now time.Time) bool {
	return r.refAllowed(reader, rec, m, now)
}

// localVault is st as package localvault sees it.
func (st *state) localVault() localvault.View {
	return localvault.View{State: st.view, CV: st.cv, Rules: vaultRules{st}}
}
