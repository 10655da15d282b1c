package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportMemories: phc import --from mem0 holds a mem0 export's
// memories in the quarantine — none readable by an app granted "*" until
// the owner adopts them — with what the person stated reported, the rest
// inferred, the owner as producer, a --map key and the credential
// dropped; a hostile export is refused with nothing held and a deny
// receipt; the format is detected when --from is left out.
func TestImportMemories(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	run := func(want int, args ...string) string {
		t.Helper()
		out.Reset()
		errb.Reset()
		if code := Run(t.Context(), env, args); code != want {
			t.Fatalf("phc %s = %d; want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	app := h.consumerFor("app", "*", "read", "assist")
	h.grant("app", "assist", "read", map[string]any{"keys": []string{"*"}})
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "map.json")
	if err := os.WriteFile(mapFile, []byte(`{"travel": {"key": "preferences.travel", "kind": "preference"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(repoRoot, "quarantine", "importer", "testdata", "mem0", "results.json")
	// The owner holds a claim at the key a memory maps to: the review
	// shows both values and how they differ, and merges nothing.
	travel := "preferences.travel.5b1c3c0e-1f2a-4c7e-9a61-0a1d2e3f4a5b"
	h.must(200, "PUT", "/context/fields/"+travel, h.owner, map[string]any{"value": "Aisle seats"}, nil)

	said := run(0, "import", "--from", "mem0", "--map", mapFile, export)
	for _, want := range []string{"mem0: 4 memories seen, 2 held in the quarantine", "dropped: mem0 memory 7d3e5e20-3b4c-4e90-9c83-2c3f4a5b6c7d: holds a credential"} {
		if !strings.Contains(said, want) {
			t.Fatalf("phc import said:\n%s\nwant %q", said, want)
		}
	}
	if strings.Contains(said, "sk-proj") {
		t.Fatalf("phc import quotes the credential:\n%s", said)
	}

	// Held, nothing of it reaches the app.
	readAll := func() string {
		var all strings.Builder
		for _, path := range []string{"/phc/v1/context?purpose=assist", "/phc/v1/search?purpose=assist&q=window", "/context/fields?purpose=assist"} {
			status, raw := h.do("GET", path, app, nil)
			fmt.Fprintf(&all, "%s %d %s\n", path, status, raw)
		}
		return all.String()
	}
	if got := readAll(); strings.Contains(got, "window seats") || strings.Contains(got, "vegetarian") {
		t.Fatalf("a held memory reached the app before adoption:\n%s", got)
	}
	said = run(0, "quarantine")
	for _, want := range []string{"(" + travel + ")", "from mem0", "  conflicts with active claim clm_", `  value: "Prefers window seats on long flights"`,
		`has "Aisle seats"`, `  diff: ~ (the value) "Aisle seats" -> "Prefers window seats on long flights"`, `  value: "Is probably vegetarian"`} {
		if !strings.Contains(said, want) {
			t.Fatalf("phc quarantine said:\n%s\nwant %q", said, want)
		}
	}

	// The adopt says who reads what it adopted now: the app, by its grant.
	if said := run(0, "quarantine", "adopt", "--all"); !strings.Contains(said, "adopted 2 records") || !strings.Contains(said, "app: 2 of the adopted claims") {
		t.Fatalf("phc quarantine adopt --all said:\n%s", said)
	}
	var claims struct {
		Claims []struct {
			Key       string `json:"key"`
			Kind      string `json:"kind"`
			Assertion string `json:"assertion"`
			Producer  struct {
				Authenticated struct{ Kind string } `json:"authenticated"`
				Reported      struct{ App string }  `json:"reported"`
			} `json:"producer"`
		} `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims", h.owner, nil, &claims)
	got := map[string]string{}
	for _, c := range claims.Claims {
		got[c.Key] = c.Kind + " " + c.Assertion + " " + c.Producer.Authenticated.Kind + " " + c.Producer.Reported.App
	}
	want := map[string]string{
		"preferences.travel.5b1c3c0e-1f2a-4c7e-9a61-0a1d2e3f4a5b": "preference reported owner mem0",
		"imported.mem0.food.6c2d4d1f-2a3b-4d8f-8b72-1b2e3f4a5b6c": "fact inferred owner mem0",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("claim %s = %q; want %q (all: %v)", k, got[k], w, got)
		}
	}
	if got := readAll(); !strings.Contains(got, "window seats") {
		t.Fatalf("the adopted memory does not reach the app its grant covers:\n%s", got)
	}

	// Hostile: refused whole, nothing held, a deny receipt.
	deep := filepath.Join(dir, "deep.json")
	body := `[{"id": "a", "memory": "fine", "user_id": "u"}, {"id": "b", "memory": "x", "user_id": "u", "metadata": ` +
		strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}]`
	if err := os.WriteFile(deep, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if said := run(1, "import", "--from", "mem0", deep); !strings.Contains(said, "nested more than") {
		t.Fatalf("phc import of a deep export said:\n%s", said)
	}
	var page struct {
		Records []json.RawMessage `json:"records"`
	}
	h.must(200, "GET", "/phc/v1/quarantine", h.owner, nil, &page)
	if len(page.Records) != 0 {
		t.Fatalf("a refused export left %d records held", len(page.Records))
	}
	var receipts struct {
		Receipts []struct {
			Operation, Decision, Constraint string
		} `json:"receipts"`
	}
	h.must(200, "GET", "/phc/v1/receipts?limit=5", h.owner, nil, &receipts)
	denied := false
	for _, r := range receipts.Receipts {
		denied = denied || (r.Operation == "import.memories" && r.Decision == "deny")
	}
	if !denied {
		t.Fatalf("no deny receipt for the refused import: %+v", receipts.Receipts)
	}

	// Detected without --from (a second import of the same memories holds
	// them again: an import is not a bundle).
	if said := run(0, "import", export); !strings.Contains(said, "mem0: 4 memories seen, 2 held") {
		t.Fatalf("phc import without --from said:\n%s", said)
	}
}

// TestImportEverySource: a fixture of every source, imported through the
// daemon as a user would (a file, or a folder), is held — and none of it
// reaches an app granted "*" by any read route until the owner adopts it.
func TestImportEverySource(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "")
	env, out, errb := testEnv(t, map[string]string{"PHC_PASSWORD": testPassword, "PHC_HOME": h.dir})
	app := h.consumerFor("app", "*", "read", "assist")
	h.grant("app", "assist", "read", map[string]any{"keys": []string{"*"}})
	data := filepath.Join(repoRoot, "quarantine", "importer", "testdata")
	imports := []struct{ from, path string }{
		{"mem0", "mem0/results.json"},
		{"openmemory", "openmemory/memories.json"},
		{"openmemory", "openmemory/memories.jsonl"},
		{"chatgpt", "chatgpt"},
		{"claude", "claude"},
		{"claude-code", "claude-code"},
		{"letta", "letta/companion.af"},
		{"letta", "letta/helper-v1.af"},
		{"basic-memory", "basic-memory"},
		{"cognee", "cognee/main_dataset_export.json"},
		{"pam", "pam/memory-store.json"},
	}
	held := map[string]int{}
	for _, im := range imports {
		out.Reset()
		errb.Reset()
		if code := Run(t.Context(), env, []string{"import", "--from", im.from, filepath.Join(data, im.path)}); code != 0 {
			t.Fatalf("phc import --from %s %s = %d\n%s%s", im.from, im.path, code, out, errb)
		}
		var n int
		if _, err := fmt.Sscanf(out.String()[strings.Index(out.String(), "seen, ")+len("seen, "):], "%d held", &n); err != nil || n == 0 {
			t.Fatalf("phc import --from %s %s held nothing:\n%s", im.from, im.path, out)
		}
		held[im.from] += n
	}
	var page struct {
		Records []struct {
			Source string `json:"source"`
			Record string `json:"record"`
		} `json:"records"`
		Total int `json:"total"`
	}
	h.must(200, "GET", "/phc/v1/quarantine?limit=1000", h.owner, nil, &page)
	total := 0
	for _, n := range held {
		total += n
	}
	if page.Total != total {
		t.Fatalf("the quarantine holds %d records; the imports said %d (%v)", page.Total, total, held)
	}
	// The app, granted everything, reads nothing of it on any route: the
	// lists are empty, and a held claim's id answers as an absent one.
	for _, path := range []string{"/phc/v1/context?purpose=assist", "/context/context?purpose=assist", "/context/search?purpose=assist&q=a",
		"/phc/v1/graph/neighbors/self?purpose=assist&depth=3", "/context/fields?purpose=assist"} {
		status, raw := h.do("GET", path, app, nil)
		nothing := status == 200 || (strings.Contains(path, "/graph/") && status == 404) // a node without a readable claim is absent
		if !nothing || strings.Contains(string(raw), "clm_") || strings.Contains(string(raw), "sum_") {
			t.Errorf("GET %s as the app = %d %s; want nothing held", path, status, raw)
		}
	}
	absentStatus, absent := h.do("GET", "/phc/v1/claims/clm_AAAAAAAAAAAAAAAAAAAAAAAAAA?purpose=assist", app, nil)
	for _, r := range page.Records {
		if !strings.HasPrefix(r.Record, "clm_") {
			continue
		}
		status, raw := h.do("GET", "/phc/v1/claims/"+r.Record+"?purpose=assist", app, nil)
		if status != absentStatus || !sameExceptIDs(raw, absent) {
			t.Errorf("GET held claim %s as the app = %d %s; an absent one = %d %s", r.Record, status, raw, absentStatus, absent)
		}
	}
	var claims struct {
		Claims []json.RawMessage `json:"claims"`
	}
	h.must(200, "GET", "/phc/v1/claims", h.owner, nil, &claims)
	if len(claims.Claims) != 0 {
		t.Fatalf("the owner's claims before adoption: %d; want none", len(claims.Claims))
	}
}

// sameExceptIDs reports whether two error answers are the same but for
// their request ids.
func sameExceptIDs(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	delete(x, "request_id")
	delete(y, "request_id")
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}
