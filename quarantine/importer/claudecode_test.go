package importer

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// claudeCodeZip is a zip of testdata/claude-code, each file modified at
// mod.
func claudeCodeZip(t *testing.T, mod time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	root := "testdata/claude-code"
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f, err := w.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Deflate, Modified: mod})
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = f.Write(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestClaudeCode(t *testing.T) {
	mod := time.Date(2025, 6, 7, 8, 9, 10, 0, time.FixedZone("CEST", 2*3600))
	sum, docs, err := runAll(t, "", "claude-folders.zip", claudeCodeZip(t, mod), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source != "claude-code" || sum.Seen != 14 || sum.Held != 13 || len(sum.Dropped) != 5 {
		t.Fatalf("summary = %+v; want claude-code, 14 seen, 13 held, 5 dropped", sum)
	}
	var reasons []string
	for _, d := range sum.Dropped {
		reasons = append(reasons, d.Location+": "+d.Reason)
		if strings.Contains(d.Location+d.Reason, "s3cret") {
			t.Errorf("a drop quotes the credential: %+v", d)
		}
	}
	for _, want := range []string{"home/.claude/empty" + mdExt + ": empty", "home/.claude/settings.json: not a Markdown", "project/CLAUDE" + mdExt + "#L27: a heading with nothing",
		"project/CLAUDE" + mdExt + "#L30: an import", "credential"} {
		if !strings.Contains(strings.Join(reasons, "\n"), want) {
			t.Errorf("drops %q lack %q", reasons, want)
		}
	}
	at := "2025-06-07T06:09:10Z"
	cases := []heldCase{
		{value: "A small Go service that plans balcony gardens.", assertion: "reported", key: "imported.claude-code.garden_planner.", at: at,
			refs: []string{"claude-code:file/project/CLAUDE" + mdExt + "#L6"}},
		{value: "Build with `go build ./...`", assertion: "reported", key: "imported.claude-code.commands.", at: at},
		{value: "Test with `go test ./...`\n- add `-race` before a release", assertion: "reported", key: "imported.claude-code.commands.", at: at,
			refs: []string{"claude-code:file/project/CLAUDE" + mdExt + "#L11"}},
		{value: "```bash\nmake lint\n```", assertion: "reported", key: "imported.claude-code.commands.", at: at},
		{value: "Use tabs, never spaces.", assertion: "reported", key: "imported.claude-code.code_style.", at: at},
		{value: "Wrap errors with %w.", assertion: "reported", key: "imported.claude-code.code_style.", at: at},
		{value: "Keep functions short;\nunder forty lines if possible.", assertion: "reported", key: "imported.claude-code.code_style.", at: at},
		{value: "Table-driven tests first.", assertion: "reported", key: "imported.claude-code.testing.", at: at,
			refs: []string{"claude-code:file/project/.claude/rules/testing" + mdExt + "#L3"}},
		{value: "Never mock the database.", assertion: "reported", key: "imported.claude-code.testing.", at: at},
		{value: "Sandbox URL is http://localhost:8080.", assertion: "reported", key: "imported.claude-code.", at: at},
		{value: "I prefer British English in comments.", assertion: "reported", key: "imported.claude-code.preferences.", at: at},
		{value: "Call me Sam.", assertion: "reported", key: "imported.claude-code.preferences.", at: at},
		{value: "The user waters tomatoes twice a week (see the watering notes)", assertion: "inferred", key: "imported.claude-code.memory_index.", at: at,
			refs: []string{"claude-code:file/home/.claude/projects/-home-sam-garden/memory/MEMORY" + mdExt + "#L3"}},
	}
	checkHeld(t, docs, cases, []string{"description:", "not a memory", "@~", "s3cret", "theme", "Someday"})
}

func TestClaudeCodeSingleFile(t *testing.T) {
	raw, err := os.ReadFile("testdata/claude-code/project/CLAUDE" + mdExt)
	if err != nil {
		t.Fatal(err)
	}
	sum, docs, err := runAll(t, "", "CLAUDE"+mdExt, raw, nil)
	if err != nil || sum.Source != "claude-code" || sum.Held != 7 {
		t.Fatalf("sum %+v, err %v; want claude-code, 7 held", sum, err)
	}
	if docs[0]["recorded_at"] != "2026-01-02T03:04:05Z" {
		t.Errorf("a file without a time: recorded_at %v, want the import's", docs[0]["recorded_at"])
	}
	// Nothing a person could reasonably write is refused: an empty file,
	// a huge paragraph, binary noise.
	for _, body := range []string{"", strings.Repeat("word ", 20_000), "\x00\xff\xfe# \x01"} {
		if _, _, err := runAll(t, "claude-code", "CLAUDE"+mdExt, []byte(body), nil); err != nil {
			t.Errorf("refused %q…: %v", Clip(body, 20), err)
		}
	}
	for name, want := range map[string]bool{"CLAUDE" + mdExt: true, "claude.local" + mdExt: true, "/home/sam/.claude/rules/go" + mdExt: true, "notes" + mdExt: false, "x.json": false} {
		if got := (claudeCode{}).Detect(name, []byte("# x")); got != want {
			t.Errorf("Detect(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzClaudeCode: no Markdown makes the claude-code reader panic or
// refuse it, and every claim it yields is one version of valid JSON.
func FuzzClaudeCode(f *testing.F) {
	raw, err := os.ReadFile("testdata/claude-code/project/CLAUDE" + mdExt)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte("Title\n===\n- a\n  ```\n  b\n- c\n<!-- d"))
	f.Add([]byte("---\nx: y\n---\n**Bold**\ntext. More text! [2025-01-01] - z"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := inputOf("CLAUDE"+mdExt, b)
		_, err := Run(context.Background(), claudeCode{}, in, nil, time.Now(), 3, func(r quarantine.Records) error {
			for _, c := range r.Claims {
				if len(c.Versions) != 1 || !json.Valid(c.Versions[0]) {
					t.Fatalf("claim %+v", c)
				}
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatalf("refused a Markdown file: %v", err)
		}
		for _, s := range proseStatements(string(b), true) {
			if strings.TrimSpace(s.Text) == "" {
				t.Fatalf("an empty statement from %q", b)
			}
		}
	})
}
