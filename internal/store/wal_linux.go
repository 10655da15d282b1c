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

// prefetch asks the kernel to read the file at path into the page cache
// ahead of use: bbolt reads a cold file page by page in key order, which on
// a fragmented file is random I/O (a minute for a 400 MB store here, against
// seconds read in order).
func prefetch(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED)
}
