package importer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetectNeverClaimsAnother: each fixture file of testdata/<source>/ is
// detected as that source, or (a file a source reads only when named, or
// that two sources could read) as none; never as another source.
func TestDetectNeverClaimsAnother(t *testing.T) {
	dirs, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		want := d.Name()
		err := filepath.WalkDir(filepath.Join("testdata", want), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s, err := Lookup("", &Input{Name: filepath.Base(p), R: strings.NewReader(string(raw)), Size: int64(len(raw)), Limits: DefaultLimits})
			switch {
			case err == nil && s.Name() != want:
				t.Errorf("%s is detected as %s; want %s", p, s.Name(), want)
			case err != nil && !errors.Is(err, ErrUnknownSource):
				t.Errorf("%s: %v", p, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
