//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package vault

// HardenProcess would disable core dumps; on this platform it does nothing.
func HardenProcess() {}
