//go:build slow

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/cli"
	"github.com/phc-project/phc/internal/daemon/daemontest"
)

// movedClock is the system clock moved on by the test.
type movedClock struct{ by atomic.Int64 }

func (c *movedClock) Now() time.Time { return time.Now().UTC().Add(time.Duration(c.by.Load())) }

// serveInProcess runs phc serve on dir in this process with clock, so the
// test can move the daemon's time, and waits until it logs that it
// serves. It stops when the test ends.
func serveInProcess(t *testing.T, dir string, clock *movedClock) *phcProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	log := daemontest.NewServingLog(io.Discard)
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: log,
		Getenv: func(k string) string {
			if k == "PHC_PASSWORD" {
				return daemonPassword
			}
			return ""
		},
		IsTerminal:   func() bool { return false },
		ReadPassword: func(string) ([]byte, error) { return nil, errors.New("no terminal") },
		Clock:        clock,
	}
	go func() {
		done <- cli.Run(ctx, env, []string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--idle-lock", "0"})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case code := <-done:
		done <- code // for the cleanup
		t.Fatalf("phc serve in process exited: %d", code)
	case <-log.Serving:
	}
	addr, err := os.ReadFile(filepath.Join(dir, "addr"))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := os.ReadFile(filepath.Join(dir, "session"))
	if err != nil {
		t.Fatal(err)
	}
	return &phcProcess{base: "http://" + strings.TrimSpace(string(addr)), owner: strings.TrimSpace(string(owner))}
}

// TestMCPTypeScriptClientSurvives drives the official TypeScript client
// through a lock and an unlock, a 2 MB argument and the token's expiry,
// over streamable HTTP and over the built phc mcp: the same session goes
// on through the first two; after expiry phc mcp answers unauthenticated
// (over HTTP the daemon refuses the token, 401, as MCP's authorization
// asks).
func TestMCPTypeScriptClientSurvives(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped in -short mode")
	}
	node := tsClient(t)
	bin := daemontest.BuildPHC(t)
	client := &http.Client{Timeout: time.Minute}
	for _, face := range []string{"http", "stdio"} {
		t.Run(face, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			clock := &movedClock{}
			d := serveInProcess(t, dir, clock)
			d.must(t, client, 200, "PUT", "/phc/v1/settings", d.owner, map[string]any{"auto_grant": "standard"}, nil)
			d.must(t, client, 201, "POST", "/phc/v1/consumers", d.owner, map[string]string{"name": "app", "secret": "secret-of-app-0123456789"}, nil)
			var tok struct {
				Token string `json:"token"`
			}
			d.must(t, client, 201, "POST", "/context/tokens/service", "", map[string]any{"consumer": "app",
				"secret": "secret-of-app-0123456789", "scope": "learning.*", "mode": "read-write", "ttl": 3600}, &tok)
			d.must(t, client, 200, "PUT", "/context/fields/learning.level", d.owner, map[string]any{"value": "B1"}, nil)

			get := map[string]any{"name": "context_get", "arguments": map[string]any{"id": "learning.level"}}
			status := map[string]any{"name": "context_status", "arguments": map[string]any{}}
			calls := []map[string]any{
				get,
				{"wait": "lock"}, get, status,
				{"wait": "unlock"}, get,
				{"name": "memory_propose", "arguments": map[string]any{"key": "learning.note", "value": strings.Repeat("x", 2<<20), "kind": "note", "assertion": "reported"}},
				status,
				{"wait": "expire"}, get, status,
			}
			raw, _ := json.Marshal(calls)
			callsFile := filepath.Join(t.TempDir(), "calls.json")
			if err := os.WriteFile(callsFile, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			var cmd *exec.Cmd
			if face == "http" {
				cmd = exec.Command(node, "client.mjs", "http", d.base+"/mcp", tok.Token, callsFile)
			} else {
				cmd = exec.Command(node, "client.mjs", "stdio", bin, "mcp", "--data", dir, "--", callsFile)
			}
			cmd.Dir = tsClientDir
			cmd.Env = append(os.Environ(), "PHC_TOKEN="+tok.Token, "ONLY_CALLS=1")
			stdin, _ := cmd.StdinPipe()
			stderr, _ := cmd.StderrPipe()
			var stdout strings.Builder
			cmd.Stdout = &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var said strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				line := sc.Text()
				label, ok := strings.CutPrefix(line, "WAIT ")
				if !ok {
					said.WriteString(line + "\n")
					continue
				}
				switch label {
				case "lock":
					d.must(t, client, 200, "POST", "/context/lock", d.owner, nil, nil)
				case "unlock":
					sk, err := os.ReadFile(filepath.Join(dir, "secret.key"))
					if err != nil {
						t.Fatal(err)
					}
					var s struct{ Token string }
					d.must(t, client, 200, "POST", "/context/unlock", "", map[string]string{"password": daemonPassword, "secret_key": strings.TrimSpace(string(sk))}, &s)
					d.owner = s.Token
				case "expire":
					clock.by.Add(int64(2 * time.Hour))
				}
				io.WriteString(stdin, "go\n")
			}
			err := cmd.Wait()
			var run tsRun
			if jerr := json.Unmarshal([]byte(stdout.String()), &run); jerr != nil || err != nil || run.Error != "" || len(run.Calls) != 8 {
				t.Fatalf("the TypeScript client failed: %v %v\n%s\n%s", err, jerr, stdout.String(), said.String())
			}
			constraint := func(i int) any { return run.Calls[i].Structured["constraint"] }
			if c := run.Calls[0]; c.IsError || c.Structured["value"] != "B1" {
				t.Errorf("context_get = %+v", c)
			}
			if constraint(1) != "vault_locked" || run.Calls[2].Structured["locked"] != true {
				t.Errorf("while locked: %+v, %+v; want vault_locked and locked: true", run.Calls[1], run.Calls[2])
			}
			if c := run.Calls[3]; c.IsError || c.Structured["value"] != "B1" {
				t.Errorf("context_get after unlock, same session = %+v", c)
			}
			if constraint(4) != "too_large" || run.Calls[5].IsError {
				t.Errorf("a 2 MB argument = %+v, then %+v; want too_large and the session going on", run.Calls[4], run.Calls[5])
			}
			for _, c := range run.Calls[6:] {
				if face == "stdio" && (c.Thrown != "" || c.Structured["constraint"] != "unauthenticated") {
					t.Errorf("after expiry over stdio: %+v; want unauthenticated", c)
				}
				if face == "http" && c.Thrown == "" && c.Structured["constraint"] != "unauthenticated" {
					t.Errorf("after expiry over HTTP: %+v", c)
				}
			}
			if face == "stdio" && !strings.Contains(said.String(), "expired") {
				t.Errorf("phc mcp said %q on stderr; want that the token expired", said.String())
			}
		})
	}
}
