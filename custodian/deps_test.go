package custodian_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the business core free of transport code: custodian and
// schema must not import net/http or the MCP SDK, so every rule stays
// reachable from every face (docs/design.md §3).
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	forbidden := []string{"net/http", "github.com/modelcontextprotocol/go-sdk"}
	for _, pkg := range []string{"github.com/phc-project/phc/custodian", "github.com/phc-project/phc/schema"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
