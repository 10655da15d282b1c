//go:build slow

package graphtest

// large: see large.go.
const large = true
