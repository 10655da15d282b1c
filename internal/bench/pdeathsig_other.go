//go:build !linux

package bench

import "os/exec"

// setParentDeathSignal does nothing where there is no parent-death signal.
func setParentDeathSignal(*exec.Cmd) {}
