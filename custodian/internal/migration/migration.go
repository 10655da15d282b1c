// Package migration moves context between custodians and into the
// quarantine: migration bundles out (ExportBundle) and in (ImportBundle),
// the owner's sealed archives (Export, Import), and the quarantine where
// what came in waits, apart from every claim, until the owner adopts,
// unblocks or rejects it.
//
// It sits beside the core (package custodian), which keeps the rules and
// the view: the core runs every read and write of it (Core), in the
// journal and under its locks, and lends it, within one, what the rules
// keep beside the engine's view (Tx: this custodian's card and keys, the
// pinned custodians, erasing a claim, checking personas). Package
// quarantine owns the bundle format (docs/formats/bundle.md) and the
// holding of records (where they are kept, their index, reading them
// back, reject and adopt a chunk at a time); this package decides, by the
// core's rules, what is held with which problems and how a held record
// becomes a claim here.
package migration

import (
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/schema"
)

// Core is what the migration needs of the core.
type Core interface {
	// Write runs fn for the owner p in the journal, once the vault is
	// open and p's session current, and returns when it is durable. fn
	// runs alone against the view; it validates before it changes it.
	Write(op string, p model.Principal, fn func(tx Tx, b *engine.Batch) error) error
	// Read runs fn for the owner p on the current view (owner only), and
	// returns once what fn saw is durable.
	Read(op string, p model.Principal, fn func(tx Tx) error) error
}

// Tx is the core's view during one of the migration's reads or writes.
type Tx interface {
	// View is the engine's view.
	View() *engine.State
	// Card is this custodian's own card.
	Card(op string) (model.Card, error)
	// Keys is this custodian's private key set (opaque), nil if it has
	// none.
	Keys() []byte
	// Pinned is the card of the pinned custodian id.
	Pinned(id string) (model.Card, bool)
	// Erase replaces every version of claim r by a tombstone (as the
	// owner's delete does).
	Erase(b *engine.Batch, r *engine.ClaimRecord)
	// CheckPersonas checks that personas ids exist, and returns them
	// deduplicated.
	CheckPersonas(op string, ids []string) ([]string, error)
	// Readers counts, for each approved app that may read some of claims
	// at now (by a read grant in force, or by the owner's auto_grant), how
	// many of them it reads.
	Readers(claims []*engine.ClaimRecord, now time.Time) map[string]int
}

// Codec makes and reads custodian cards and seals and opens migration
// bundles (the core's CardCodec).
type Codec interface {
	ParseCard(raw []byte) (model.Card, error)
	Seal(keys []byte, to model.Card, payload []byte) ([]byte, error)
	Open(keys []byte, bundle []byte, signer func(custodianID string) (model.Card, bool)) (source string, payload []byte, err error)
}

// Config is what a Migration is made of.
type Config struct {
	Core Core
	// Vault seals and opens archives; nil: this custodian cannot export
	// or import archives.
	Vault Archiver
	// Cards reads cards and seals and opens bundles; nil: this custodian
	// has no card, and makes and reads no bundle.
	Cards  Codec
	Schema *schema.Validator
	Clock  engine.Clock
	// Store is read for held records' bodies, which the view does not
	// keep.
	Store engine.Store
	// Reentry limits wrong archive credentials.
	Reentry *limits.Failures
	// DefaultTier is the tier a key gets here unless the owner overrides
	// it.
	DefaultTier func(key string) string
}

// Migration runs the migration's operations for the core.
type Migration struct {
	core        Core
	vault       Archiver
	cards       Codec
	schema      *schema.Validator
	clock       engine.Clock
	store       engine.Store
	reentry     *limits.Failures
	defaultTier func(string) string
	// afterCut, if set (tests only, before any export), runs once an
	// export in parts or a backup has taken its cut, with the journal
	// free.
	afterCut func()
}

// SetAfterCut makes f run once an export in parts or a backup has taken
// its cut of the view, before it reads any claim (for tests: set it
// before exports run).
func (m *Migration) SetAfterCut(f func()) { m.afterCut = f }

// New returns the Migration of cfg.
func New(cfg Config) *Migration {
	return &Migration{core: cfg.Core, vault: cfg.Vault, cards: cfg.Cards, schema: cfg.Schema, clock: cfg.Clock,
		store: cfg.Store, reentry: cfg.Reentry, defaultTier: cfg.DefaultTier}
}

// state is the view as the migration uses it: the engine's, and the
// core's Tx for what the rules keep beside it.
type state struct {
	*engine.State
	core        Tx
	defaultTier func(key string) string
}

func (st *state) erase(b *engine.Batch, r *engine.ClaimRecord) { st.core.Erase(b, r) }

func (st *state) checkPersonas(op string, ids []string) ([]string, error) {
	return st.core.CheckPersonas(op, ids)
}

// write runs fn for p in the core's journal (see Core.Write).
func (m *Migration) write(op string, p model.Principal, fn func(st *state, b *engine.Batch) error) error {
	return m.core.Write(op, p, func(tx Tx, b *engine.Batch) error {
		return fn(&state{State: tx.View(), core: tx, defaultTier: m.defaultTier}, b)
	})
}

// ownerRead runs an owner-only read (see Core.Read).
func ownerRead[T any](m *Migration, op string, p model.Principal, fn func(st *state) (T, error)) (T, error) {
	var v T
	err := m.core.Read(op, p, func(tx Tx) error {
		var err error
		v, err = fn(&state{State: tx.View(), core: tx, defaultTier: m.defaultTier})
		return err
	})
	return v, err
}
