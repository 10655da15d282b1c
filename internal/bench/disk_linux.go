package bench

import (
	"fmt"
	"os"
	"syscall"
)

// deviceStat is the /sys stat file of the block device (or partition)
// holding dir, "" where there is none (tmpfs, overlays).
func deviceStat(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	// Linux's encoding of a dev_t (see major(3) and minor(3)).
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	p := fmt.Sprintf("/sys/dev/block/%d:%d/stat", major, minor)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
