//go:build !linux

package store

import "os"

// datasync writes f to disk.
func datasync(f *os.File) error { return f.Sync() }

// preallocate sets f's size, so that the log's records are written in place.
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }

// prefetch does nothing here.
func prefetch(string) {}
