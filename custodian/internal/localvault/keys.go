package localvault

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/valueref"
)

// State is the view's Client-Vault state: bindings by kid, each reader's
// references, and the day's count of resolved values, in all and per
// reader. Records are replaced, never changed, once published.
type State struct {
	keys  map[string]*model.VaultKey // kid → binding
	refs  map[string]*readerRefs     // reader → references
	quota vaultQuota
}

type vaultQuota struct {
	Day     string         `json:"day"`               // YYYY-MM-DD, UTC
	Count   int            `json:"count"`             // values resolved that day, in all
	Readers map[string]int `json:"readers,omitempty"` // values resolved that day, per reader
}

// New is an empty Client-Vault state.
func New() *State {
	return &State{keys: map[string]*model.VaultKey{}, refs: map[string]*readerRefs{}}
}

// Load reads the bindings, references and quota into cv.
func (cv *State) Load(tx engine.Tx) error {
	if err := engine.LoadEach(tx, model.BucketVaultKeys, func(k *model.VaultKey) { cv.keys[k.Kid] = k }); err != nil {
		return err
	}
	if raw, ok, err := tx.Get(engine.BucketMeta, model.MetaVaultQuota); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal(raw, &cv.quota); err != nil {
			return fmt.Errorf("meta vault quota: %w", err)
		}
	}
	return cv.loadRefs(tx)
}

// On reports whether local vaults are on: the vault is unlocked and the
// owner's local_vaults setting is true. While the vault is locked it
// cannot say, and answers false.
func On(core Core) bool {
	v, release, err := core.Enter("local_vaults", model.Principal{})
	if err != nil {
		return false
	}
	defer release()
	v.Mu.RLock()
	defer v.Mu.RUnlock()
	return v.Settings.LocalVaults
}

// SeeKey records that reader p showed kid (from its Client-Vault header)
// on an MCP request, while local vaults are on: a kid never seen binds to
// p, pending until the owner activates it; a kid bound to another reader
// is refused (KindConflict) and its binding stays as it is, since a kid
// names K but does not prove it, and anyone who saw it could show it; a
// reader holding five bindings gets no sixth. It changes nothing for a kid
// already bound to p. Only the kid is stored.
func SeeKey(ctx context.Context, core Core, p model.Principal, kid string) error {
	const op = "vault_key.see"
	if p.Kind() != model.PrincipalConsumer {
		return nil
	}
	if !valueref.ValidKid(kid) {
		return model.Fail(op, model.KindInvalid, "a kid is standard base64 of 32 bytes")
	}
	v, release, err := core.Enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	settled := func() bool {
		if !v.Settings.LocalVaults {
			return true
		}
		k := v.CV.keys[kid]
		return k != nil && (k.Status == model.VaultKeyBlocked || k.Status == model.VaultKeyRevoked || (k.Reader == p.Consumer && !v.staleKey(k)))
	}
	// One kid, one reader: a second reader showing it is refused, and
	// costs the reader it is bound to nothing. Only the log has it: a
	// receipt for each showing would let the second reader grow the store.
	taken := func() bool { k := v.CV.keys[kid]; return k != nil && !v.staleKey(k) }
	refuse := func() error {
		core.Log().Info("a reader showed a kid bound to another reader: refused", "kid", kid, "reader", p.Consumer)
		return model.Fail(op, model.KindConflict, "this kid is bound to another reader")
	}
	v.Mu.RLock()
	done, other := settled(), taken()
	v.Mu.RUnlock()
	if done {
		return nil
	} else if other {
		return refuse()
	}
	var refused *model.Error
	err = core.Commit(v.State, func(b *engine.Batch) error {
		if settled() || !v.Rules.Live(p, b.Now) {
			return nil
		}
		if other = taken(); other {
			return nil
		}
		rc := model.Receipt{Actor: p.Actor(), Operation: "vault_key.bind", Recipient: p.Consumer, Decision: "allow", Records: []string{"kid:" + kid}}
		n := 0
		for _, k := range v.CV.keys {
			if k.Reader == p.Consumer && k.Status != model.VaultKeyRevoked && !v.staleKey(k) {
				n++
			}
		}
		if n >= model.MaxVaultKeysPerReader {
			refused = model.Fail(op, model.KindConflict, "this reader holds the most vault keys it may (5): revoke one first")
			return nil
		}
		id, err := identity.NewID("vk_")
		if err != nil {
			return model.Wrap(op, model.KindInternal, err)
		}
		if old := v.CV.keys[kid]; old != nil {
			id = old.ID // a removed app's binding: its namesake binds anew, pending
		}
		k := &model.VaultKey{ID: id, Kid: kid, Reader: p.Consumer, Status: model.VaultKeyPending, FirstSeen: b.Now}
		v.CV.keys[kid] = k
		b.Put(model.BucketVaultKeys, id, k)
		rc.Revision = b.NextRevision()
		b.Receipt(rc)
		return nil
	})
	switch {
	case err != nil:
		return err
	case other:
		return refuse()
	case refused != nil:
		return refused
	}
	return nil
}

// Keys lists the vault key bindings, oldest first (owner only).
func Keys(ctx context.Context, core Core, p model.Principal) ([]model.VaultKey, error) {
	var out []model.VaultKey
	err := core.OwnerRead("vault_key.list", p, func(v View) error {
		out = make([]model.VaultKey, 0, len(v.CV.keys))
		for _, k := range v.CV.keys {
			out = append(out, *k)
		}
		sort.Slice(out, func(i, j int) bool {
			if !out[i].FirstSeen.Equal(out[j].FirstSeen) {
				return out[i].FirstSeen.Before(out[j].FirstSeen)
			}
			return out[i].ID < out[j].ID
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetKey activates (status "active") or revokes ("revoked") the binding
// named by its kid or its vk_ id (owner only). A blocked binding cannot be
// activated; a revoked one stays revoked.
func SetKey(ctx context.Context, core Core, p model.Principal, ref, status string) (model.VaultKey, uint64, error) {
	const op = "vault_key.set"
	if err := p.RequireOwner(op); err != nil {
		return model.VaultKey{}, 0, err
	}
	if status != model.VaultKeyActive && status != model.VaultKeyRevoked {
		return model.VaultKey{}, 0, model.Fail(op, model.KindInvalid, "status is active or revoked")
	}
	var (
		out model.VaultKey
		rev uint64
	)
	err := write(core, op, p, func(v View, b *engine.Batch) error {
		var k *model.VaultKey
		for _, x := range v.CV.keys {
			if x.Kid == ref || x.ID == ref {
				k = x
				break
			}
		}
		switch {
		case k == nil:
			return model.NotFound(op)
		case k.Status == status:
			out, rev = *k, v.Revision
			return nil
		case k.Status == model.VaultKeyRevoked:
			return model.Fail(op, model.KindConflict, "the binding is revoked; a revoked kid never binds again")
		case k.Status == model.VaultKeyBlocked && status == model.VaultKeyActive:
			return model.Fail(op, model.KindConflict, "the binding is blocked: two readers showed this kid")
		}
		nk := *k
		at := b.Now
		nk.Status = status
		if status == model.VaultKeyActive {
			nk.ActivatedAt = &at
		} else {
			nk.RevokedAt = &at
		}
		v.CV.keys[nk.Kid] = &nk
		b.Put(model.BucketVaultKeys, nk.ID, &nk)
		rev = b.NextRevision()
		b.Receipt(model.Receipt{Actor: "owner", Operation: "vault_key." + map[string]string{model.VaultKeyActive: "activate", model.VaultKeyRevoked: "revoke"}[status],
			Recipient: nk.Reader, Decision: "allow", Records: []string{"kid:" + nk.Kid}, Revision: rev})
		out = nk
		return nil
	})
	return out, rev, err
}

// staleKey reports whether binding k was made for a removed app whose
// name another app now holds: it binds nothing for the namesake.
func (v View) staleKey(k *model.VaultKey) bool {
	return k.FirstSeen.Before(v.Rules.ConsumerSince(k.Reader))
}
