package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// daemon is a phc daemon running as a child process on a data dir.
type daemon struct {
	bin, dir, password string

	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	started time.Time
	exited  chan struct{} // closed once the process has been waited for
	waitErr error
	log     *logTail
}

// startDaemon runs `bin serve --data dir --addr 127.0.0.1:PORT` on a free
// port with PHC_PASSWORD set, and returns at once; see waitReady.
func startDaemon(bin, dir, password string) (*daemon, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data", dir, "--addr", addr)
	cmd.Env = childEnv(password)
	d, err := startProcess(cmd, "http://"+addr)
	if err != nil {
		return nil, err
	}
	d.bin, d.dir, d.password = bin, dir, password
	return d, nil
}

// startProcess starts cmd, a server that will answer at base, as a child
// process whose standard output is discarded (the first start of a vault
// prints its secret key) and whose standard error is kept in its log's
// tail; it returns at once.
func startProcess(cmd *exec.Cmd, base string) (*daemon, error) {
	d := &daemon{base: base, cmd: cmd, exited: make(chan struct{}), log: &logTail{kdf: -1, load: -1}}
	d.cmd.Stdout = nil
	d.cmd.Stderr = d.log
	setParentDeathSignal(d.cmd)
	d.started = time.Now()
	d.log.start = d.started
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// childEnv is the bench's environment without any PHC_ variable of its
// own, plus the vault password of the run.
func childEnv(password string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PHC_") {
			env = append(env, kv)
		}
	}
	return append(env, "PHC_PASSWORD="+password)
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

// pid is the daemon's process id.
func (d *daemon) pid() int { return d.cmd.Process.Pid }

// waitReady polls ready every 2 ms until it reports true, the daemon exits,
// or ctx ends, and returns the time since the process was started.
func (d *daemon) waitReady(ctx context.Context, limit time.Duration, ready func() (bool, error)) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for {
		ok, err := ready()
		if ok {
			return time.Since(d.started), nil
		}
		select {
		case <-d.exited:
			return 0, fmt.Errorf("the daemon exited before it answered (%v)%s", d.waitErr, d.log.tail())
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the daemon did not answer within %v (last: %v)%s", limit, err, d.log.tail())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ownerToken reads the owner session the daemon wrote at unlock.
func (d *daemon) ownerToken() (string, error) {
	raw, err := os.ReadFile(filepath.Join(d.dir, "session"))
	if err != nil {
		return "", fmt.Errorf("no owner session in %s: %w", d.dir, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// stop sends SIGTERM and waits for the daemon to exit (SIGKILL after a
// minute). It returns how long the shutdown took.
func (d *daemon) stop() (time.Duration, error) {
	start := time.Now()
	select {
	case <-d.exited:
		return 0, d.exitError()
	default:
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return 0, fmt.Errorf("signal the daemon: %w", err)
	}
	select {
	case <-d.exited:
	case <-time.After(time.Minute):
		d.cmd.Process.Kill()
		<-d.exited
		return time.Since(start), fmt.Errorf("the daemon did not exit within a minute of SIGTERM; killed%s", d.log.tail())
	}
	return time.Since(start), d.exitError()
}

// kill ends the daemon without ceremony (cleanup after a failure).
func (d *daemon) kill() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
	}
}

func (d *daemon) exitError() error {
	if d.waitErr != nil {
		return fmt.Errorf("the daemon exited with %v%s", d.waitErr, d.log.tail())
	}
	return nil
}

// logTail keeps the last lines the daemon logged, and when it logged that
// it serves.
type logTail struct {
	mu      sync.Mutex
	start   time.Time
	partial []byte
	lines   []string
	serving time.Duration // since start; 0 until seen
	// kdf and load are what the daemon logged when it unlocked: its key
	// derivation and its load of the view (-1 until seen).
	kdf, load float64
}

// logMs returns the value of the field name=N in a log line, or -1.
func logMs(line, name string) float64 {
	_, rest, ok := strings.Cut(line, " "+name+"=")
	if !ok {
		return -1
	}
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	v, err := strconv.ParseFloat(rest, 64)
	if err != nil {
		return -1
	}
	return v
}

const tailLines = 20

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		if l.serving == 0 && strings.Contains(line, "phc serving") {
			l.serving = time.Since(l.start)
		}
		if strings.Contains(line, "vault unlocked") {
			l.kdf, l.load = logMs(line, "kdf_ms"), logMs(line, "load_ms")
		}
		l.lines = append(l.lines, line)
		if len(l.lines) > tailLines {
			l.lines = l.lines[len(l.lines)-tailLines:]
		}
	}
	if len(l.partial) > 64<<10 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

// unlockTimes is the daemon's logged key derivation and load, in ms (-1
// when it logged none).
func (l *logTail) unlockTimes() (kdf, load float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kdf, l.load
}

// servingAfter is when, after the start, the daemon logged "phc serving"
// (0 if it has not).
func (l *logTail) servingAfter() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.serving
}

// tail is the last lines of the log, to append to an error.
func (l *logTail) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return ""
	}
	return "; the daemon's last log lines:\n  " + strings.Join(l.lines, "\n  ")
}

// readyClient is the client of the readiness probes: short timeouts, since
// the daemon may not be listening yet.
func readyClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}}
}
