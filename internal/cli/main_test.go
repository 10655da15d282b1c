package cli

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/vault"
)

// TestMain gives this package's tests a cheap vault and cheap consumer
// secret hashes: Argon2id at its real cost, on every daemon a test starts,
// was most of the package's time. The knobs work only in test binaries;
// internal/vault and internal/identity test the real costs, and the
// product binary, built by cmd/phc's tests, runs at them.
//
// The test binary is also the phc that the tests run as a separate
// program (see [phcBinary]): started under the name phc, it is phc — the
// same [Main] as cmd/phc's — with the same cheap costs, so that it opens
// the vaults the tests' daemons made.
func TestMain(m *testing.M) {
	vault.UseTestKDF()
	identity.UseTestHashCost()
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "phc" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// phcBinary returns the path of a program named phc that is this test
// binary (see [TestMain]), in a directory of its own that a test may put
// first on the PATH.
func phcBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "phc")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	linkPHC(t, bin)
	return bin
}

// linkPHC makes bin, whose name is phc, this test binary: a hard link
// to it, else a copy. Not a symbolic link: phc mcp-config writes where
// phc runs from ([os.Executable]), and refuses a temporary build's path,
// which a symbolic link would resolve to.
func linkPHC(t *testing.T, bin string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	if os.Link(self, bin) == nil {
		return
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
