//go:build !linux

package bench

import (
	"errors"
	"os"
)

// openPTY is Linux-only: elsewhere start pvault yourself and use
// --pcp-target.
func openPTY() (ctl, tty *os.File, err error) {
	return nil, nil, errors.New("starting pvault needs a pseudo-terminal for `pvault init`, which phc bench opens on Linux only; start pvault yourself and pass --pcp-target")
}
