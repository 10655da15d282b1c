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
	"syscall"
	"time"

	"github.com/phc-project/phc/internal/daemon"
	"github.com/phc-project/phc/internal/vault"
)

// Files of a data dir besides the vault's own.
const (
	storeFile   = daemon.StoreFile
	sessionFile = daemon.SessionFile
	graphFile   = daemon.GraphFile
	addrFile    = "addr"
)

const defaultAddr = "127.0.0.1:7200"

func runServe(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "serve", &c)
	fs.Lookup("addr").Usage = "the loopback address to listen on (host:port; default: $PHC_ADDR, else " + defaultAddr + ")"
	idle := durationFlag(fs, "idle-lock", 30*time.Minute, "lock the vault after this `duration` without requests (0: never)")
	skFile := fs.String("secret-key-file", "", "file holding the Secret Key (default: $PHC_SECRET_KEY, else DIR/secret.key, else a prompt)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.addr == "" {
		c.addr = env.Getenv("PHC_ADDR")
	}
	if c.addr == "" {
		c.addr = defaultAddr
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tuneGC()
	d, err := startDaemon(ctx, env, log, c.data, c.addr, *idle, *skFile)
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down")
	return d.close()
}

// daemonRun is a running custodian: its core (store, graph, service) and
// HTTP server.
type daemonRun struct {
	dir  string
	addr string
	core *daemon.Core
	http *http.Server
	done chan error
}

// startDaemon opens (creating, if needed) the vault in dir, unlocks it when
// a password is available (with the Secret Key of findSecretKey and
// skFile), and serves the HTTP API on addr, which must be a loopback
// address.
func startDaemon(ctx context.Context, env *Env, log *slog.Logger, dir, addr string, idle time.Duration, skFile string) (*daemonRun, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	// The address first: a clash is reported before any password is asked
	// for or a vault created.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError(addr, err)
	}
	d, err := openDaemon(ctx, env, log, dir, ln, idle, skFile)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return d, nil
}

// listenError says in words why the daemon cannot listen on addr.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("cannot listen on %s: the address is already in use — another phc serve (phc status --addr %s tells) or another program holds it; stop it, or choose another port with --addr 127.0.0.1:PORT", addr, addr)
	}
	return fmt.Errorf("cannot listen on %s: %w", addr, err)
}

func openDaemon(ctx context.Context, env *Env, log *slog.Logger, dir string, ln net.Listener, idle time.Duration, skFile string) (*daemonRun, error) {
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
	if idle == 0 {
		idle = -1
	}
	core, err := daemon.Open(daemon.Options{Dir: dir, Log: log, IdleLock: idle, Clock: env.Clock, LoadGC: holdGC})
	if err != nil {
		return nil, err
	}
	svc := core.Svc
	// The session and address of an earlier run (one killed, say) are void.
	os.Remove(filepath.Join(dir, sessionFile))
	os.Remove(filepath.Join(dir, addrFile))
	d := &daemonRun{dir: dir, core: core, done: make(chan error, 1)}
	if pw == nil {
		pw, err = password(env, false)
	}
	if err == nil {
		sk, err := findSecretKey(env, dir, skFile)
		if err != nil {
			d.closeCore()
			return nil, err
		}
		if _, err := svc.Unlock(ctx, pw, sk.text); err != nil {
			d.closeCore()
			return nil, fmt.Errorf("unlock: %w", err)
		}
		offerToStore(env, dir, sk)
	} else if !errors.Is(err, errNoPassword) {
		d.closeCore()
		return nil, err
	} else {
		log.Info("no password available; starting locked (run phc unlock)")
	}
	d.addr = ln.Addr().String()
	if err := writeFile0600(filepath.Join(dir, addrFile), []byte(d.addr+"\n")); err != nil {
		d.closeCore()
		return nil, err
	}
	d.http = &http.Server{
		Handler:           core.Handler("http://" + d.addr),
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

func (d *daemonRun) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.http.Shutdown(ctx)
	if e := <-d.done; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	os.Remove(filepath.Join(d.dir, addrFile))
	return errors.Join(err, d.closeCore())
}

func (d *daemonRun) closeCore() error { return d.core.Close() }

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

// writeFile0600 writes a state file atomically with mode 0600.
func writeFile0600(path string, data []byte) error { return daemon.WriteFile0600(path, data) }
