//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package vault

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// keyMem is a buffer for key material, in an anonymous private mapping of
// its own rather than on the Go heap, so that the garbage collector never
// copies it and mlock covers nothing else.
type keyMem struct {
	b       []byte
	mmapped bool
	cleanup runtime.Cleanup
}

// newKeyMem returns a zeroed buffer of n bytes. If the mapping fails it falls
// back to the heap.
func newKeyMem(n int) *keyMem {
	size := (n + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return &keyMem{b: make([]byte, n)}
	}
	dontDump(b)
	m := &keyMem{b: b[:n:n], mmapped: true}
	m.cleanup = runtime.AddCleanup(m, unmapKeyMem, b)
	return m
}

// lock pins the buffer in RAM where the system allows (best effort).
func (m *keyMem) lock() {
	if m.mmapped {
		_ = unix.Mlock(m.b)
	}
}

// wipe zeroes the buffer and unpins it.
func (m *keyMem) wipe() {
	clear(m.b)
	if m.mmapped {
		_ = unix.Munlock(m.b)
	}
}

// free wipes and unmaps the buffer. m must not be used afterwards.
func (m *keyMem) free() {
	m.wipe()
	if m.mmapped {
		m.cleanup.Stop()
		unmapKeyMem(m.b[:cap(m.b)])
		m.b, m.mmapped = nil, false
	}
}

func unmapKeyMem(b []byte) {
	clear(b)
	_ = unix.Munlock(b)
	_ = unix.Munmap(b)
}
