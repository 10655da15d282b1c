package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDesignLayout: the layout table of docs/design.md §3 has a row for
// every package of the module, and none for a package that is not there.
// A new package fails this test until the design says what it owns.
func TestDesignLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const module = "github.com/phc-project/phc/"
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		packages[strings.TrimPrefix(p.ImportPath, module)] = true
	}
	raw, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(raw), "\n## 3. Layout\n")
	if !ok {
		t.Fatal(`docs/design.md has no section "## 3. Layout"`)
	}
	if end := strings.Index(sec, "\n## "); end >= 0 {
		sec = sec[:end]
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)` \\|").FindAllStringSubmatch(sec, -1)
	named := map[string]bool{}
	for _, m := range rows {
		named[m[1]] = true
		if !packages[m[1]] {
			t.Errorf("docs/design.md §3 names %s, which is not a package of the module", m[1])
		}
	}
	for p := range packages {
		if !named[p] {
			t.Errorf("docs/design.md §3 has no row for the package %s: add | `%s` | what it owns |", p, p)
		}
	}
	if len(packages) < 10 {
		t.Fatalf("go list found only %d packages", len(packages))
	}
}
