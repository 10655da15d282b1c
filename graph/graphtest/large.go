//go:build !slow

package graphtest

// large reports whether [Run] loads its large graphs (tens of thousands of
// edges, more than one transaction of a Replace): only in the slow test
// tier, go test -tags slow, which .ci/run runs.
const large = false
