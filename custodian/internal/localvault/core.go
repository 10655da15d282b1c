package localvault

import (
	"log/slog"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
)

// Core is what the glue needs from the core's Service (package custodian
// implements it).
type Core interface {
	// Enter starts an operation of p on the open vault, held open until
	// release is called: KindLocked while locked, KindUnauthenticated for
	// an owner principal whose session has ended.
	Enter(op string, p model.Principal) (v View, release func(), err error)
	// OwnerRead runs fn, for the owner only, on the current view under
	// its read lock, and returns once what fn saw is durable.
	OwnerRead(op string, p model.Principal, fn func(v View) error) error
	// Commit queues fn for the journal and waits until it is durable: fn
	// runs alone against st with st.Mu held for writing (see custodian's
	// commit for what an error from fn does).
	Commit(st *engine.State, fn func(b *engine.Batch) error) error
	// TakeRate takes one from the bucket of l now, and returns the wait
	// when it is empty (0: taken).
	TakeRate(l limits.Limit) time.Duration
	// Log is the Service's log.
	Log() *slog.Logger
}

// Rules are the core's rules over one view. Callers hold its Mu.
type Rules interface {
	// Live reports whether consumer principal p may still act at now.
	Live(p model.Principal, now time.Time) bool
	// ConsumerSince is when consumer name's record was created (zero for
	// an OIDC recipient).
	ConsumerSince(name string) time.Time
	// RefAllowed reports whether reader's grants still allow it the
	// value of r that m was minted for, at now.
	RefAllowed(reader string, r *engine.ClaimRecord, m *Ref, now time.Time) bool
}

// View is one open vault as the glue sees it: the engine's view, the
// Client-Vault state kept beside it, and the core's rules over them.
type View struct {
	*engine.State
	CV    *State
	Rules Rules
}

// write runs fn for p in the journal, once the vault is open and p's
// session current.
func write(core Core, op string, p model.Principal, fn func(v View, b *engine.Batch) error) error {
	v, release, err := core.Enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	return core.Commit(v.State, func(b *engine.Batch) error { return fn(v, b) })
}
