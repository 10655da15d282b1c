package conformance

import (
	"embed"
	"io/fs"
)

//go:embed testdata/*.json
var suiteFiles embed.FS

// Suite returns the cases shipped with this package (conformance/testdata).
func Suite() ([]Group, error) {
	sub, err := fs.Sub(suiteFiles, "testdata")
	if err != nil {
		return nil, err
	}
	return Load(sub)
}
