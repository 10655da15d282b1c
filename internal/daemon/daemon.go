// Package daemon wires a custodian from a vault's data directory: the
// encrypted store, the graph, the schema validator, the OIDC and DEC
// verifiers, the card codec, the password check and the session-file hooks
// go into one [custodian.Config], and [Core.Handler] puts the HTTP API, the
// MCP endpoint and its metadata in front of the service.
//
// It is the one place that does so. phc serve, the commands that open a
// stopped daemon's vault themselves, and the tests that run the daemon
// in-process (the conformance suite) all call [Open], so that what is
// tested is what runs. Only internal/cli and tests import it.
package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/atomicfile"
	"github.com/phc-project/phc/internal/bundle"
	"github.com/phc-project/phc/internal/httpapi"
	"github.com/phc-project/phc/internal/identity/oidctoken"
	"github.com/phc-project/phc/internal/mcpserver"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/internal/webui"
	"github.com/phc-project/phc/schema"
)

// Files of a data dir besides the vault's own.
const (
	StoreFile   = "phc.db"   // the encrypted store
	SessionFile = "session"  // the owner's session token while unlocked (not offline)
	GraphFile   = "graph.db" // the graph, a projection of the store
)

// Options say how to open a data dir.
type Options struct {
	Dir string
	// Log receives the daemon's log; nil discards.
	Log *slog.Logger
	// IdleLock is custodian.Config.IdleLock: 0 its default, < 0 never.
	IdleLock time.Duration
	// Offline is for a command that opens a stopped daemon's vault itself
	// and holds the session in memory: it writes no session file (and
	// removes none on lock).
	Offline bool
	// Clock is custodian.Config.Clock: nil for the system clock (tests
	// give a fake one).
	Clock custodian.Clock
	// LoadGC is custodian.Config.LoadGC: phc's runtime tuning around the
	// unlock's load (nil: none).
	LoadGC func(load func() error) error
}

// Core is an opened data dir and the service on it.
type Core struct {
	Svc   *custodian.Service
	Store *store.Bolt
	Graph *cayley.Graph
	Vault *vault.Vault
	dir   string
	log   *slog.Logger
	clock custodian.Clock
}

// Open opens the vault of o.Dir (which must exist), its store and graph,
// and builds the service on them, locked. An error from opening a store or
// graph that another process holds wraps [berrors.ErrTimeout].
func Open(o Options) (*Core, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v, err := vault.Open(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	st, err := store.OpenBolt(filepath.Join(o.Dir, StoreFile), v)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	validator, err := schema.New()
	if err != nil {
		st.Close()
		return nil, err
	}
	g, err := OpenGraph(o.Dir, log)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open graph: %w", err)
	}
	c := &Core{Store: st, Graph: g, Vault: v, dir: o.Dir, log: log, clock: o.Clock}
	c.Svc, err = custodian.New(c.config(o, validator))
	if err != nil {
		st.Close()
		g.Close()
		return nil, err
	}
	return c, nil
}

// config is the service's configuration: everything the daemon runs with.
func (c *Core) config(o Options, validator *schema.Validator) custodian.Config {
	dir := o.Dir
	cfg := custodian.Config{
		Store: c.Store, Graph: c.Graph, Vault: c.Vault, Schema: validator, Logger: c.log, IdleLock: o.IdleLock, Clock: o.Clock,
		OIDC:  oidctoken.New(nil, nil),
		DEC:   dec.Service{},
		Cards: bundle.Codec{},
		// What the view keeps of claims' content in memory; the rest is
		// read from the store when needed.
		ClaimCacheBytes: claimCacheBytes(),
		LoadGC:          o.LoadGC,
		// A second, throwaway vault checks a re-entered password without
		// touching the lock state of the daemon's own.
		VerifyPassword: func(pw []byte) error {
			check, err := vault.Open(dir)
			if err != nil {
				return err
			}
			sk, err := vault.ReadSecretKeyFile(dir)
			if err != nil {
				return err
			}
			defer check.Lock()
			return check.Unlock(pw, sk)
		},
	}
	// The Secret Key beside the vault lets the owner's unlock go ahead
	// of attempts without it (custodian.Config.SecretKeyHint).
	if sk, err := vault.ReadSecretKeyFile(dir); err == nil {
		cfg.SecretKeyHint = sk
	}
	if !o.Offline {
		sessionPath := filepath.Join(dir, SessionFile)
		cfg.OnUnlock = func(token string) error { return WriteFile0600(sessionPath, []byte(token+"\n")) }
		cfg.OnLock = func() { os.Remove(sessionPath) }
	}
	return cfg
}

// Handler is the daemon's HTTP face for the service: the HTTP API, the MCP
// endpoint at /mcp, its RFC 9728 metadata, and the owner's console at /ui, for a daemon reached at
// base (http://host:port).
func (c *Core) Handler(base string) http.Handler {
	api := httpapi.New(c.Svc, c.log)
	metadata := mcpserver.MetadataHandlerFor(base, httpapi.ResolvePath, c.Svc)
	api.Mount("/mcp", mcpserver.New(c.Svc, c.log).Handler(base+"/.well-known/oauth-protected-resource/mcp"))
	api.Mount("GET /.well-known/oauth-protected-resource", metadata)
	api.Mount("GET /.well-known/oauth-protected-resource/mcp", metadata)
	console := webui.New(c.Svc, c.log, c.clock)
	api.Mount(webui.Prefix, console)
	api.Mount("GET "+webui.Home, console)
	return api
}

// Close closes the service (locking the vault), the store and the graph.
func (c *Core) Close() error {
	err := c.Svc.Close()
	c.Vault.Lock()
	return errors.Join(err, c.Store.Close(), c.Graph.Close())
}

// OpenGraph opens the data dir's graph. The graph is a projection the
// custodian rebuilds from the store, so a file that cannot be opened (torn
// by a power loss, say) is moved aside — kept for inspection, never read
// again — and replaced by an empty one, which the unlock rebuilds. A file
// held by another process is an error (wrapping [berrors.ErrTimeout]), not
// damage.
func OpenGraph(dir string, log *slog.Logger) (*cayley.Graph, error) {
	path := filepath.Join(dir, GraphFile)
	g, err := cayley.Open(path)
	if err == nil || errors.Is(err, berrors.ErrTimeout) {
		return g, err
	}
	aside := fmt.Sprintf("%s.unreadable-%d", path, time.Now().Unix())
	if rerr := os.Rename(path, aside); rerr != nil {
		return nil, fmt.Errorf("open graph: %w (and cannot move it aside: %v)", err, rerr)
	}
	log.Warn("the graph file could not be opened; moved it aside, the unlock rebuilds it from the store", "err", err, "moved_to", aside)
	return cayley.Open(path)
}

// WriteFile0600 writes a state file atomically with mode 0600
// (atomicfile.Write).
func WriteFile0600(path string, data []byte) error { return atomicfile.Write(path, data) }

// ClaimCacheEnv names the environment variable that sets the claim cache's
// budget in MiB (custodian.Config.ClaimCacheBytes); unset or invalid, the
// default applies.
const ClaimCacheEnv = "PHC_CLAIM_CACHE_MIB"

func claimCacheBytes() int64 {
	n, err := strconv.ParseInt(os.Getenv(ClaimCacheEnv), 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return 0
	}
	return n << 20
}
