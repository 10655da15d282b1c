package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync writes f's data (and only the metadata needed to read it) to disk.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// preallocate reserves size bytes for f, so that writes into it seldom
// change the file's metadata. A file system that cannot is not an error.
func preallocate(f *os.File, size int64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		return f.Truncate(size)
	}
	return nil
}
