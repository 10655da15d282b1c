package custodian

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/limits"
	"github.com/phc-project/phc/custodian/internal/migration"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/schema"
)

// Vault holds the key hierarchy. Unlock fails with vault.ErrBadCredentials
// for a wrong password or Secret Key, vault.ErrMalformedSecretKey for a
// Secret Key not in the format, and vault.ErrAlreadyUnlocked. Lock zeroises
// every key and is idempotent. The Store's cipher is normally the same vault,
// so a locked vault makes the store unreadable.
type Vault interface {
	Unlock(password []byte, secretKey string) error
	Lock()
	Locked() bool
}

// Config wires a Service. Store, Graph, Vault and Schema are required.
type Config struct {
	Store  Store
	Vault  Vault
	Schema *schema.Validator
	Logger *slog.Logger // nil: discard
	// Graph is the knowledge graph the store is projected into (required;
	// graph/cayley implements it). One kept in memory is rebuilt from the
	// store at every unlock. The core never reads a name or a value from
	// it: it holds opaque ids, and every decision about what a caller may
	// see is taken on the in-memory view. [Service.Close] does not close it.
	Graph graph.Graph
	Clock Clock // nil: the system clock

	// IdleLock locks the vault after this long without an authenticated
	// request: 0 means the default of 30 minutes, negative means never.
	IdleLock time.Duration

	// OnUnlock, if set, receives each new owner session token (the daemon
	// writes it to DIR/session for the CLI). An error fails the unlock.
	OnUnlock func(token string) error
	// OnLock, if set, is called after every lock.
	OnLock func()

	// VerifyPassword, if set, checks the owner's password (re-entered to
	// approve a request for critical data) without changing the lock
	// state. Without it such requests cannot be approved.
	VerifyPassword func(password []byte) error
	// SecretKeyHint, if set, is the Secret Key found beside the vault
	// (DIR/secret.key): before the first unlock, an attempt offering it
	// goes ahead of those that do not (limits.Unlock); it never refuses one.
	SecretKeyHint string

	// OIDC verifies the ID tokens of trusted issuers for token exchange;
	// nil refuses every exchange.
	OIDC IDTokenVerifier
	// DEC verifies DEC documents and evaluates admission policies; nil
	// refuses the DEC operations.
	DEC DECVerifier
	// ClaimCacheBytes bounds the claims' content the view keeps in memory
	// (0: DefaultClaimCacheBytes); the rest is read from the store when a
	// read or write needs it.
	ClaimCacheBytes int64
	// LoadGC runs the unlock's load of the view. The daemon holds the
	// collector off around it (collecting while the view grows mostly
	// traces what is being built); nil runs the load as it is. It must
	// run load exactly once (the unlock fails otherwise), holding nothing
	// of the Service's: the unlock holds the lock state meanwhile.
	LoadGC func(load func() error) error
	// Cards makes the vault's card keys and reads other custodians'
	// cards (internal/bundle); nil: this custodian has no card.
	Cards CardCodec

	test testHooks // set by tests only (export_test.go)
}

const (
	defaultIdleLock     = 30 * time.Minute
	unlockFailureLimit  = 5
	unlockFailureWindow = time.Minute
	mintFailureLimit    = 10 // wrong secrets per source and consumer name a minute; ten times that per source
	// exchangeFailureLimit is how many ID tokens one connection may have
	// refused a minute; exchangeFailureKeys bounds how many are remembered.
	exchangeFailureLimit = 10
	exchangeFailureKeys  = 4096
)

// Service is the custodian core. It is safe for concurrent use.
type Service struct {
	eng      *engine.Engine // the storage engine: journal, graph worker, snapshot writer
	vault    Vault
	schema   *schema.Validator
	idle     time.Duration
	onUnlock func(string) error
	onLock   func()

	verifyPassword func([]byte) error
	oidc           IDTokenVerifier
	dec            DECVerifier
	cards          CardCodec
	cacheBytes     int64
	loadGC         func(load func() error) error
	test           testHooks

	// idleLooks counts the idle watcher's looks at an unlocked vault.
	idleLooks atomic.Uint64
	// ignoreSnapshot makes the unlock read every claim meta (tests
	// compare).
	ignoreSnapshot atomic.Bool

	// unlockRolls tracks the receipt roll each Unlock starts, so that tests
	// can wait for it.
	unlockRolls sync.WaitGroup

	// life guards the lock state: every operation holds it shared while it
	// runs (including its wait for the journal); Lock and Unlock hold it
	// exclusively. st is nil while locked.
	life     sync.RWMutex
	st       *state
	sessions map[[32]byte]struct{} // owner session token hashes, cleared on lock
	closed   bool

	unlocks          *limits.Unlock  // wrong unlock attempts, per source, the Secret Key's first
	reentryFailures  *failures       // wrong passwords re-entered in a session (critical approvals, imports)
	secrets          *limits.Secrets // wrong consumer secrets, per source
	exchangeFailures *failures       // ID tokens refused at token exchange, per connection
	kdf              chan struct{}   // bounds concurrent Argon2id hashing of consumer secrets
	rates            buckets         // service tokens' request rates

	lastActive atomic.Int64 // unix nanoseconds of the last authenticated request
	unlocked   atomic.Bool  // mirrors st != nil for lock-free status

	// graphSem lets one check, graph rebuild or graph export at a time
	// use the graph: a rebuild or an export waits in the journal for the
	// graph, which a check holds outside it.
	graphSem chan struct{}

	mig *migration.Migration // bundles, archives, the quarantine
}

// New returns a Service over cfg. The vault starts as it is (normally
// locked); call [Service.Unlock]. Close stops its goroutines.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Graph == nil || cfg.Vault == nil || cfg.Schema == nil {
		return nil, errors.New("custodian: Store, Graph, Vault and Schema are required")
	}
	s := &Service{
		vault:            cfg.Vault,
		schema:           cfg.Schema,
		idle:             cfg.IdleLock,
		onUnlock:         cfg.OnUnlock,
		onLock:           cfg.OnLock,
		verifyPassword:   cfg.VerifyPassword,
		oidc:             cfg.OIDC,
		dec:              cfg.DEC,
		cards:            cfg.Cards,
		cacheBytes:       cfg.ClaimCacheBytes,
		loadGC:           cfg.LoadGC,
		test:             cfg.test,
		sessions:         make(map[[32]byte]struct{}),
		unlocks:          limits.NewUnlock(unlockFailureLimit, unlockFailureWindow, vault.SecretKeyDigest, cfg.SecretKeyHint),
		reentryFailures:  limits.NewFailures(unlockFailureLimit, unlockFailureWindow),
		secrets:          limits.NewSecrets(mintFailureLimit, time.Minute),
		exchangeFailures: limits.NewFailuresCap(exchangeFailureLimit, time.Minute, exchangeFailureKeys),
		kdf:              make(chan struct{}, runtime.NumCPU()),
		graphSem:         make(chan struct{}, 1),
	}
	if s.idle == 0 {
		s.idle = defaultIdleLock
	}
	keys, _ := cfg.Vault.(KeyDeriver)
	s.eng = engine.New(engine.Config{Store: cfg.Store, Graph: cfg.Graph, Log: cfg.Logger, Clock: cfg.Clock, Hooks: s.test.Hooks,
		Keys: keys, Broken: s.lockBroken, WithView: s.withView})
	s.mig = s.newMigration(cfg)
	s.eng.Start()
	if s.idle > 0 {
		s.eng.Wg.Add(1)
		go s.idleWatch()
	}
	return s, nil
}

// Close locks the vault and stops the Service's goroutines. It does not
// close the Store or the Graph.
func (s *Service) Close() error {
	s.lockLife(nil)
	if s.closed {
		s.life.Unlock()
		return nil
	}
	s.closed = true
	s.lockLocked()
	s.life.Unlock()
	close(s.eng.Stop)
	s.eng.Wg.Wait()
	return nil
}

// Status reports whether the vault is locked. The counts are filled in only
// for the owner's session of an unlocked vault.
func (s *Service) Status(ctx context.Context, p Principal) Status {
	// A sealed principal (a token taken unchecked while the vault was
	// locked) stays locked out until its session is opened again.
	st := Status{Initialized: true, Locked: !s.unlocked.Load() || p.Kind() == PrincipalSealed}
	if !p.IsOwner() || st.Locked {
		return st
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		st.Locked = true
		return st
	}
	type counts struct {
		n    int
		cats map[string]int
		rev  uint64
	}
	c, err := readSettled("status", s.st, func() (counts, error) {
		n, cats := s.st.FieldStats()
		return counts{n, cats, s.st.Revision}, nil
	})
	if err != nil {
		// The view is broken and about to lock: show no counts.
		return st
	}
	st.FieldCount, st.Categories, st.Revision = &c.n, c.cats, c.rev
	return st
}

// Unlock derives the keys, loads the vault and returns a new owner session
// token. Failed attempts are limited per source (the peer of [WithPeer]),
// five a minute, and a Secret Key that is not the vault's is refused
// without deriving keys once an unlock has proved the right one: nobody's
// failures refuse the owner (limits.Unlock says how).
func (s *Service) Unlock(ctx context.Context, password []byte, secretKey string) (string, error) {
	const op = "unlock"
	if s.unlocked.Load() {
		return "", model.Fail(op, KindConflict, "the vault is already unlocked")
	}
	try, derive, wait := s.unlocks.Begin(limits.SourceOf(ctx), secretKey, s.eng.Clock.Now())
	if wait > 0 {
		return "", &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
	} else if !derive {
		return "", &Error{Op: op, Kind: KindUnauthenticated, Public: "wrong password or Secret Key"}
	}
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return "", model.Fail(op, KindLocked, "")
	}
	if s.st != nil {
		return "", model.Fail(op, KindConflict, "the vault is already unlocked")
	}
	started := time.Now() // durations for the log, not the clock's time
	if err := s.vault.Unlock(password, secretKey); err != nil {
		switch {
		case errors.Is(err, vault.ErrBadCredentials), errors.Is(err, vault.ErrMalformedSecretKey):
			try.Failed(s.eng.Clock.Now())
			return "", &Error{Op: op, Kind: KindUnauthenticated, Public: "wrong password or Secret Key"}
		case errors.Is(err, vault.ErrAlreadyUnlocked):
			return "", model.Fail(op, KindConflict, "the vault is already unlocked")
		}
		return "", model.Wrap(op, KindInternal, err)
	}
	try.Succeeded()
	derived := time.Now()
	st, err := loadState(s.eng.Store, s.cacheBytes, s.ignoreSnapshot.Load(), s.loadGC)
	if err == nil {
		st.Graph, st.adm, st.Dur = s.eng.Graph, admission.NewCache(s.dec), engine.NewDurability(s.test.Event)
		err = engine.Guarded(func() error { return s.eng.SyncGraph(st.view) })
	}
	if err != nil {
		s.vault.Lock()
		return "", model.Wrap(op, KindInternal, err)
	}
	token, err := identity.NewToken(identity.OwnerPrefix)
	if err != nil {
		s.vault.Lock()
		return "", model.Wrap(op, KindInternal, err)
	}
	s.st = st
	s.unlocked.Store(true)
	s.sessions[identity.HashToken(token)] = struct{}{}
	s.touch()
	if err := s.commit(st, func(st *state, b *batch) error {
		if err := s.ensureKeys(st, b); err != nil {
			return err
		}
		b.Writes = append(b.Writes, st.Upgrades...)
		st.Upgrades = nil
		b.Receipt(Receipt{Actor: "owner", Operation: "vault.unlock", Decision: "allow"})
		return nil
	}); err != nil {
		s.lockLocked()
		return "", err
	}
	if s.onUnlock != nil {
		if err := s.onUnlock(token); err != nil {
			s.lockLocked()
			return "", model.Wrap(op, KindInternal, err)
		}
	}
	for _, n := range st.LoadNotes {
		s.eng.Log.Warn(n)
	}
	st.LoadNotes = nil
	// How long the key derivation and the load took (phc bench reads them).
	s.eng.Log.Info("vault unlocked", "revision", st.Revision, "claims", len(st.Claims),
		"snapshot", st.Snap.Info.Gen != 0, "written_since_snapshot", st.Snap.Pending(),
		"kdf_ms", derived.Sub(started).Milliseconds(), "load_ms", time.Since(derived).Milliseconds())
	// The key derivation's 64 MiB and the load's decoding are garbage now:
	// give the memory back rather than keep it until the heap grows again.
	go debug.FreeOSMemory()
	s.unlockRolls.Go(s.eng.RollAll)
	return token, nil
}

// Lock zeroises the keys, drops the in-memory view and ends every owner
// session. Only the owner may lock over the API; the idle timer and a failed
// commit lock too.
func (s *Service) Lock(ctx context.Context, p Principal) error {
	if !p.IsOwner() {
		return model.Fail("lock", KindSessionRequired, "")
	}
	s.lockLife(nil)
	defer s.life.Unlock()
	if s.st == nil {
		return nil
	}
	_ = s.commit(s.st, func(st *state, b *batch) error {
		b.Receipt(Receipt{Actor: "owner", Operation: "vault.lock", Decision: "allow"})
		return nil
	})
	s.lockLocked()
	return nil
}

// lockLife takes life exclusively for a lock or a stop of st (nil:
// whatever state is open). First it breaks every hold of the graph taken
// in st (see engine.HoldGraph), and any asked for until it has life: a check
// comparing the graph gives up, rather than keep the lock (and every
// request behind it, such as a traversal waiting for the graph with life
// shared) waiting for as long as the comparison takes.
func (s *Service) lockLife(st *view) { s.eng.Locking(st, s.life.Lock) }

// lockLocked locks with s.life held exclusively.
func (s *Service) lockLocked() {
	wasOpen := s.st != nil
	if wasOpen && s.st.Refusals.Pending() { // the counts of refusals (engine.Batch.Refuse)
		_ = s.commit(s.st, func(_ *state, b *batch) error { b.FlushRefusals(); return nil })
	}
	if wasOpen {
		// The graph follows the store: let it catch up, so that the next
		// unlock finds it where the outbox says.
		s.st.Lag.Wait()
	}
	s.vault.Lock()
	s.st = nil
	s.unlocked.Store(false)
	clear(s.sessions)
	if wasOpen {
		s.eng.Log.Info("vault locked")
		if s.onLock != nil {
			s.onLock()
		}
	}
	s.test.Fire()
}

// Locked reports whether the vault is locked.
func (s *Service) Locked() bool { return !s.unlocked.Load() }

func (s *Service) touch() { s.lastActive.Store(s.eng.Clock.Now().UnixNano()) }

func (s *Service) idleWatch() {
	defer s.eng.Wg.Done()
	every := min(s.idle/10, 30*time.Second)
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	// The time first, then the last request: one that comes in between
	// makes the vault look less idle, never more.
	idle := func() bool {
		now := s.eng.Clock.Now()
		return now.Sub(time.Unix(0, s.lastActive.Load())) >= s.idle
	}
	for {
		select {
		case <-s.eng.Stop:
			return
		case <-t.C:
			if !s.unlocked.Load() {
				continue
			}
			if idle() {
				s.lockLife(nil)
				if s.st != nil && idle() { // again: a request may have come meanwhile
					s.lockLocked()
					s.eng.Log.Info("vault locked after idle", "idle", s.idle)
				}
				s.life.Unlock()
			}
			s.idleLooks.Add(1)
			s.test.Fire()
		}
	}
}

// Authenticate resolves a bearer credential: an owner session token (ctx_)
// or a consumer's service token (ctxs_). Anything else, an expired or a
// revoked token, is KindUnauthenticated; a locked vault is KindLocked.
func (s *Service) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	const op = "authenticate"
	s.life.RLock()
	defer s.life.RUnlock()
	if s.st == nil {
		return Principal{}, model.Fail(op, KindLocked, "")
	}
	switch {
	case identity.LooksLikeToken(bearer, identity.OwnerPrefix):
		h := identity.HashToken(bearer)
		if _, ok := s.sessions[h]; ok {
			s.touch()
			return model.OwnerPrincipal(h), nil
		}
	case identity.LooksLikeToken(bearer, identity.ServicePrefix):
		st := s.st
		st.Mu.RLock()
		defer st.Mu.RUnlock()
		h := identity.HashToken(bearer)
		if t, ok := st.Tokens[h]; ok && t.RevokedAt == nil && s.eng.Clock.Now().Before(t.ExpiresAt) {
			p := model.ConsumerPrincipal(t.Consumer, t, tokenBinding(bearer))
			if st.live(p, s.eng.Clock.Now()) {
				s.touch()
				return p, nil
			}
		}
	}
	return Principal{}, model.Fail(op, KindUnauthenticated, "")
}

// enter starts an operation of p: it holds the lock state shared until
// release is called. It fails with KindLocked while locked, and with
// KindUnauthenticated for an owner principal whose session has ended.
func (s *Service) enter(op string, p Principal) (st *state, release func(), err error) {
	s.life.RLock()
	if s.st == nil || p.Kind() == PrincipalSealed {
		s.life.RUnlock()
		return nil, nil, model.Fail(op, KindLocked, "")
	}
	if p.Kind() == PrincipalOwner {
		if _, ok := s.sessions[p.Session()]; !ok {
			s.life.RUnlock()
			return nil, nil, model.Fail(op, KindUnauthenticated, "")
		}
	}
	return s.st, s.life.RUnlock, nil
}
