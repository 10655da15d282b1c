package custodian

import (
	"context"

	"github.com/phc-project/phc/custodian/internal/limits"
)

// Types of package limits, under the names the rules use.
type (
	buckets  = limits.Buckets
	failures = limits.Failures
	limit    = limits.Limit
)

// WithPeer returns ctx carrying the address (host:port) of the peer a
// request came from, as its adapter sees the connection. Failed
// credentials are limited per peer ([Service.Unlock],
// [Service.MintServiceToken], [Service.ExchangeToken]); a call without one
// counts as in process.
func WithPeer(ctx context.Context, addr string) context.Context { return limits.WithSource(ctx, addr) }
