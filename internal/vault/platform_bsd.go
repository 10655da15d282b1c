//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package vault

import "golang.org/x/sys/unix"

// HardenProcess disables core dumps for the whole process by setting
// RLIMIT_CORE to zero, so that keys in memory cannot end up in a core file.
// It is best effort and reports nothing. Call it once, early in the daemon's
// main.
func HardenProcess() {
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
}

func dontDump([]byte) {}
