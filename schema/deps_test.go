package schema

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the trust-boundary package free of transports: it
// must not import net/http or the MCP SDK (docs/design.md §3).
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not available to list dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" || strings.HasPrefix(dep, "github.com/modelcontextprotocol/") {
			t.Errorf("package schema depends on %s", dep)
		}
	}
}
