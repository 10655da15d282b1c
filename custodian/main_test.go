package custodian_test

import (
	"os"
	"testing"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
)

// TestMain gives this package's tests a cheap vault and cheap consumer
// secret hashes: Argon2id at its real cost was most of the package's time.
// The knobs work only in test binaries; internal/vault and internal/identity
// test the real costs.
func TestMain(m *testing.M) {
	vault.UseTestKDF()
	identity.UseTestHashCost()
	os.Exit(m.Run())
}
