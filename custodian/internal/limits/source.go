package limits

import (
	"context"
	"net"
)

// Source is where a request came from, as far as its adapter can tell:
// the peer's address (host:port) of the connection it came over, or
// nothing for a call made in process. The limits on failed credentials
// count per source, so that one process's failures slow that process and
// no other.
//
// A connection is all a loopback socket tells apart: its port is new with
// every connection, and every local process shares its host. So a limit
// counted per connection ([Source.Conn]) slows a client that keeps its
// connection, not one that reconnects; a limit counted per host
// ([Source.Host]) slows every process on the machine alike, and is used
// only where it cannot refuse the owner (see [Unlock]).
type Source struct{ addr string }

type sourceKey struct{}

// WithSource returns ctx carrying the source addr (a peer's host:port).
func WithSource(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, sourceKey{}, Source{addr: addr})
}

// SourceOf returns the source ctx carries: an in-process call's (the
// zero Source) when it carries none.
func SourceOf(ctx context.Context) Source {
	s, _ := ctx.Value(sourceKey{}).(Source)
	return s
}

// Conn is the key of the source's connection.
func (s Source) Conn() string {
	if s.addr == "" {
		return "local"
	}
	return "conn " + s.addr
}

// Host is the key of the source's host: every connection from one address
// shares it.
func (s Source) Host() string {
	if s.addr == "" {
		return "local"
	}
	host, _, err := net.SplitHostPort(s.addr)
	if err != nil {
		host = s.addr
	}
	return "host " + host
}
