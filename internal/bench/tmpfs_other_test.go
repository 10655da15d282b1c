//go:build !linux

package bench

// onTmpfs: only Linux's /proc counts bytes written; elsewhere the tests
// that ask skip before.
func onTmpfs(string) bool { return false }
