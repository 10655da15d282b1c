package custodian_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGlueDoesNotImportTheCore: the packages that hold the formats of the
// protocols the core speaks (imports, value references and Client-Vault,
// OIDC recipients, PCP's vocabulary), and the local vault hook's side of
// Client-Vault, never import custodian: the core imports them.
func TestGlueDoesNotImportTheCore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"quarantine", "internal/valueref", "internal/oidcrecipient", "internal/pcp", "internal/clientvault"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/phc-project/phc/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == "github.com/phc-project/phc/custodian" {
				t.Errorf("%s imports custodian", pkg)
			}
		}
	}
}
