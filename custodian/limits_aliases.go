package custodian

import "github.com/phc-project/phc/custodian/internal/limits"

// Types of package limits, under the names the rules use.
type (
	buckets  = limits.Buckets
	failures = limits.Failures
	limit    = limits.Limit
)
