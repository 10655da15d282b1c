package vault

import "golang.org/x/sys/unix"

// HardenProcess disables core dumps for the whole process, so that keys in
// memory cannot end up in a core file: it sets RLIMIT_CORE to zero and marks
// the process non-dumpable (PR_SET_DUMPABLE 0), which also stops other
// processes of the same user from attaching a debugger. It is best effort and
// reports nothing. Call it once, early in the daemon's main.
func HardenProcess() {
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// dontDump excludes b from core dumps (best effort).
func dontDump(b []byte) {
	_ = unix.Madvise(b, unix.MADV_DONTDUMP)
}
