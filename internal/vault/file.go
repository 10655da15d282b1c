package vault

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/phc-project/phc/internal/atomicfile"
)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// writeFileAtomic writes data to dir/name with mode 0600 so that the file
// either keeps its old content or has the new content in full, even across
// a crash (atomicfile.Write).
func writeFileAtomic(dir, name string, data []byte) error {
	if err := atomicfile.Write(filepath.Join(dir, name), data); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
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
