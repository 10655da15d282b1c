package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/client"
)

// newClient finds the daemon (--addr, else PHC_ADDR, else DIR/addr, else
// the default) and, when session is set, reads the owner session token from
// DIR/session. The client sends the session only to the daemon of the data
// dir it came from (see refusedSession).
func newClient(env *Env, c common, session bool) (*client.Client, error) {
	addr, from := c.addr, "--addr"
	if addr == "" {
		addr, from = env.Getenv("PHC_ADDR"), "PHC_ADDR"
	}
	if addr == "" {
		from = ""
		if raw, err := os.ReadFile(filepath.Join(c.data, addrFile)); err == nil {
			addr = strings.TrimSpace(string(raw))
		}
	}
	if addr == "" {
		addr = defaultAddr
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	cl := client.New("http://" + addr)
	// The owner session goes only to the daemon of the data dir it came
	// from: never to another server PHC_ADDR or --addr names.
	cl.CheckToken = func() error { return refusedSession(from, c.data, addr) }
	if session {
		raw, err := os.ReadFile(filepath.Join(c.data, sessionFile))
		if err != nil {
			return nil, fmt.Errorf("no owner session in %s (is the daemon running and unlocked? try phc unlock)", c.data)
		}
		cl.Token = strings.TrimSpace(string(raw))
	}
	return cl, nil
}

// refusedSession says why the owner session of the data dir dir is not
// sent to the daemon at addr when from (--addr or PHC_ADDR; "" for the
// data dir's addr file or the default) chose a daemon other than that data
// dir's own: the session belongs to the daemon whose address the data dir
// records, no other daemon knows it, and another server must never receive
// it. It returns nil when the two agree (a stale session, which the
// daemon's own answer explains).
func refusedSession(from, dir, addr string) error {
	if from == "" {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, addrFile))
	if err != nil {
		return fmt.Errorf("%s names the daemon at %s, which does not know the owner session of the data dir %s (PHC_HOME or --data); no daemon of %s is running (it has no addr file): point PHC_HOME (or --data) at the data dir of the daemon at %s, or unset %s and start the daemon of %s with phc serve",
			from, addr, printable(dir), printable(dir), addr, from, printable(dir))
	}
	home := strings.TrimSpace(string(raw))
	if sameAddr(home, addr) {
		return nil
	}
	return fmt.Errorf("%s names the daemon at %s, but the data dir %s (PHC_HOME or --data) belongs to another daemon, at %s: the owner session of one does not work at the other; unset %s (or set it to %s), or point PHC_HOME (or --data) at the data dir of the daemon at %s",
		from, addr, printable(dir), printable(home), from, printable(home), addr)
}

// sameAddr reports whether two host:port addresses name the same loopback
// socket ("localhost" is 127.0.0.1).
func sameAddr(a, b string) bool {
	norm := func(s string) string {
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return s
		}
		if strings.EqualFold(host, "localhost") {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String()
		}
		return net.JoinHostPort(host, port)
	}
	return norm(a) == norm(b)
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// bulkTimeout bounds a request that moves or reads a whole vault (an
// export, an import, an adopt of everything held, phc check, a graph
// rebuild or export): minutes for 100,000 claims on a slow machine, and
// for phc check at millions of claims on a cold disk, where every other
// request takes a minute at most.
const bulkTimeout = 30 * time.Minute

// ownerBulkClient is a client with the owner's session for a bulk request.
func ownerBulkClient(env *Env, c common) (*client.Client, error) {
	cl, err := newClient(env, c, true)
	if err != nil {
		return nil, err
	}
	cl.HTTP.Timeout = bulkTimeout
	return cl, nil
}
