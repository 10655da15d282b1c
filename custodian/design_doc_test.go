package custodian

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/phc-project/phc/custodian/internal/model"
)

// TestDesignErrorTable holds the error table of docs/design.md §6 to the
// one table of this package: a row for every status and constraint code a
// Kind has, and none that no Kind has. A new Kind, or a changed row, fails
// it until the design says so too.
func TestDesignErrorTable(t *testing.T) {
	raw, err := os.ReadFile("../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(raw), "\n## 6. HTTP API\n")
	if !ok {
		t.Fatal(`docs/design.md has no section "## 6. HTTP API"`)
	}
	if end := strings.Index(sec, "\n## "); end >= 0 {
		sec = sec[:end]
	}
	row := regexp.MustCompile("^\\| (\\d{3}) \\| `([a-z_]+)` \\| ([^|]+) \\|$")
	documented := map[string]int{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") || !strings.Contains(line, "` |") || strings.HasPrefix(line, "| `") {
			continue // the route tables' rows begin with a route
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("malformed row in docs/design.md's error table: %s", line)
			continue
		}
		documented[m[1]+" "+m[2]]++
	}
	want := map[string]bool{}
	for _, k := range model.Kinds() {
		r := k.Row()
		key := strconv.Itoa(r.Status) + " " + r.Constraint
		want[key] = true
		if documented[key] == 0 {
			t.Errorf("docs/design.md §6 has no row %d %s (Kind %d)", r.Status, r.Constraint, k)
		}
	}
	for key, n := range documented {
		switch {
		case !want[key]:
			t.Errorf("docs/design.md §6 has a row %s, which no Kind of errors.go has", key)
		case n > 1:
			t.Errorf("docs/design.md §6 has %d rows %s", n, key)
		}
	}
}
