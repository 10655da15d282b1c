package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	linkScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	htmlAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)">`)
)

// mdProse returns the lines of a Markdown document, each fenced block's
// lines (its fences too) blanked.
func mdProse(doc string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			line = ""
		}
		if fence {
			line = ""
		}
		out = append(out, line)
	}
	return out
}

// mdAnchors returns the anchors GitHub gives the headings of a Markdown
// document: lower case, letters, digits, "-" and "_" kept, spaces made
// "-", everything else dropped; a repeated anchor gets "-1", "-2", …; and
// those of its <a id="…"> elements.
func mdAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range mdProse(doc) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocsLinks: every relative link of the README and of the guides in
// docs/ resolves — the file or directory it names exists, and its
// #anchor, if any, is a heading of that file (or of the page itself).
func TestDocsLinks(t *testing.T) {
	links := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range mdProse(string(raw)) {
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if linkScheme.MatchString(target) {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := filepath.Join(repoRoot, file) // a link to "#anchor" alone is to the page itself
				if path != "" {
					dest = filepath.Join(repoRoot, filepath.Dir(file), filepath.FromSlash(path))
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s (line %d): link to %s: no such file", file, n+1, target)
					continue
				}
				if anchor == "" {
					continue
				}
				doc, err := os.ReadFile(dest)
				if err != nil {
					t.Errorf("%s: link to %s: %v", file, target, err)
					continue
				}
				if !mdAnchors(string(doc))[anchor] {
					t.Errorf("%s (line %d): link to %s: no heading makes the anchor #%s", file, n+1, target, anchor)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("found %d relative links in the README and the guides; want at least 50", links)
	}
}

// TestREADMEMap: the README is under 300 lines, its "What is where" links
// every package of the module (go list ./...), and it links every guide in
// docs/.
func TestREADMEMap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	if n := strings.Count(readme, "\n"); n >= 300 {
		t.Errorf("the README has %d lines; want under 300", n)
	}
	linked := func(text string) map[string]bool {
		set := map[string]bool{}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			set[strings.TrimSuffix(m[1], "/")] = true
		}
		return set
	}
	inMap := linked(section(t, readme, "## What is where"))
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, dir := range pkgs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if rel = filepath.ToSlash(rel); !inMap[rel] {
			t.Errorf("the README's \"What is where\" does not link the package %s", rel)
		}
	}
	all := linked(readme)
	for _, file := range docFiles(t)[1:] {
		if !all[file] {
			t.Errorf("the README does not link the guide %s", file)
		}
	}
}
