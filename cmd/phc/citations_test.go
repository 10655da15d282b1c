package main

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cited matches what may name a Markdown file: a run of path characters
// ending in ".md" (a bare name, a path, or a link target; an anchor after
// it is not part of the match).
var cited = regexp.MustCompile(`[A-Za-z0-9_./~-]*[A-Za-z0-9_-]\.md\b`)

// scanned reports whether the citations of a tracked file are checked:
// source, docs, configuration, scripts and schemas.
func scanned(name string) bool {
	switch path.Ext(name) {
	case ".go", ".md", ".yaml", ".yml", ".sh", ".json", ".mjs", ".py", ".html":
		return true
	}
	return name == ".ci/run"
}

// trackedFiles lists the repository's tracked files, relative to its root,
// and returns the root.
func trackedFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v (this test reads the repository's tracked files with git)", err)
	}
	root = strings.TrimSpace(string(out))
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return root, files
}

// TestCitedDocsExist: every .md file that a comment, a document, a script
// or a schema of the repository cites is a tracked file of the repository.
// A bare name or a relative path resolves against the citing file's
// directory or the repository's root; a URL is not a citation. Documents
// that live outside the repository (a design kept elsewhere, a shared
// directory) are never cited: users never get them.
func TestCitedDocsExist(t *testing.T) {
	root, files := trackedFiles(t)
	tracked := map[string]bool{}
	for _, f := range files {
		tracked[f] = true
	}
	// This file names the documents it refuses, in its test cases.
	const self = "cmd/phc/citations_test.go"
	outside := regexp.MustCompile(`\.\./shared\b|/work/shared\b|\bshared/(DESIGN|FORMATS|STYLE|specs)\b`)
	checked := 0
	for _, f := range files {
		if !scanned(f) || f == self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(raw), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, outside the repository", f, n+1, m)
			}
			for _, loc := range cited.FindAllStringIndex(line, -1) {
				ref := line[loc[0]:loc[1]]
				if isURL(line[:loc[0]], line[loc[0]:loc[1]]) || isLinkText(line[:loc[0]], line[loc[1]:]) {
					continue
				}
				checked++
				if !resolves(tracked, f, ref) {
					t.Errorf("%s:%d cites %s, which is not a file of the repository", f, n+1, ref)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found only %d citations of .md files: is the scan broken?", checked)
	}
}

// isURL reports whether a match, with the text before it, is part of a
// URL.
func isURL(before, match string) bool {
	i := strings.LastIndexAny(before, " \t\"'`(<[")
	return strings.Contains(before[i+1:]+match, "://")
}

// isLinkText reports whether a match between before and after is the text
// of a Markdown link, [text](target), whose target is checked on its own.
func isLinkText(before, after string) bool {
	i, j := strings.LastIndex(before, "["), strings.Index(after, "](")
	return i >= 0 && j >= 0 && !strings.Contains(before[i:], "]") && !strings.Contains(after[:j], "[")
}

// resolves reports whether ref, cited in the tracked file from, names a
// tracked file: relative to from's directory, to the repository's root, or
// to docs/ (where the tests that read a guide name it).
func resolves(tracked map[string]bool, from, ref string) bool {
	if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "~") {
		return false
	}
	for _, base := range []string{path.Dir(from), ".", "docs"} {
		if p := path.Clean(path.Join(base, ref)); !strings.HasPrefix(p, "../") && tracked[p] {
			return true
		}
	}
	return false
}

// TestCitationRules pins what TestCitedDocsExist counts as a citation and
// where it looks for the file.
func TestCitationRules(t *testing.T) {
	tracked := map[string]bool{"README.md": true, "docs/design.md": true, "docs/formats/dec.md": true}
	for _, tc := range []struct {
		from, ref string
		want      bool
	}{
		{"custodian/internal/model/errors.go", "docs/design.md", true},
		{"docs/formats/bundle.md", "dec.md", true},
		{"docs/formats/bundle.md", "../design.md", true},
		{"internal/cli/docs_test.go", "design.md", true}, // as readDoc names a guide
		{"internal/cli/docs_test.go", "../README.md", true},
		{"dec/dec.go", "FORMATS.md", false},
		{"custodian/model.go", "DESIGN.md", false},
		{"README.md", "../shared/DESIGN.md", false},
		{"README.md", "/work/shared/DESIGN.md", false},
		{"docs/design.md", "../../README.md", false}, // above the root
	} {
		if got := resolves(tracked, tc.from, tc.ref); got != tc.want {
			t.Errorf("resolves(%s, %s) = %v; want %v", tc.from, tc.ref, got, tc.want)
		}
	}
	line := "see [dec.md](formats/dec.md) and https://example.com/x/README.md, and DESIGN.md §6"
	var refs []string
	for _, loc := range cited.FindAllStringIndex(line, -1) {
		if !isURL(line[:loc[0]], line[loc[0]:loc[1]]) && !isLinkText(line[:loc[0]], line[loc[1]:]) {
			refs = append(refs, line[loc[0]:loc[1]])
		}
	}
	if got, want := strings.Join(refs, " "), "formats/dec.md DESIGN.md"; got != want {
		t.Errorf("citations of %q = %q; want %q", line, got, want)
	}
}
