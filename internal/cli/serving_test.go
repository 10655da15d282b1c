package cli

import (
	"bytes"
	"io"
	"sync"
)

// servingLog is the standard error of a phc serve that a test runs: it
// passes what the daemon writes on to w, and closes serving when the
// daemon logs that it serves, which it does once it has written its addr
// file (and its session file, if it unlocked). A test waits on serving,
// not on a clock.
type servingLog struct {
	serving chan struct{}

	mu     sync.Mutex
	w      io.Writer
	line   []byte // the unfinished line, until serving closes
	closed bool
}

func newServingLog(w io.Writer) *servingLog {
	return &servingLog{serving: make(chan struct{}), w: w}
}

func (s *servingLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.line = append(s.line, p...)
		for {
			i := bytes.IndexByte(s.line, '\n')
			if i < 0 {
				break
			}
			if bytes.Contains(s.line[:i], []byte(`msg="phc serving"`)) {
				close(s.serving)
				s.closed, s.line = true, nil
				break
			}
			s.line = s.line[i+1:]
		}
	}
	return s.w.Write(p)
}
