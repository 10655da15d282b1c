package httpapi

import (
	"os"
	"testing"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
)

// TestMain gives this package's tests a cheap vault and cheap consumer
// secret hashes. The knobs work only in test binaries; internal/vault and
// internal/identity test the real costs.
func TestMain(m *testing.M) {
	vault.UseTestKDF()
	identity.UseTestHashCost()
	os.Exit(m.Run())
}
