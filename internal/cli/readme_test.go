package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docShellBlock is one ```sh block of the README or of a guide in docs/.
type docShellBlock struct {
	file    string // relative to the repository's root: README.md, docs/owner.md
	line    int    // of its opening fence
	heading string // the "#" or "##" heading it is under: its section
	text    string
	skip    string // why the test does not run it ("" if it does)
}

var skipMarker = regexp.MustCompile(`^<!-- readme-test: skip \((.+)\) -->$`)

// docFiles returns the README and every guide of docs/ (not its
// subdirectories), relative to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(g))))
	}
	sort.Strings(files[1:])
	return files
}

// docShellBlocks returns the sh blocks of file (relative to the
// repository's root), in order.
func docShellBlocks(t *testing.T, file string) []docShellBlock {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []docShellBlock
	var cur *docShellBlock
	inFence := false // in a fenced block of another language
	heading, prev := "", ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case inFence:
			inFence = line != "```"
		case line == "```sh":
			cur = &docShellBlock{file: file, line: n, heading: heading}
			if m := skipMarker.FindStringSubmatch(prev); m != nil {
				cur.skip = m[1]
			}
		case strings.HasPrefix(line, "```"):
			inFence = true
		case strings.HasPrefix(line, "# "), strings.HasPrefix(line, "## "):
			heading = line
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// docBlock returns the lines of the first sh block of file under heading
// that the test runs.
func docBlock(t *testing.T, file, heading string) []string {
	t.Helper()
	for _, b := range docShellBlocks(t, file) {
		if b.heading == heading && b.skip == "" {
			return strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
		}
	}
	t.Fatalf("%s has no sh block the test runs under %q", file, heading)
	return nil
}

// TestREADMEShellBlocks runs the sh blocks of the README and of every guide
// in docs/ (the README's own sequences continue there: a first session,
// the graph, a backup restored on a new machine, …) against real daemons,
// with the built phc on the PATH, one subtest per file (TestREADMEShellBlocks/README, TestREADMEShellBlocks/owner,
// …): the file's blocks, in order, against one daemon of their own (as a
// reader who follows that page from its start), and then, where the page
// has several sections ("#" or "##" headings), each section's blocks alone,
// in order, against a fresh daemon (as a reader who jumps straight to that
// section). Each block runs in a fresh bash (set -euo pipefail) that has
// only what a guide's first block exports (PHC_HOME, PHC_PASSWORD,
// PHC_ADDR, with that daemon's dir and port substituted), so a block
// defines every other variable it uses, and a section makes the consumers,
// personas and grants it needs. The block that starts the daemon is not
// run: the test starts its own. A block that is not run says why, in a
// marker the reader does not see; the test checks the marker names a
// reason.
func TestREADMEShellBlocks(t *testing.T) {
	t.Parallel()
	bin := phcBinary(t)
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' blocks need %s (.ci/run installs it): %v", tool, err)
		}
	}
	total, pages := 0, 0
	for _, file := range docFiles(t) {
		var runnable []docShellBlock
		var sections [][]docShellBlock // the runnable blocks of each section, in order
		for _, b := range docShellBlocks(t, file) {
			if b.skip != "" {
				continue
			}
			if len(runnable) == 0 || runnable[len(runnable)-1].heading != b.heading {
				sections = append(sections, nil)
			}
			sections[len(sections)-1] = append(sections[len(sections)-1], b)
			runnable = append(runnable, b)
		}
		if len(runnable) == 0 {
			continue
		}
		total += len(runnable)
		pages++
		t.Run(strings.TrimSuffix(filepath.Base(file), ".md"), func(t *testing.T) {
			t.Parallel()
			t.Run("in order", func(t *testing.T) {
				t.Parallel()
				runDocBlocks(t, bin, runnable)
			})
			if len(sections) < 2 {
				return
			}
			for _, sec := range sections {
				t.Run("alone/"+strings.TrimLeft(sec[0].heading, "# "), func(t *testing.T) {
					t.Parallel()
					runDocBlocks(t, bin, sec)
				})
			}
		})
	}
	// The README alone had 20 runnable blocks before its sections became
	// guides: none may be lost on the way.
	if total < 20 {
		t.Errorf("the README and the guides have %d sh blocks the test runs; want at least 20", total)
	}
	if pages < 6 {
		t.Errorf("%d pages have sh blocks the test runs; want at least 6", pages)
	}
}

// runDocBlocks runs blocks, in order, against a fresh daemon, each in a
// fresh bash, in a fresh working directory that holds the repository's
// examples.
func runDocBlocks(t *testing.T, bin string, blocks []docShellBlock) {
	h := startHarness(t, "")
	work := t.TempDir() // where the blocks write their files
	abs, err := filepath.Abs(filepath.Join(repoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(work, "examples")); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(h.base, "http://")
	env := append(os.Environ(), "PHC_HOME="+h.dir, "PHC_PASSWORD="+testPassword, "PHC_ADDR="+addr,
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, b := range blocks {
		text := strings.NewReplacer("/tmp/phc-demo", h.dir, "127.0.0.1:7200", addr, "'a long passphrase'", "'"+testPassword+"'").Replace(b.text)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", text)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s:%d (%s): %v\n--- block:\n%s--- output:\n%s", b.file, b.line, b.heading, err, b.text, out)
		}
	}
}
