package custodian

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/valueref"
)

// The Client-Vault v=1 server side (the wire is package valueref's): a reader's local vault
// hook holds a 256-bit secret K and shows kid = base64(SHA-256(K)) on its
// MCP requests. A kid first seen binds, pending, to the reader that showed
// it; once the owner activates the binding, the hook may resolve that
// reader's references with K. Only the kid is stored, never K.

// clientVault is the view's Client-Vault state: bindings by kid, each
// reader's references, and the day's count of resolved values. Records
// are replaced, never changed, once published.
type clientVault struct {
	keys  map[string]*VaultKey   // kid → binding
	refs  map[string]*readerRefs // reader → references
	quota vaultQuota
}

type vaultQuota struct {
	Day   string `json:"day"` // YYYY-MM-DD, UTC
	Count int    `json:"count"`
}

func newClientVault() *clientVault {
	return &clientVault{keys: map[string]*VaultKey{}, refs: map[string]*readerRefs{}}
}

// loadClientVault reads the bindings, references and quota into st.cv.
func (st *state) loadClientVault(tx Tx) error {
	if err := engine.LoadEach(tx, model.BucketVaultKeys, func(k *VaultKey) { st.cv.keys[k.Kid] = k }); err != nil {
		return err
	}
	if raw, ok, err := tx.Get(engine.BucketMeta, model.MetaVaultQuota); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal(raw, &st.cv.quota); err != nil {
			return fmt.Errorf("meta vault quota: %w", err)
		}
	}
	return st.loadVaultRefs(tx)
}

// LocalVaults reports whether local vaults are on: the vault is unlocked
// and the owner's local_vaults setting is true. While the vault is locked
// it cannot say, and answers false.
func (s *Service) LocalVaults() bool {
	st, release, err := s.enter("local_vaults", Principal{})
	if err != nil {
		return false
	}
	defer release()
	st.Mu.RLock()
	defer st.Mu.RUnlock()
	return st.Settings.LocalVaults
}

// SeeVaultKey records that reader p showed kid (from its Client-Vault
// header) on an MCP request, while local vaults are on: a kid never seen
// binds to p, pending until the owner activates it; a kid bound to
// another reader is blocked for both; a reader holding five bindings gets
// no sixth. It changes nothing for a kid already bound to p. Only the kid
// is stored.
func (s *Service) SeeVaultKey(ctx context.Context, p Principal, kid string) error {
	const op = "vault_key.see"
	if p.Kind() != PrincipalConsumer {
		return nil
	}
	if !valueref.ValidKid(kid) {
		return model.Fail(op, KindInvalid, "a kid is standard base64 of 32 bytes")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	settled := func(st *state) bool {
		if !st.Settings.LocalVaults {
			return true
		}
		k := st.cv.keys[kid]
		return k != nil && (k.Status == VaultKeyBlocked || k.Status == VaultKeyRevoked || (k.Reader == p.Consumer && !st.staleKey(k)))
	}
	st.Mu.RLock()
	done := settled(st)
	st.Mu.RUnlock()
	if done {
		return nil
	}
	var refused *Error
	err = s.commit(st, func(st *state, b *batch) error {
		if settled(st) || !st.live(p, b.Now) {
			return nil
		}
		rc := Receipt{Actor: p.Actor(), Operation: "vault_key.bind", Recipient: p.Consumer, Decision: "allow", Records: []string{"kid:" + kid}}
		if k := st.cv.keys[kid]; k != nil && !st.staleKey(k) {
			// One kid, one reader: shown by a second, it is blocked for both.
			nk := *k
			nk.Status, nk.BlockedBy = VaultKeyBlocked, p.Consumer
			st.cv.keys[kid] = &nk
			b.Put(model.BucketVaultKeys, nk.ID, &nk)
			rc.Decision, rc.Constraint = "deny", "blocked"
			rc.Revision = b.NextRevision()
			b.Receipt(rc)
			return nil
		}
		n := 0
		for _, k := range st.cv.keys {
			if k.Reader == p.Consumer && k.Status != VaultKeyRevoked && !st.staleKey(k) {
				n++
			}
		}
		if n >= MaxVaultKeysPerReader {
			refused = model.Fail(op, KindConflict, "this reader holds the most vault keys it may (5): revoke one first")
			return nil
		}
		id, err := identity.NewID("vk_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		if old := st.cv.keys[kid]; old != nil {
			id = old.ID // a removed app's binding: its namesake binds anew, pending
		}
		k := &VaultKey{ID: id, Kid: kid, Reader: p.Consumer, Status: VaultKeyPending, FirstSeen: b.Now}
		st.cv.keys[kid] = k
		b.Put(model.BucketVaultKeys, id, k)
		rc.Revision = b.NextRevision()
		b.Receipt(rc)
		return nil
	})
	if err == nil && refused != nil {
		return refused
	}
	return err
}

// VaultKeys lists the vault key bindings, oldest first (owner only).
func (s *Service) VaultKeys(ctx context.Context, p Principal) ([]VaultKey, error) {
	return ownerRead(s, "vault_key.list", p, func(st *state) ([]VaultKey, error) {
		out := make([]VaultKey, 0, len(st.cv.keys))
		for _, k := range st.cv.keys {
			out = append(out, *k)
		}
		sort.Slice(out, func(i, j int) bool {
			if !out[i].FirstSeen.Equal(out[j].FirstSeen) {
				return out[i].FirstSeen.Before(out[j].FirstSeen)
			}
			return out[i].ID < out[j].ID
		})
		return out, nil
	})
}

// SetVaultKey activates (status "active") or revokes ("revoked") the
// binding named by its kid or its vk_ id (owner only). A blocked binding
// cannot be activated; a revoked one stays revoked.
func (s *Service) SetVaultKey(ctx context.Context, p Principal, ref, status string) (VaultKey, uint64, error) {
	const op = "vault_key.set"
	if err := p.RequireOwner(op); err != nil {
		return VaultKey{}, 0, err
	}
	if status != VaultKeyActive && status != VaultKeyRevoked {
		return VaultKey{}, 0, model.Fail(op, KindInvalid, "status is active or revoked")
	}
	var (
		out VaultKey
		rev uint64
	)
	err := s.write(op, p, func(st *state, b *batch) error {
		var k *VaultKey
		for _, x := range st.cv.keys {
			if x.Kid == ref || x.ID == ref {
				k = x
				break
			}
		}
		switch {
		case k == nil:
			return model.NotFound(op)
		case k.Status == status:
			out, rev = *k, st.Revision
			return nil
		case k.Status == VaultKeyRevoked:
			return model.Fail(op, KindConflict, "the binding is revoked; a revoked kid never binds again")
		case k.Status == VaultKeyBlocked && status == VaultKeyActive:
			return model.Fail(op, KindConflict, "the binding is blocked: two readers showed this kid")
		}
		nk := *k
		at := b.Now
		nk.Status = status
		if status == VaultKeyActive {
			nk.ActivatedAt = &at
		} else {
			nk.RevokedAt = &at
		}
		st.cv.keys[nk.Kid] = &nk
		b.Put(model.BucketVaultKeys, nk.ID, &nk)
		rev = b.NextRevision()
		b.Receipt(Receipt{Actor: "owner", Operation: "vault_key." + map[string]string{VaultKeyActive: "activate", VaultKeyRevoked: "revoke"}[status],
			Recipient: nk.Reader, Decision: "allow", Records: []string{"kid:" + nk.Kid}, Revision: rev})
		out = nk
		return nil
	})
	return out, rev, err
}

// bodyError is the domain error of a refused resolve body.
func bodyError(op string, e *valueref.Error) *Error {
	if e.Code == valueref.CodeTooManyRefs {
		return model.Fail(op, KindVaultTooManyRefs, "")
	}
	return model.Fail(op, KindVaultBadRequest, e.Msg)
}

// Resolve answers a local vault hook's resolve request (Client-Vault v=1).
// The answer is every
// requested value, or one error for the whole request, never a part:
// KindVaultDisabled while local vaults are off; KindTooLarge over 64 KB;
// KindVaultUnknownKey unless K's kid has an active binding (pending:
// KindVaultPending); KindVaultBadRequest, KindVaultTooManyRefs for the
// body; KindVaultClockSkew when the client's now is more than 5 minutes
// off; KindVaultUnknownRef for a key that is not the reader's, not on this
// custodian, or whose value the reader's grants no longer allow;
// KindVaultExpired for a key minted again (or whose value changed) after
// the vault first saw it; KindRateLimited past 100 values in a UTC day,
// or past the reads rate (Settings, 60 a minute by default) of resolves
// with one K, which then leave no receipt.
// Every answer to a known K leaves a receipt with the kid and the keys,
// never a value. A body built in Go is held to the rules of one read
// (valueref.Request.Check).
func (s *Service) Resolve(ctx context.Context, in ResolveInput) (ResolveResult, error) {
	const op = "vault.resolve"
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return ResolveResult{}, err
	}
	defer release()
	st.Mu.RLock()
	on := st.Settings.LocalVaults
	st.Mu.RUnlock()
	if !on {
		return ResolveResult{}, model.Fail(op, KindVaultDisabled, "")
	}
	if in.Body.Size > MaxResolveBody {
		return ResolveResult{}, model.Fail(op, KindTooLarge, "the body is above 64 KB")
	}
	k, ok := valueref.ParseBearer(in.Bearer)
	if !ok {
		return ResolveResult{}, model.Fail(op, KindVaultUnknownKey, "")
	}
	kid := valueref.Kid(k)
	clear(k)
	st.Mu.RLock()
	binding := st.cv.keys[kid]
	stale := binding != nil && st.staleKey(binding)
	st.Mu.RUnlock()
	switch {
	case binding == nil || binding.Status == VaultKeyBlocked || binding.Status == VaultKeyRevoked || stale:
		return ResolveResult{}, model.Fail(op, KindVaultUnknownKey, "")
	case binding.Status == VaultKeyPending:
		// Only the owner activates a binding: no time is set.
		return ResolveResult{}, &Error{Op: op, Kind: KindVaultPending, Public: "the owner has not activated this vault key yet (phc vault-keys activate)"}
	}
	reader := binding.Reader
	// A bound key's resolves share the reads rate of tokens: each answer
	// to a known K leaves a receipt, refusals too, so that without a bound
	// a hook (or whoever holds K) could grow the store at will. Past it
	// the answer is rate_limited with the wait, and only the log has it.
	st.Mu.RLock()
	rate := st.Settings.ReadRate()
	st.Mu.RUnlock()
	if wait := s.rates.Take(s.eng.Clock.Now(), limit{Key: "r:vault:" + kid, Rate: rate}); wait > 0 {
		s.eng.Log.Info("vault resolve rate limited", "kid", kid, "per_minute", rate)
		return ResolveResult{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait,
			Public: fmt.Sprintf("more than %d resolves a minute with this vault key; retry after the wait", rate)}
	}
	req, perr := in.Body.Request, in.Body.Err
	if perr == nil {
		if err := req.Check(); err != nil {
			perr = err.(*valueref.Error)
		}
	}
	var keys []string
	if perr == nil {
		keys = req.Keys()
	}
	var (
		out     ResolveResult
		refused *Error
	)
	err = s.commit(st, func(st *state, b *batch) error {
		rc := Receipt{Actor: "vault:" + reader, Operation: op, Recipient: reader, Decision: "deny",
			Records: append([]string{"kid:" + kid}, prefixed("ref:", keys)...)}
		deny := func(e *Error) error {
			refused = e
			rc.Constraint = e.Kind.Row().Constraint
			b.Receipt(rc)
			return nil
		}
		// The binding again, in commit order: a revocation acknowledged
		// before this answer is never bypassed.
		if bk := st.cv.keys[kid]; bk == nil || bk.Status != VaultKeyActive || st.staleKey(bk) || !st.Settings.LocalVaults {
			return deny(model.Fail(op, KindVaultUnknownKey, ""))
		}
		if perr != nil {
			return deny(bodyError(op, perr))
		}
		if d := req.Now.Sub(b.Now); d > model.MaxClockSkew || d < -model.MaxClockSkew {
			at := b.Now.UTC().Truncate(time.Second)
			return deny(&Error{Op: op, Kind: KindVaultClockSkew, ServerTime: &at})
		}
		values, records, e := st.resolveValues(op, reader, req, b.Now)
		if e != nil {
			return deny(e)
		}
		if e := st.takeVaultQuota(op, b, len(values)); e != nil {
			return deny(e)
		}
		rc.Decision, rc.Records = "allow", append(rc.Records, records...)
		b.Receipt(rc)
		out = ResolveResult{Values: values}
		return nil
	})
	if err != nil {
		return ResolveResult{}, err
	}
	if refused != nil {
		return ResolveResult{}, refused
	}
	return out, nil
}

// resolveValues returns the value of each key of req that reader may
// resolve at now, and the claim versions they are, or the refusal of the
// whole request: a key that is not the reader's, not on this custodian or
// whose value its grants no longer allow (KindVaultUnknownRef), or one
// minted again, or whose value changed, after the vault first saw it
// (KindVaultExpired). Callers hold st.mu.
func (st *state) resolveValues(op, reader string, req valueref.Request, now time.Time) (map[string]string, []string, *Error) {
	values := make(map[string]string, len(req.Refs))
	var records []string
	rr := st.cv.refs[reader]
	for _, ref := range req.Refs {
		key := ref.Key
		var m *mintedRef
		if rr != nil {
			m = rr.Refs[key]
		}
		r := (*claimRecord)(nil)
		if m != nil {
			r = st.Claims[m.Claim]
		}
		if m == nil || r == nil || !st.refAllowed(reader, r, m, now) {
			return nil, nil, &Error{Op: op, Kind: KindVaultUnknownRef, RefKey: key}
		}
		if ref.SeenAt.Before(m.MintedAt.Truncate(time.Second)) || !sameValue(r, m.Version, r.Meta.Head) {
			return nil, nil, &Error{Op: op, Kind: KindVaultExpired, RefKey: key}
		}
		values[key] = valueref.Value(r.Head().Value)
		records = append(records, r.Head().Ref())
	}
	return values, records, nil
}

// takeVaultQuota counts n values resolved against the day's quota (with
// mu held for writing): past VaultValuesPerDay in a UTC day it is
// KindRateLimited until midnight, and counts nothing.
func (st *state) takeVaultQuota(op string, b *batch, n int) *Error {
	day := b.Now.UTC().Format(time.DateOnly)
	q := st.cv.quota
	if q.Day != day {
		q = vaultQuota{Day: day}
	}
	if q.Count+n > VaultValuesPerDay {
		midnight := b.Now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		return &Error{Op: op, Kind: KindRateLimited, Public: "more than 100 values today", RetryAfter: midnight.Sub(b.Now)}
	}
	if n > 0 {
		q.Count += n
		st.cv.quota = q
		b.Put(engine.BucketMeta, model.MetaVaultQuota, q)
	}
	return nil
}

// refAllowed reports whether reader's grants still allow it the value of
// r that m was minted for: r is active, and a grant in force for the
// reader, for m's purpose (or, for a key served under the owner's
// auto_grant, that policy), still covers it with its tier, restrictions
// and guardrails. A single-use grant that served the read still counts:
// the resolve delivers that read.
func (st *state) refAllowed(reader string, r *claimRecord, m *mintedRef, now time.Time) bool {
	if r.Meta.Status != StatusActive || m.MintedAt.Before(st.consumerSince(reader)) {
		return false
	}
	// The reader must still be an approved app (or an OIDC recipient,
	// which has no record): a removed app's references resolve to nothing,
	// whatever they were served under (found in review: those minted under
	// auto_grant outlived the app).
	if con, ok := st.Consumers[reader]; ok {
		if con.Status != ConsumerApproved {
			return false
		}
	} else if !strings.HasPrefix(reader, "oidc:") {
		return false
	}
	c := r.Head()
	if m.Grant == "" {
		return st.Settings.AutoGranted(c.Sensitivity) && restrictionsAllow(c.Restrictions, "", &Grant{}, now)
	}
	for _, g := range st.GrantsBy[reader] {
		if g.RevokedAt != nil || !now.Before(g.ExpiresAt) || (g.SpentAt != nil && g.ID != m.Grant) || g.Purpose != m.Purpose {
			continue
		}
		if !g.AllowsOp(OpRead) || !grantCovers(g, r) || model.TierRank[c.Sensitivity] > model.TierRank[g.EffectiveTier()] {
			continue
		}
		if restrictionsAllow(c.Restrictions, m.Purpose, g, now) && st.guardrailsAllow(g, r, m.Purpose) {
			return true
		}
	}
	return false
}

// staleKey reports whether binding k was made for a removed app whose
// name another app now holds: it binds nothing for the namesake.
func (st *state) staleKey(k *VaultKey) bool {
	return k.FirstSeen.Before(st.consumerSince(k.Reader))
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
