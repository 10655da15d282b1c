// Package daemontest helps tests that run phc as a process: [BuildPHC]
// builds it, and [ServingLog] lets a test wait for phc serve without a
// clock, watching its log for the line it writes once it serves. Only
// tests import it.
package daemontest

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// servingMsg is in the line phc serve logs once it has written its addr
// file (and its session file, if it unlocked).
var servingMsg = []byte(`msg="phc serving"`)

// ServingLog is the standard error of a phc serve that a test runs: it
// passes what the daemon writes on to its writer, and closes Serving when
// the daemon logs that it serves. A test waits on Serving, not on a clock.
type ServingLog struct {
	// Serving is closed once the daemon has logged that it serves.
	Serving chan struct{}

	mu     sync.Mutex
	w      io.Writer
	line   []byte // the unfinished line, until Serving closes
	closed bool
}

// NewServingLog returns a ServingLog that passes what it is written on to w.
func NewServingLog(w io.Writer) *ServingLog {
	return &ServingLog{Serving: make(chan struct{}), w: w}
}

// Write passes p on, and closes Serving at the serving line.
func (s *ServingLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.line = append(s.line, p...)
		for {
			i := bytes.IndexByte(s.line, '\n')
			if i < 0 {
				break
			}
			if bytes.Contains(s.line[:i], servingMsg) {
				close(s.Serving)
				s.closed, s.line = true, nil
				break
			}
			s.line = s.line[i+1:]
		}
	}
	return s.w.Write(p)
}

// BuildPHC builds the phc binary into a temporary directory of t and
// returns its path; without a go tool on the PATH, t is skipped.
func BuildPHC(t testing.TB) string {
	t.Helper()
	// go test puts its own go first in PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "phc")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/phc-project/phc/cmd/phc")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
