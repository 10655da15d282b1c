package bench

import "syscall"

// onTmpfs reports whether dir is on tmpfs, whose writes reach no storage.
func onTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
}
