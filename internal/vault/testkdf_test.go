package vault

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withTestKDF turns the test cost on for the rest of t. Not parallel: the
// other tests of this binary check the real cost.
func withTestKDF(t *testing.T) {
	t.Helper()
	UseTestKDF()
	t.Cleanup(func() { testKDFOn.Store(false) })
}

func readHeader(t *testing.T, dir string) header {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, headerFile))
	if err != nil {
		t.Fatal(err)
	}
	var h header
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// A vault made with the test cost records it, opens and unlocks under it,
// and refuses a wrong password; its archives open too.
func TestTestKDFVault(t *testing.T) {
	withTestKDF(t)
	pw := []byte("pw")
	dir := filepath.Join(t.TempDir(), "v")
	sk, err := Create(dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	if got := readHeader(t, dir).KDF; got != testKDF {
		t.Fatalf("header kdf = %+v; want the test cost %+v", got, testKDF)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock([]byte("wrong"), sk); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("Unlock(wrong) = %v; want ErrBadCredentials", err)
	}
	if err := v.Unlock(pw, sk); err != nil {
		t.Fatalf("Unlock = %v", err)
	}
	arc, err := v.SealArchive([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := OpenArchive(arc, pw, sk)
	if err != nil || string(pt) != "hello" {
		t.Fatalf("OpenArchive = %q, %v; want hello", pt, err)
	}
}

// Without the test knob, a header or archive naming the test cost is
// corrupt: editing a real vault's header cannot make it cheap to guess.
func TestTestKDFRefusedWithoutKnob(t *testing.T) {
	pw := []byte("pw")
	dir := filepath.Join(t.TempDir(), "v")
	testKDFOn.Store(true)
	sk, err := Create(dir, pw)
	var arc []byte
	if err == nil {
		var v *Vault
		if v, err = Open(dir); err == nil {
			if err = v.Unlock(pw, sk); err == nil {
				arc, err = v.SealArchive([]byte("x"))
			}
		}
	}
	testKDFOn.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open(test-cost header) without the knob = %v; want ErrCorrupt", err)
	}
	if _, err := OpenArchive(arc, pw, sk); !errors.Is(err, ErrCorrupt) {
		t.Errorf("OpenArchive(test-cost archive) without the knob = %v; want ErrCorrupt", err)
	}

	// A real vault whose header is edited to the test cost.
	real := filepath.Join(t.TempDir(), "real")
	if _, err := Create(real, pw); err != nil {
		t.Fatal(err)
	}
	h := readHeader(t, real)
	if h.KDF != fixedKDF {
		t.Fatalf("header kdf = %+v; want the fixed cost", h.KDF)
	}
	h.KDF = testKDF
	data, _ := json.Marshal(h)
	if err := os.WriteFile(filepath.Join(real, headerFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(real); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open(header edited to the test cost) = %v; want ErrCorrupt", err)
	}
}

// No code outside _test.go files calls a test-cost knob: the daemon, the
// CLI and the HTTP API cannot make a cheap vault or secret hash.
func TestTestKnobsOnlyInTests(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	knobs := map[string]bool{"UseTestKDF": true, "UseTestHashCost": true}
	defining := map[string]bool{"internal/vault/testkdf.go": true, "internal/identity/testcost.go": true}
	fset := token.NewFileSet()
	calls := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var name string
			switch n := n.(type) {
			case *ast.SelectorExpr:
				name = n.Sel.Name
			case *ast.Ident:
				name = n.Name
			default:
				return true
			}
			if !knobs[name] {
				return true
			}
			calls++
			rel, _ := filepath.Rel(root, path)
			if !strings.HasSuffix(path, "_test.go") && !defining[filepath.ToSlash(rel)] {
				t.Errorf("%s: %s used outside a _test.go file", fset.Position(n.Pos()), name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Error("found no use of the knobs at all: the scan is broken")
	}
}
