package limits

import (
	"crypto/subtle"
	"sync"
	"time"
)

// Unlock limits unlock attempts so that nobody's failures refuse the
// owner, and so that only an attempt that may succeed costs a key
// derivation (Argon2id, the expensive part). It classes each attempt by
// the Secret Key it offers, compared as a digest before anything is
// derived:
//
//   - wrong: the Secret Key is malformed, or is not the one an earlier
//     unlock in this process proved (the key never changes). Refused
//     without a derivation; limit failures a window per host
//     ([Source.Host]), so that reconnecting does not help. The owner,
//     who offers the proved key, never meets this limit.
//   - proven: the Secret Key is the proved one, or, before any unlock,
//     the one found beside the vault (the hint). Derived; limit wrong
//     passwords a window per connection ([Source.Conn]), so that a
//     process holding the Secret Key slows itself and not the owner.
//   - unproven: before any unlock, a Secret Key other than the hint, or
//     any when there is no hint. Derived; limit failures a window per
//     connection and, while there is a hint (the owner's attempt is then
//     proven), limit failures a window in all, which bounds the
//     derivations spent on such attempts.
//
// A correct password with the right Secret Key is refused only when its
// own connection failed too often; nobody else's failures count against
// it. Derivations run one at a time (the caller serialises them), which
// bounds the key-derivation work whatever the sources.
type Unlock struct {
	digest func(secretKey string) ([32]byte, error)

	mu    sync.Mutex
	known *[32]byte // the Secret Key's digest, proved by an unlock
	hint  *[32]byte // the digest of the key found beside the vault

	wrong    *Failures // per host: attempts refused without a derivation
	derived  *Failures // per connection: failed derivations
	unproven *Failures // in all: failed derivations of unproven attempts, while there is a hint
}

// NewUnlock returns an Unlock that allows limit failures a window in each
// count. digest turns Secret Key text into a digest, or fails for a
// malformed key; hint is the Secret Key found beside the vault ("" for
// none, or one that does not parse), trusted only to let an attempt go
// ahead, never to refuse one.
func NewUnlock(limit int, window time.Duration, digest func(string) ([32]byte, error), hint string) *Unlock {
	u := &Unlock{digest: digest,
		wrong: NewFailures(limit, window), derived: NewFailures(limit, window), unproven: NewFailures(limit, window)}
	if hint != "" {
		if d, err := digest(hint); err == nil {
			u.hint = &d
		}
	}
	return u
}

// Attempt is an unlock attempt that [Unlock.Begin] let through to the key
// derivation. Report its outcome with Failed or Succeeded.
type Attempt struct {
	u      *Unlock
	src    Source
	key    [32]byte
	shared bool // counts in the unproven attempts' common limit
}

// Begin classes an attempt from src offering secretKey, at now, before any
// key derivation. It returns wait > 0 to refuse the attempt for wait (rate
// limited); derive false to refuse it as wrong credentials without a
// derivation (the failure is counted); else the attempt, for the caller
// to derive the keys and report the outcome.
func (u *Unlock) Begin(src Source, secretKey string, now time.Time) (a Attempt, derive bool, wait time.Duration) {
	d, err := u.digest(secretKey)
	u.mu.Lock()
	known, hint := u.known, u.hint
	u.mu.Unlock()
	a = Attempt{u: u, src: src, key: d}
	switch {
	case err != nil || known != nil && !equal(known, &d):
		if wait := u.wrong.Wait(src.Host(), now); wait > 0 {
			return a, false, wait
		}
		u.wrong.Note(src.Host(), now)
		return a, false, 0
	case known == nil && hint != nil && !equal(hint, &d):
		a.shared = true
	}
	wait = u.derived.Wait(src.Conn(), now)
	if a.shared {
		wait = max(wait, u.unproven.Wait("", now))
	}
	return a, wait == 0, wait
}

// Failed records that a's derivation found the credentials wrong, at now.
func (a Attempt) Failed(now time.Time) {
	a.u.derived.Note(a.src.Conn(), now)
	if a.shared {
		a.u.unproven.Note("", now)
	}
}

// Succeeded records that a unlocked: its Secret Key is the vault's, and
// from now on any other is wrong without a derivation.
func (a Attempt) Succeeded() {
	a.u.mu.Lock()
	defer a.u.mu.Unlock()
	k := a.key
	a.u.known = &k
}

func equal(a, b *[32]byte) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }
