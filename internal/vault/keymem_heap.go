//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package vault

// keyMem is a buffer for key material. On this platform it lives on the Go
// heap and cannot be pinned.
type keyMem struct {
	b []byte
}

func newKeyMem(n int) *keyMem { return &keyMem{b: make([]byte, n)} }

func (m *keyMem) lock() {}

func (m *keyMem) wipe() { clear(m.b) }

func (m *keyMem) free() { m.wipe() }
