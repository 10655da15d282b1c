package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// graphFixture gives the harness's vault an entity and a relationship.
func graphFixture(h *harness) (ent, edge string) {
	var e struct {
		Entity struct {
			ID string `json:"id"`
		} `json:"entity"`
	}
	h.must(201, "POST", "/phc/v1/entities", h.owner, map[string]string{"type": "person", "name": "Ana"}, &e)
	var pr struct {
		ID string `json:"proposal_id"`
	}
	h.must(201, "POST", "/phc/v1/proposals", h.owner, map[string]any{"key": "people.ana.rel", "kind": "relationship",
		"assertion": "reported", "value": map[string]string{"from": "self", "to": e.Entity.ID, "relation": "friend"}}, &pr)
	var c struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	h.must(200, "POST", "/phc/v1/proposals/"+pr.ID+"/confirm", h.owner, map[string]any{"personas": []string{}}, &c)
	return e.Entity.ID, c.Claim.ID
}

// runCmd runs one phc command with the test password and returns its exit
// code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	env, out, errb := testEnv(t, nil)
	code := Run(t.Context(), env, args)
	return code, out.String(), errb.String()
}

// TestGraphCommands: phc check, phc graph rebuild and phc graph export work
// against the running daemon and, once it has stopped, on its data dir.
func TestGraphCommands(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	ent, edge := graphFixture(h)

	for _, mode := range []string{"online", "offline"} {
		if mode == "offline" {
			h.stop()
		}
		code, out, errs := runCmd(t, "check", "--data", h.dir)
		if code != 0 || !strings.Contains(out, "ok: the graph agrees with the store") {
			t.Fatalf("%s: phc check = %d\n%s%s", mode, code, out, errs)
		}
		code, out, errs = runCmd(t, "graph", "export", "--data", h.dir)
		want := "<urn:phc:self> <https://phc.local/ns#related> <urn:phc:" + ent + "> <urn:phc:" + edge + "@1> ."
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("%s: phc graph export = %d, want a line %s\n%s%s", mode, code, want, out, errs)
		}
		if strings.Contains(out, "Ana") || strings.Contains(out, "friend") {
			t.Fatalf("%s: the N-Quads export holds a name or a relation:\n%s", mode, out)
		}
		file := filepath.Join(t.TempDir(), "prov.jsonld")
		if code, _, errs := runCmd(t, "graph", "export", "--data", h.dir, "--format", "prov-jsonld", "--out", file); code != 0 {
			t.Fatalf("%s: phc graph export --format prov-jsonld = %d\n%s", mode, code, errs)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Graph []map[string]any `json:"@graph"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Graph) == 0 {
			t.Fatalf("%s: PROV export is not JSON-LD with a @graph: %v\n%s", mode, err, raw)
		}
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: export file mode %o, want 600", mode, fi.Mode().Perm())
		}
		code, out, errs = runCmd(t, "graph", "rebuild", "--data", h.dir)
		if code != 0 || !strings.Contains(out, "rebuilt the graph at revision") {
			t.Fatalf("%s: phc graph rebuild = %d\n%s%s", mode, code, out, errs)
		}
	}
	if fi, err := os.Stat(filepath.Join(h.dir, graphFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("graph file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if code, _, _ := runCmd(t, "graph", "export", "--data", h.dir, "--format", "turtle"); code != 2 {
		t.Fatalf("phc graph export --format turtle = %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "graph", "prune", "--data", h.dir); code != 2 {
		t.Fatalf("phc graph prune = %d, want 2", code)
	}
	env, _, errb := testEnv(t, map[string]string{"PHC_PASSWORD": "not the password at all"})
	if code := Run(t.Context(), env, []string{"check", "--data", h.dir}); code != 1 || !strings.Contains(errb.String(), "wrong password") {
		t.Fatalf("phc check with a wrong password = %d\n%s", code, errb.String())
	}
}

// TestUnreadableGraphIsRebuilt: a graph file that cannot be opened (torn,
// say) is moved aside and rebuilt from the store.
func TestUnreadableGraphIsRebuilt(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	graphFixture(h)
	h.stop()
	path := filepath.Join(h.dir, graphFile)
	if err := os.WriteFile(path, []byte(strings.Repeat("not a bbolt file ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "check", "--data", h.dir)
	if code != 0 || !strings.Contains(out, "ok: the graph agrees with the store") {
		t.Fatalf("phc check over an unreadable graph = %d\n%s%s", code, out, errs)
	}
	aside, _ := filepath.Glob(path + ".unreadable-*")
	if len(aside) != 1 || !strings.Contains(errs, "moved it aside") {
		t.Fatalf("the unreadable file was not moved aside: %v\n%s", aside, errs)
	}
}
