package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeShellBlock is one ```sh block of the README.
type readmeShellBlock struct {
	line    int    // of its opening fence
	heading string // the section it is in
	text    string
	skip    string // why the README test does not run it ("" if it does)
}

var skipMarker = regexp.MustCompile(`^<!-- readme-test: skip \((.+)\) -->$`)

func readmeShellBlocks(t *testing.T) []readmeShellBlock {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeShellBlock
	var cur *readmeShellBlock
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
		case line == "```sh":
			cur = &readmeShellBlock{line: n, heading: heading}
			if m := skipMarker.FindStringSubmatch(prev); m != nil {
				cur.skip = m[1]
			}
		case strings.HasPrefix(line, "## "):
			heading = line
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return blocks
}

// TestREADMEShellBlocks runs the README's sh blocks against real daemons,
// with the phc program on the PATH: every block, in order, against one daemon
// (as a reader who follows the whole README), and then each "##" section's
// blocks alone, in order, against a fresh daemon of their own (as a reader
// who jumps straight to that section). Each block runs in a fresh bash
// (set -euo pipefail) that has only what "A first session" exports
// (PHC_HOME, PHC_PASSWORD, PHC_ADDR, with that daemon's dir and port
// substituted), so a block defines every other variable it uses, and a
// section makes the consumers, personas and grants it needs. A block that
// is not run says why, in a marker the reader does not see; the test checks
// the marker names a reason.
func TestREADMEShellBlocks(t *testing.T) {
	t.Parallel()
	bin := phcBinary(t)
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's blocks need %s (.ci/run installs it): %v", tool, err)
		}
	}
	var runnable []readmeShellBlock
	var sections [][]readmeShellBlock // the runnable blocks of each section, in order
	for _, b := range readmeShellBlocks(t) {
		if b.skip != "" {
			continue
		}
		if len(runnable) == 0 || runnable[len(runnable)-1].heading != b.heading {
			sections = append(sections, nil)
		}
		sections[len(sections)-1] = append(sections[len(sections)-1], b)
		runnable = append(runnable, b)
	}
	if len(runnable) < 10 {
		t.Errorf("the README has %d sh blocks the test runs; want at least 10", len(runnable))
	}
	if len(sections) < 8 {
		t.Errorf("the README has %d sections with sh blocks the test runs; want at least 8", len(sections))
	}
	t.Run("in order", func(t *testing.T) {
		t.Parallel()
		runREADMEBlocks(t, bin, runnable)
	})
	for _, sec := range sections {
		t.Run("alone/"+strings.TrimPrefix(sec[0].heading, "## "), func(t *testing.T) {
			t.Parallel()
			runREADMEBlocks(t, bin, sec)
		})
	}
}

// runREADMEBlocks runs blocks, in order, against a fresh daemon, each in a
// fresh bash, in a fresh working directory that holds the repository's
// examples.
func runREADMEBlocks(t *testing.T, bin string, blocks []readmeShellBlock) {
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
			t.Errorf("README.md:%d (%s): %v\n--- block:\n%s--- output:\n%s", b.line, b.heading, err, b.text, out)
		}
	}
}
