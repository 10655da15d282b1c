package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// writeFileAtomic writes data to dir/name with mode 0600 so that the file
// either keeps its old content or has the new content in full, even across
// a crash: it writes a temporary file in dir, syncs it, renames it over name
// and syncs dir.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(fileMode); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("vault: write %s: %w", name, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be synced there
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ensureDir creates dir (and missing parents) if needed and sets its mode to
// 0700, whatever the umask.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("vault: create directory: %w", err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("vault: create directory: %w", err)
	}
	return nil
}
