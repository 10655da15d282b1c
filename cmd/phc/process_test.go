package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// The harness of the tests that run the built phc as a separate process.

// daemonPassword is the password of the vaults these tests make.
const daemonPassword = "crash test password, not a real one"

// phcProcess is a daemon running as a child process.
type phcProcess struct {
	cmd     *exec.Cmd
	logPath string
	base    string
	owner   string
	exited  chan struct{}
	waitErr error
}

// startPHC runs `phc serve` on dir with PHC_PASSWORD set and waits until it
// logs that it serves, which it does once it has written DIR/session (at
// unlock) and then DIR/addr. The child is killed in t.Cleanup whatever
// happens.
func startPHC(t *testing.T, bin, dir, name string) *phcProcess {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--idle-lock", "0")
	cmd.Env = append(os.Environ(), "PHC_PASSWORD="+daemonPassword)
	cmd.Stdout = logFile
	log := daemontest.NewServingLog(logFile)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start phc serve: %v", err)
	}
	p := &phcProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait() // after the copying of standard error ends
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill(t) })

	select {
	case <-p.exited:
		t.Fatalf("phc serve (%s) exited before serving: %v\n%s", name, p.waitErr, p.log())
	case <-log.Serving:
	}
	// A killed daemon leaves its addr and session files behind, but a
	// starting one removes them before it writes its own: these are this
	// run's.
	addr, err := os.ReadFile(filepath.Join(dir, "addr"))
	if err != nil {
		t.Fatalf("phc serve (%s) is serving but wrote no addr: %v\n%s", name, err, p.log())
	}
	session, err := os.ReadFile(filepath.Join(dir, "session"))
	if err != nil {
		t.Fatalf("phc serve (%s) is serving but wrote no session: %v\n%s", name, err, p.log())
	}
	p.owner = strings.TrimSpace(string(session))
	p.base = "http://" + strings.TrimSpace(string(addr))
	return p
}

// kill sends SIGKILL (kill -9) and reaps the process. It is idempotent.
func (p *phcProcess) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill phc: %v", err)
	}
	<-p.exited
}

func (p *phcProcess) log() string {
	raw, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	// The log holds the emergency kit of a throwaway vault; it is only
	// shown when the test fails.
	return string(raw)
}

// must sends a request that must answer want and decodes the body into out.
func (p *phcProcess) must(t *testing.T, client *http.Client, want int, method, path, token string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s; want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %.200s: %v", method, path, raw, err)
		}
	}
}
