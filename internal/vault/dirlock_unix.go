//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package vault

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive advisory lock on the directory itself, so that
// two concurrent Creates in one directory cannot interleave their writes.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("vault: lock directory: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("vault: lock directory: %w", err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
