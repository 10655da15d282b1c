package bench

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// deviceStat is the /sys stat file of the block device (or partition)
// holding dir, "" where there is none (tmpfs, overlays).
func deviceStat(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	dev := uint64(st.Dev)
	p := fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(dev), unix.Minor(dev))
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
