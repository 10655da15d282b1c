package localvault

import (
	"context"
	"fmt"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/valueref"
)

// bodyError is the domain error of a refused resolve body.
func bodyError(op string, e *valueref.Error) *model.Error {
	if e.Code == valueref.CodeTooManyRefs {
		return model.Fail(op, model.KindVaultTooManyRefs, "")
	}
	return model.Fail(op, model.KindVaultBadRequest, e.Msg)
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
// the vault first saw it; KindRateLimited past the reader's 100 values in
// a UTC day (or the custodian's 1,000, VaultValuesPerDayAll), or past the
// reads rate (Settings, 60 a minute by default) of resolves with one K,
// which then leave no receipt.
// Every answer to a known K leaves a receipt with the kid and the keys,
// never a value — but of refusals only the first a minute with one K and
// constraint, the rest of that minute counted in one receipt ("kid:K",
// "refused:CONSTRAINT", "count:N", "window:START/END"). A body built in Go is held to the rules of one read
// (valueref.Request.Check).
func Resolve(ctx context.Context, core Core, in model.ResolveInput) (model.ResolveResult, error) {
	const op = "vault.resolve"
	v, release, err := core.Enter(op, model.Principal{})
	if err != nil {
		return model.ResolveResult{}, err
	}
	defer release()
	v.Mu.RLock()
	on := v.Settings.LocalVaults
	v.Mu.RUnlock()
	if !on {
		return model.ResolveResult{}, model.Fail(op, model.KindVaultDisabled, "")
	}
	if in.Body.Size > model.MaxResolveBody {
		return model.ResolveResult{}, model.Fail(op, model.KindTooLarge, "the body is above 64 KB")
	}
	k, ok := valueref.ParseBearer(in.Bearer)
	if !ok {
		return model.ResolveResult{}, model.Fail(op, model.KindVaultUnknownKey, "")
	}
	kid := valueref.Kid(k)
	clear(k)
	v.Mu.RLock()
	binding := v.CV.keys[kid]
	stale := binding != nil && v.staleKey(binding)
	v.Mu.RUnlock()
	switch {
	case binding == nil || binding.Status == model.VaultKeyBlocked || binding.Status == model.VaultKeyRevoked || stale:
		return model.ResolveResult{}, model.Fail(op, model.KindVaultUnknownKey, "")
	case binding.Status == model.VaultKeyPending:
		// Only the owner activates a binding: no time is set.
		return model.ResolveResult{}, &model.Error{Op: op, Kind: model.KindVaultPending, Public: "the owner has not activated this vault key yet (phc vault-keys activate)"}
	}
	reader := binding.Reader
	// A bound key's resolves share the reads rate of tokens: each answer
	// to a known K leaves a receipt, refusals too, so that without a bound
	// a hook (or whoever holds K) could grow the store at will. Past it
	// the answer is rate_limited with the wait, and only the log has it.
	v.Mu.RLock()
	rate := v.Settings.ReadRate()
	v.Mu.RUnlock()
	if wait := core.TakeRate(limits.Limit{Key: "r:vault:" + kid, Rate: rate}); wait > 0 {
		core.Log().Info("vault resolve rate limited", "kid", kid, "per_minute", rate)
		return model.ResolveResult{}, &model.Error{Op: op, Kind: model.KindRateLimited, RetryAfter: wait,
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
		out     model.ResolveResult
		refused *model.Error
	)
	err = core.Commit(v.State, func(b *engine.Batch) error {
		rc := model.Receipt{Actor: "vault:" + reader, Operation: op, Recipient: reader, Decision: "deny",
			Records: append([]string{"kid:" + kid}, prefixed("ref:", keys)...)}
		// Refusals are coalesced per key and constraint: the first of a
		// minute has its receipt, the rest one count (engine.Batch.Refuse).
		deny := func(e *model.Error) error {
			refused = e
			rc.Constraint = e.Kind.Row().Constraint
			of := rc
			of.Records = []string{"kid:" + kid, "refused:" + rc.Constraint}
			b.Refuse(op+" "+kid+" "+rc.Constraint, rc, of)
			return nil
		}
		// The binding again, in commit order: a revocation acknowledged
		// before this answer is never bypassed.
		if bk := v.CV.keys[kid]; bk == nil || bk.Status != model.VaultKeyActive || v.staleKey(bk) || !v.Settings.LocalVaults {
			return deny(model.Fail(op, model.KindVaultUnknownKey, ""))
		}
		if perr != nil {
			return deny(bodyError(op, perr))
		}
		if d := req.Now.Sub(b.Now); d > model.MaxClockSkew || d < -model.MaxClockSkew {
			at := b.Now.UTC().Truncate(time.Second)
			return deny(&model.Error{Op: op, Kind: model.KindVaultClockSkew, ServerTime: &at})
		}
		values, records, e := v.resolveValues(op, reader, req, b.Now)
		if e != nil {
			return deny(e)
		}
		if e := v.CV.takeQuota(op, b, reader, len(values)); e != nil {
			return deny(e)
		}
		rc.Decision, rc.Records = "allow", append(rc.Records, records...)
		b.Receipt(rc)
		out = model.ResolveResult{Values: values}
		return nil
	})
	if err != nil {
		return model.ResolveResult{}, err
	}
	if refused != nil {
		return model.ResolveResult{}, refused
	}
	return out, nil
}

// resolveValues returns the value of each key of req that reader may
// resolve at now, and the claim versions they are, or the refusal of the
// whole request: a key that is not the reader's, not on this custodian or
// whose value its grants no longer allow (KindVaultUnknownRef), or one
// minted again, or whose value changed, after the vault first saw it
// (KindVaultExpired). Callers hold v.Mu.
func (v View) resolveValues(op, reader string, req valueref.Request, now time.Time) (map[string]string, []string, *model.Error) {
	values := make(map[string]string, len(req.Refs))
	var records []string
	rr := v.CV.refs[reader]
	for _, ref := range req.Refs {
		key := ref.Key
		var m *Ref
		if rr != nil {
			m = rr.Refs[key]
		}
		r := (*engine.ClaimRecord)(nil)
		if m != nil {
			r = v.Claims[m.Claim]
		}
		if m == nil || r == nil || !v.Rules.RefAllowed(reader, r, m, now) {
			return nil, nil, &model.Error{Op: op, Kind: model.KindVaultUnknownRef, RefKey: key}
		}
		if ref.SeenAt.Before(m.MintedAt.Truncate(time.Second)) || !sameValue(r, m.Version, r.Meta.Head) {
			return nil, nil, &model.Error{Op: op, Kind: model.KindVaultExpired, RefKey: key}
		}
		values[key] = valueref.Value(r.Head().Value)
		records = append(records, r.Head().Ref())
	}
	return values, records, nil
}

// takeQuota counts n values resolved for reader against the day's quotas
// (with the view's Mu held for writing): past VaultValuesPerDay for the
// reader, or VaultValuesPerDayAll in all, in a UTC day it is
// KindRateLimited until midnight, and counts nothing. Each reader has its
// own: one that used up its values refuses no other reader's.
func (cv *State) takeQuota(op string, b *engine.Batch, reader string, n int) *model.Error {
	day := b.Now.UTC().Format(time.DateOnly)
	q := cv.quota
	if q.Day != day {
		q = vaultQuota{Day: day}
	}
	var over string
	switch {
	case q.Readers[reader]+n > model.VaultValuesPerDay:
		over = fmt.Sprintf("more than %d values today for this reader", model.VaultValuesPerDay)
	case q.Count+n > model.VaultValuesPerDayAll:
		over = fmt.Sprintf("more than %d values today for all readers", model.VaultValuesPerDayAll)
	}
	if over != "" {
		midnight := b.Now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		return &model.Error{Op: op, Kind: model.KindRateLimited, Public: over, RetryAfter: midnight.Sub(b.Now)}
	}
	if n > 0 {
		// A new map: the published one is never changed.
		readers := make(map[string]int, len(q.Readers)+1)
		for r, c := range q.Readers {
			readers[r] = c
		}
		readers[reader] += n
		q.Count, q.Readers = q.Count+n, readers
		cv.quota = q
		b.Put(engine.BucketMeta, model.MetaVaultQuota, q)
	}
	return nil
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
