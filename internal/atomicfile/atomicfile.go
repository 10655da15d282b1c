// Package atomicfile writes small state files so that, even across a
// crash, a file holds either its old content or the new content in full,
// with mode 0600 whatever the umask: the vault's header and Secret Key,
// the daemon's address and session files, a local vault's sightings.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Write writes data to path: a temporary file in path's directory, mode
// 0600, written, synced and closed, then renamed over path, and the
// directory synced so that the rename lasts. Any failure is returned, and
// path keeps what it held; the temporary file is removed.
func Write(path string, data []byte) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", name, err)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the entries of dir (a created or renamed file) durable. It
// does nothing on Windows, where directories cannot be synced.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
