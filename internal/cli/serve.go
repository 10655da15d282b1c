package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/bundle"
	"github.com/phc-project/phc/internal/httpapi"
	"github.com/phc-project/phc/internal/identity/oidctoken"
	"github.com/phc-project/phc/internal/mcpserver"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/schema"
)

// Files of a data dir besides the vault's own.
const (
	storeFile   = "phc.db"
	sessionFile = "session"
	graphFile   = "graph.db"
	addrFile    = "addr"
)

const defaultAddr = "127.0.0.1:7200"

func runServe(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "serve", &c)
	idle := fs.Duration("idle-lock", 30*time.Minute, "lock the vault after this long without requests (0: never)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.addr == "" {
		c.addr = defaultAddr
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tuneGC()
	d, err := startDaemon(ctx, env, log, c.data, c.addr, *idle)
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down")
	return d.close()
}

// daemon is a running custodian: store, core and HTTP server.
type daemon struct {
	dir   string
	addr  string
	store *store.Bolt
	graph *cayley.Graph
	svc   *custodian.Service
	http  *http.Server
	done  chan error
}

// startDaemon opens (creating, if needed) the vault in dir, unlocks it when
// a password is available, and serves the HTTP API on addr, which must be
// a loopback address.
func startDaemon(ctx context.Context, env *Env, log *slog.Logger, dir, addr string, idle time.Duration) (*daemon, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	vault.HardenProcess()
	// One password serves both: creating the vault if there is none, and
	// unlocking it.
	var pw []byte
	if !vault.Exists(dir) {
		if err := checkNoRemnants(dir); err != nil {
			return nil, err
		}
		var err error
		if pw, err = password(env, true); err != nil {
			return nil, fmt.Errorf("no vault in %s, and cannot create one: %w", dir, err)
		}
		sk, err := vault.Create(dir, pw)
		if err != nil {
			return nil, fmt.Errorf("create vault: %w", err)
		}
		printKit(env.Stdout, dir, sk)
	}
	v, err := vault.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	st, err := store.OpenBolt(filepath.Join(dir, storeFile), v)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	validator, err := schema.New()
	if err != nil {
		st.Close()
		return nil, err
	}
	sessionPath := filepath.Join(dir, sessionFile)
	if idle == 0 {
		idle = -1
	}
	g, err := openGraph(dir, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc, err := custodian.New(custodian.Config{
		Store: st, Graph: g, Vault: v, Schema: validator, Logger: log, IdleLock: idle, Clock: env.Clock,
		OIDC:     oidctoken.New(nil, nil),
		DEC:      dec.Service{},
		Cards:    bundle.Codec{},
		OnUnlock: func(token string) error { return writeFile0600(sessionPath, []byte(token+"\n")) },
		OnLock:   func() { os.Remove(sessionPath) },
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
	})
	if err != nil {
		st.Close()
		g.Close()
		return nil, err
	}
	// The session and address of an earlier run (one killed, say) are void.
	os.Remove(sessionPath)
	os.Remove(filepath.Join(dir, addrFile))
	d := &daemon{dir: dir, store: st, graph: g, svc: svc, done: make(chan error, 1)}
	if pw == nil {
		pw, err = password(env, false)
	}
	if err == nil {
		sk, err := vault.ReadSecretKeyFile(dir)
		if err != nil {
			d.closeCore()
			return nil, fmt.Errorf("read secret key: %w", err)
		}
		if _, err := svc.Unlock(ctx, pw, sk); err != nil {
			d.closeCore()
			return nil, fmt.Errorf("unlock: %w", err)
		}
	} else if !errors.Is(err, errNoPassword) {
		d.closeCore()
		return nil, err
	} else {
		log.Info("no password available; starting locked (run phc unlock)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		d.closeCore()
		return nil, err
	}
	d.addr = ln.Addr().String()
	if err := writeFile0600(filepath.Join(dir, addrFile), []byte(d.addr+"\n")); err != nil {
		ln.Close()
		d.closeCore()
		return nil, err
	}
	api := httpapi.New(svc, log)
	base := "http://" + d.addr
	metadata := mcpserver.MetadataHandler(base)
	api.Mount("/mcp", mcpserver.New(svc, log).Handler(base+"/.well-known/oauth-protected-resource/mcp"))
	api.Mount("GET /.well-known/oauth-protected-resource", metadata)
	api.Mount("GET /.well-known/oauth-protected-resource/mcp", metadata)
	d.http = &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() { d.done <- d.http.Serve(ln) }()
	log.Info("phc serving", "addr", d.addr, "data", dir, "locked", svc.Locked())
	return d, nil
}

func (d *daemon) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.http.Shutdown(ctx)
	if e := <-d.done; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	os.Remove(filepath.Join(d.dir, addrFile))
	return errors.Join(err, d.closeCore())
}

func (d *daemon) closeCore() error {
	err := d.svc.Close()
	return errors.Join(err, d.store.Close(), d.graph.Close())
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("bad --addr: %v", err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return usageError("--addr must be a loopback address (the API is local only)")
	}
	return nil
}

// writeFile0600 writes a state file atomically with mode 0600.
func writeFile0600(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// checkNoRemnants refuses to create a vault in a data dir that already
// holds a store or a Secret Key: its vault.json is missing or unreadable,
// and a new vault would overwrite the Secret Key that unlocks the data.
func checkNoRemnants(dir string) error {
	for _, f := range []string{storeFile, storeFile + ".wal", "secret.key", "vault.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s already holds %s but no usable vault.json: refusing to create a new vault over it (restore vault.json)", dir, f)
		}
	}
	return nil
}
