package custodian

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

// The Client-Vault v=1 server side (docs/formats/reference.md): a reader's local vault
// hook holds a 256-bit secret K and shows kid = base64(SHA-256(K)) on its
// MCP requests. A kid first seen binds, pending, to the reader that showed
// it; once the owner activates the binding, the hook may resolve that
// reader's references with K. Only the kid is stored, never K.

// Binding states of a vault key.
const (
	VaultKeyPending = "pending"
	VaultKeyActive  = "active"
	VaultKeyBlocked = "blocked" // shown by a second reader: blocked for both
	VaultKeyRevoked = "revoked"
)

// Limits of the Client-Vault v=1 protocol.
const (
	MaxVaultKeysPerReader = 5        // bindings a reader may hold (not revoked)
	MaxResolveRefs        = 100      // keys in one resolve
	MaxResolveBody        = 64 << 10 // bytes of one resolve body
	VaultValuesPerDay     = 100      // values resolved per UTC day
	maxClockSkew          = 5 * time.Minute
	bucketVaultKeys       = "vault_keys" // vk_… → VaultKey
	metaVaultQuota        = "vault_quota"
)

// VaultKey is the binding of one local vault's kid to a reader.
type VaultKey struct {
	ID          string     `json:"id"`     // vk_…
	Kid         string     `json:"kid"`    // base64(SHA-256(K)), as the header carries it
	Reader      string     `json:"reader"` // the reader it is bound to
	Status      string     `json:"status"` // pending | active | blocked | revoked
	FirstSeen   time.Time  `json:"first_seen"`
	ActivatedAt *time.Time `json:"activated_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	// BlockedBy is the second reader that showed the kid.
	BlockedBy string `json:"blocked_by,omitempty"`
}

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
	if err := loadEach(tx, bucketVaultKeys, func(k *VaultKey) { st.cv.keys[k.Kid] = k }); err != nil {
		return err
	}
	if raw, ok, err := tx.Get(bucketMeta, metaVaultQuota); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal(raw, &st.cv.quota); err != nil {
			return fmt.Errorf("meta vault quota: %w", err)
		}
	}
	return st.loadVaultRefs(tx)
}

// KidOf returns the kid of the secret K: standard base64, with padding, of
// SHA-256(K).
func KidOf(k []byte) string {
	h := sha256.Sum256(k)
	return base64.StdEncoding.EncodeToString(h[:])
}

// validKid reports whether kid is standard base64 of 32 bytes.
func validKid(kid string) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(kid)
	return err == nil && len(b) == sha256.Size
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
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.settings.LocalVaults
}

// SeeVaultKey records that reader p showed kid (from its Client-Vault
// header) on an MCP request, while local vaults are on: a kid never seen
// binds to p, pending until the owner activates it; a kid bound to
// another reader is blocked for both; a reader holding five bindings gets
// no sixth. It changes nothing for a kid already bound to p. Only the kid
// is stored.
func (s *Service) SeeVaultKey(ctx context.Context, p Principal, kid string) error {
	const op = "vault_key.see"
	if p.kind != PrincipalConsumer {
		return nil
	}
	if !validKid(kid) {
		return fail(op, KindInvalid, "a kid is standard base64 of 32 bytes")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	settled := func(st *state) bool {
		if !st.settings.LocalVaults {
			return true
		}
		k := st.cv.keys[kid]
		return k != nil && (k.Status == VaultKeyBlocked || k.Status == VaultKeyRevoked || (k.Reader == p.Consumer && !st.staleKey(k)))
	}
	st.mu.RLock()
	done := settled(st)
	st.mu.RUnlock()
	if done {
		return nil
	}
	var refused *Error
	err = s.commit(st, func(st *state, b *batch) error {
		if settled(st) || !st.live(p, b.now) {
			return nil
		}
		rc := Receipt{Actor: p.actor(), Operation: "vault_key.bind", Recipient: p.Consumer, Decision: "allow", Records: []string{"kid:" + kid}}
		if k := st.cv.keys[kid]; k != nil && !st.staleKey(k) {
			// One kid, one reader: shown by a second, it is blocked for both.
			nk := *k
			nk.Status, nk.BlockedBy = VaultKeyBlocked, p.Consumer
			st.cv.keys[kid] = &nk
			b.put(bucketVaultKeys, nk.ID, &nk)
			rc.Decision, rc.Constraint = "deny", "blocked"
			rc.Revision = b.nextRevision()
			b.receipt(rc)
			return nil
		}
		n := 0
		for _, k := range st.cv.keys {
			if k.Reader == p.Consumer && k.Status != VaultKeyRevoked && !st.staleKey(k) {
				n++
			}
		}
		if n >= MaxVaultKeysPerReader {
			refused = fail(op, KindConflict, "this reader holds the most vault keys it may (5): revoke one first")
			return nil
		}
		id, err := identity.NewID("vk_")
		if err != nil {
			return wrap(op, KindInternal, err)
		}
		if old := st.cv.keys[kid]; old != nil {
			id = old.ID // a removed app's binding: its namesake binds anew, pending
		}
		k := &VaultKey{ID: id, Kid: kid, Reader: p.Consumer, Status: VaultKeyPending, FirstSeen: b.now}
		st.cv.keys[kid] = k
		b.put(bucketVaultKeys, id, k)
		rc.Revision = b.nextRevision()
		b.receipt(rc)
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
	if err := requireOwner(op, p); err != nil {
		return VaultKey{}, 0, err
	}
	if status != VaultKeyActive && status != VaultKeyRevoked {
		return VaultKey{}, 0, fail(op, KindInvalid, "status is active or revoked")
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
			return notFound(op)
		case k.Status == status:
			out, rev = *k, st.revision
			return nil
		case k.Status == VaultKeyRevoked:
			return fail(op, KindConflict, "the binding is revoked; a revoked kid never binds again")
		case k.Status == VaultKeyBlocked && status == VaultKeyActive:
			return fail(op, KindConflict, "the binding is blocked: two readers showed this kid")
		}
		nk := *k
		at := b.now
		nk.Status = status
		if status == VaultKeyActive {
			nk.ActivatedAt = &at
		} else {
			nk.RevokedAt = &at
		}
		st.cv.keys[nk.Kid] = &nk
		b.put(bucketVaultKeys, nk.ID, &nk)
		rev = b.nextRevision()
		b.receipt(Receipt{Actor: "owner", Operation: "vault_key." + map[string]string{VaultKeyActive: "activate", VaultKeyRevoked: "revoke"}[status],
			Recipient: nk.Reader, Decision: "allow", Records: []string{"kid:" + nk.Kid}, Revision: rev})
		out = nk
		return nil
	})
	return out, rev, err
}

// ResolveResult is the 200 answer of a resolve: one string per key.
type ResolveResult struct {
	Values map[string]string `json:"values"`
}

// resolveBody is the body of a resolve request.
type resolveBody struct {
	Now  *string `json:"now"`
	Refs *[]struct {
		Key    *string `json:"key"`
		SeenAt *string `json:"seen_at"`
	} `json:"refs"`
}

// refKeyPattern is the grammar of the keys this custodian mints. Any other
// key is in the client's range (one a vault made itself): bad_request.
var refKeyPattern = regexp.MustCompile(`^[A-Z][A-Z_]{0,31}_[1-9][0-9]{0,5}$`)

// ValidRefKey reports whether key is of the form this custodian mints:
// TYPE_N, TYPE upper-case letters and "_", N from 1 to 999999.
func ValidRefKey(key string) bool { return refKeyPattern.MatchString(key) }

// parseResolve decodes and checks a resolve body: the client's clock, and
// each key with the time the vault first saw it.
func parseResolve(op string, body []byte) (now time.Time, keys []string, seen []time.Time, err error) {
	bad := func(pub string) (time.Time, []string, []time.Time, error) {
		return time.Time{}, nil, nil, fail(op, KindVaultBadRequest, pub)
	}
	var in resolveBody
	if err := json.Unmarshal(body, &in); err != nil {
		return bad("the body is not a JSON object with now and refs")
	}
	if in.Now == nil || in.Refs == nil {
		return bad("the body needs now and refs")
	}
	if now, err = time.Parse(time.RFC3339, *in.Now); err != nil {
		return bad("now is not an RFC 3339 time")
	}
	if len(*in.Refs) > MaxResolveRefs {
		return time.Time{}, nil, nil, fail(op, KindVaultTooManyRefs, "")
	}
	dup := map[string]bool{}
	for _, r := range *in.Refs {
		if r.Key == nil || r.SeenAt == nil {
			return bad("each ref needs key and seen_at")
		}
		if !ValidRefKey(*r.Key) {
			return bad("a key is not one this custodian mints (TYPE_N)")
		}
		if dup[*r.Key] {
			return bad("a key is repeated")
		}
		dup[*r.Key] = true
		t, err := time.Parse(time.RFC3339, *r.SeenAt)
		if err != nil {
			return bad("seen_at is not an RFC 3339 time")
		}
		keys, seen = append(keys, *r.Key), append(seen, t)
	}
	return now, keys, seen, nil
}

// ParseResolveBody checks a resolve body as the resolve endpoint does,
// without resolving anything; its error is the same domain error.
func ParseResolveBody(body []byte) (keys []string, err error) {
	_, keys, _, err = parseResolve("vault.resolve", body)
	return keys, err
}

// kOf decodes a presented K: base64url without padding, 32 bytes.
func kOf(bearer string) ([]byte, bool) {
	k, err := base64.RawURLEncoding.Strict().DecodeString(bearer)
	return k, err == nil && len(k) == 32
}

// Resolve answers a local vault hook's resolve request (Client-Vault v=1):
// bearer is K as presented, body the request body. The answer is every
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
// never a value.
func (s *Service) Resolve(ctx context.Context, bearer string, body []byte) (ResolveResult, error) {
	const op = "vault.resolve"
	st, release, err := s.enter(op, Principal{})
	if err != nil {
		return ResolveResult{}, err
	}
	defer release()
	st.mu.RLock()
	on := st.settings.LocalVaults
	st.mu.RUnlock()
	if !on {
		return ResolveResult{}, fail(op, KindVaultDisabled, "")
	}
	if len(body) > MaxResolveBody {
		return ResolveResult{}, fail(op, KindTooLarge, "the body is above 64 KB")
	}
	k, ok := kOf(bearer)
	if !ok {
		return ResolveResult{}, fail(op, KindVaultUnknownKey, "")
	}
	kid := KidOf(k)
	clear(k)
	st.mu.RLock()
	binding := st.cv.keys[kid]
	stale := binding != nil && st.staleKey(binding)
	st.mu.RUnlock()
	switch {
	case binding == nil || binding.Status == VaultKeyBlocked || binding.Status == VaultKeyRevoked || stale:
		return ResolveResult{}, fail(op, KindVaultUnknownKey, "")
	case binding.Status == VaultKeyPending:
		// Only the owner activates a binding: no time is set.
		return ResolveResult{}, &Error{Op: op, Kind: KindVaultPending, Public: "the owner has not activated this vault key yet (phc vault-keys activate)"}
	}
	reader := binding.Reader
	// A bound key's resolves share the reads rate of tokens: each answer
	// to a known K leaves a receipt, refusals too, so that without a bound
	// a hook (or whoever holds K) could grow the store at will. Past it
	// the answer is rate_limited with the wait, and only the log has it.
	st.mu.RLock()
	rate := st.settings.readsPerMinute()
	st.mu.RUnlock()
	if wait := s.rates.take(s.clock.Now(), limit{key: "r:vault:" + kid, rate: rate}); wait > 0 {
		s.log.Info("vault resolve rate limited", "kid", kid, "per_minute", rate)
		return ResolveResult{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait,
			Public: fmt.Sprintf("more than %d resolves a minute with this vault key; retry after the wait", rate)}
	}
	clientNow, keys, seen, perr := parseResolve(op, body)
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
			b.receipt(rc)
			return nil
		}
		// The binding again, in commit order: a revocation acknowledged
		// before this answer is never bypassed.
		if bk := st.cv.keys[kid]; bk == nil || bk.Status != VaultKeyActive || st.staleKey(bk) || !st.settings.LocalVaults {
			return deny(fail(op, KindVaultUnknownKey, ""))
		}
		if perr != nil {
			e, _ := perr.(*Error)
			return deny(e)
		}
		if d := clientNow.Sub(b.now); d > maxClockSkew || d < -maxClockSkew {
			at := b.now.UTC().Truncate(time.Second)
			return deny(&Error{Op: op, Kind: KindVaultClockSkew, ServerTime: &at})
		}
		values := make(map[string]string, len(keys))
		var records []string
		rr := st.cv.refs[reader]
		for i, key := range keys {
			var m *mintedRef
			if rr != nil {
				m = rr.Refs[key]
			}
			r := (*claimRecord)(nil)
			if m != nil {
				r = st.claims[m.Claim]
			}
			if m == nil || r == nil || !st.refAllowed(reader, r, m, b.now) {
				return deny(&Error{Op: op, Kind: KindVaultUnknownRef, RefKey: key})
			}
			if seen[i].Before(m.MintedAt.Truncate(time.Second)) || !sameValue(r, m.Version, r.meta.Head) {
				return deny(&Error{Op: op, Kind: KindVaultExpired, RefKey: key})
			}
			values[key] = refValue(r.head().Value)
			records = append(records, r.head().Ref())
		}
		day := b.now.UTC().Format(time.DateOnly)
		q := st.cv.quota
		if q.Day != day {
			q = vaultQuota{Day: day}
		}
		if q.Count+len(values) > VaultValuesPerDay {
			midnight := b.now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
			return deny(&Error{Op: op, Kind: KindRateLimited, Public: "more than 100 values today", RetryAfter: midnight.Sub(b.now)})
		}
		if len(values) > 0 {
			q.Count += len(values)
			st.cv.quota = q
			b.put(bucketMeta, metaVaultQuota, q)
		}
		rc.Decision, rc.Records = "allow", append(rc.Records, records...)
		b.receipt(rc)
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

// refAllowed reports whether reader's grants still allow it the value of
// r that m was minted for: r is active, and a grant in force for the
// reader, for m's purpose (or, for a key served under the owner's
// auto_grant, that policy), still covers it with its tier, restrictions
// and guardrails. A single-use grant that served the read still counts:
// the resolve delivers that read.
func (st *state) refAllowed(reader string, r *claimRecord, m *mintedRef, now time.Time) bool {
	if r.meta.Status != StatusActive || m.MintedAt.Before(st.consumerSince(reader)) {
		return false
	}
	// The reader must still be an approved app (or an OIDC recipient,
	// which has no record): a removed app's references resolve to nothing,
	// whatever they were served under (found in review: those minted under
	// auto_grant outlived the app).
	if con, ok := st.consumers[reader]; ok {
		if con.Status != ConsumerApproved {
			return false
		}
	} else if !strings.HasPrefix(reader, "oidc:") {
		return false
	}
	c := r.head()
	if m.Grant == "" {
		return st.settings.autoGranted(c.Sensitivity) && restrictionsAllow(c.Restrictions, "", &Grant{}, now)
	}
	for _, g := range st.grantsBy[reader] {
		if g.RevokedAt != nil || !now.Before(g.ExpiresAt) || (g.SpentAt != nil && g.ID != m.Grant) || g.Purpose != m.Purpose {
			continue
		}
		if !g.allowsOp(OpRead) || !g.covers(r) || tierRank[c.Sensitivity] > tierRank[g.maxTier()] {
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

// allowsOp reports whether g names operation op.
func (g *Grant) allowsOp(op string) bool {
	for _, o := range g.Operations {
		if o == op {
			return true
		}
	}
	return false
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

// ReferenceKeys returns the keys of every reference in s, in order of
// appearance.
func ReferenceKeys(s string) []string {
	var out []string
	for _, m := range ReferencePattern.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// ReferencePattern matches a reference ⟦TYPE_N:display⟧ or ⟦TYPE_N⟧; its
// first group is the key.
var ReferencePattern = regexp.MustCompile(`⟦([A-Z][A-Z_]{0,31}_[1-9][0-9]{0,5})(?::[^⟦⟧]*)?⟧`)
