package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/phc-project/phc/custodian"
)

// docsDir is the repository's docs directory: the integration guide, its
// examples, the OpenAPI description and the service files.
const docsDir = "../../docs"

func readDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(docsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// section returns the part of a Markdown document from the heading title
// to the next heading of the same level.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	level, _, _ := strings.Cut(title, " ")
	_, rest, ok := strings.Cut(doc, "\n"+title+"\n")
	if !ok {
		t.Fatalf("no section %q", title)
	}
	if end := strings.Index(rest, "\n"+level+" "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// TestIntegratingConstraintTable: docs/integrating.md's error table has a
// row, with advice, for every status and constraint code of the one error
// table (custodian/internal/model/errors.go), and none that the table does not have. A
// new code fails this test until it is documented.
func TestIntegratingConstraintTable(t *testing.T) {
	t.Parallel()
	table := section(t, readDoc(t, "integrating.md"), "## Errors and what to do")
	row := regexp.MustCompile("^\\| (\\d{3}) \\| `([a-z_]+)` \\| ([^|]+) \\| ([^|]+) \\|$")
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| status") {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("malformed row in the error table: %s", line)
			continue
		}
		if len(strings.TrimSpace(m[4])) < 20 {
			t.Errorf("row %s %s says too little about what an app should do: %q", m[1], m[2], m[4])
		}
		documented[m[1]+" "+m[2]] = true
	}
	want := map[string]bool{}
	for _, k := range custodian.Kinds() {
		r := k.Row()
		key := strconv.Itoa(r.Status) + " " + r.Constraint
		want[key] = true
		if !documented[key] {
			t.Errorf("docs/integrating.md does not document %d %s (custodian.%v)", r.Status, r.Constraint, k)
		}
	}
	for key := range documented {
		if !want[key] {
			t.Errorf("docs/integrating.md documents %s, which custodian/internal/model/errors.go does not have", key)
		}
	}
	// The OpenAPI description's Error body lists the same codes.
	doc := loadOpenAPI(t)
	var enum []string
	for _, v := range doc.Components.Schemas["Error"].Value.Properties["constraint"].Value.Enum {
		enum = append(enum, v.(string))
	}
	for _, k := range custodian.Kinds() {
		if c := k.Row().Constraint; !strings.Contains(" "+strings.Join(enum, " ")+" ", " "+c+" ") {
			t.Errorf("docs/openapi.yaml's Error.constraint lacks %s", c)
		}
	}
}

// TestIntegratingQuotesExamples: the examples shown in docs/integrating.md
// are the files TestDocsExamples runs, verbatim.
func TestIntegratingQuotesExamples(t *testing.T) {
	t.Parallel()
	guide := readDoc(t, "integrating.md")
	for _, tc := range []struct{ file, fence string }{{"tutor.py", "```python\n"}, {"tutor.mjs", "```js\n"}} {
		src := readDoc(t, filepath.Join("examples", tc.file))
		if !strings.Contains(guide, tc.fence+src+"```\n") {
			t.Errorf("docs/integrating.md does not quote docs/examples/%s as it is (in a %q block)", tc.file, strings.TrimSpace(tc.fence))
		}
	}
}

// TestIntegratingRoutesExist: every "METHOD /path" docs/integrating.md
// names is an operation of docs/openapi.yaml (which TestOpenAPIRoutes holds
// to the daemon's route table), so the guide invents no endpoint.
func TestIntegratingRoutesExist(t *testing.T) {
	t.Parallel()
	guide := readDoc(t, "integrating.md")
	doc := loadOpenAPI(t)
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`\b(GET|POST|PUT|DELETE) (/[^\s`+"`"+`?"),]+)`).FindAllStringSubmatch(guide, -1)
	if len(named) < 20 {
		t.Fatalf("found only %d routes named in docs/integrating.md", len(named))
	}
	for _, m := range named {
		path := strings.NewReplacer("…", "x", "{", "", "}", "").Replace(m[2])
		req, err := http.NewRequest(m[1], "http://127.0.0.1:7200"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := router.FindRoute(req); err != nil {
			t.Errorf("docs/integrating.md names %s %s, which docs/openapi.yaml does not describe: %v", m[1], m[2], err)
		}
	}
}
