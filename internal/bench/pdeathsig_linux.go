package bench

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the kernel send the daemon SIGTERM should the
// bench die without stopping it, so that no daemon outlives a killed run.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
