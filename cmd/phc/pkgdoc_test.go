package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestPackageDocs checks that every package of the module has a package
// doc comment.
func TestPackageDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-json", "github.com/phc-project/phc/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p struct {
			ImportPath string
			Doc        string
			GoFiles    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(p.GoFiles) == 0 {
			continue
		}
		n++
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc comment", p.ImportPath)
		}
	}
	if n < 5 {
		t.Fatalf("found only %d packages", n)
	}
}
