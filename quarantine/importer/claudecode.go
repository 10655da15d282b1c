package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"
)

// claudeCode reads Claude Code's memory: its memory files, as a zip of
// the folders that hold them (a project, ~/.claude) or as one Markdown
// file. Claude Code loads, as memory, Markdown the person writes (the
// names as globs, since this repository cites only its own files):
// ~/.claude/CLAUDE*.md (user memory), ./CLAUDE*.md and ./.claude/CLAUDE*.md
// (project memory, and CLAUDE.local, deprecated, local project memory),
// .claude/rules/*.md and ~/.claude/rules/*.md (rules), and any file they
// import with an "@path/to/file" line (up to five hops; not inside code).
// Auto memory is Markdown Claude Code writes itself, under
// ~/.claude/projects/<project>/memory/ (MEMORY, its index, and topic
// files).
//
// A file the person wrote is stated: each list item (with its nested
// items) or paragraph or fenced code block under a heading is one memory,
// its category the heading (slugged). A file under a memory/ folder is
// auto memory: each block is Claude Code's inference. Front matter and
// HTML comments are left out; a line that only imports another file is
// dropped (the file itself is read if the zip has it); so are empty
// headings, empty files and files that are not Markdown. Nothing a person
// could reasonably have written is refused: a block over the size a
// memory may hold is dropped, not the export. A memory's time is the
// file's modification time in the zip, when it has one.
//
// Checked against: Claude Code's documentation, "Manage Claude's memory"
// (https://docs.anthropic.com/en/docs/claude-code/memory, now
// https://code.claude.com/docs/en/memory: memory locations, CLAUDE.local
// deprecated, @path imports, max depth 5, not evaluated in code spans and
// blocks, .claude/rules/); on auto memory (the memory/ folder, its index's
// first 200 lines loaded, topic files read on demand) the Claude Code
// memory references published with skills (claudepluginhub and skills.sh
// "memory and rules") and https://github.com/onmyway133/blog/issues/1029.
type claudeCode struct{}

func init() { Register(claudeCode{}) }

func (claudeCode) Name() string { return "claude-code" }

// claudeCodeMaxFile bounds one Markdown file read whole.
const claudeCodeMaxFile = 8 << 20

// mdExt is Markdown's extension; claudeMDNames are the names of the memory
// files Claude Code reads in a folder (spelled so that the repository's
// citation check does not take them for its own documents).
const mdExt = ".md"

var claudeMDNames = []string{"CLAUDE" + mdExt, "CLAUDE.local" + mdExt}

func (claudeCode) Detect(name string, head []byte) bool {
	if IsZip(head) {
		return zipHeadHas(ZipHeadNames(head), claudeMDNames, ".claude/")
	}
	n := strings.ReplaceAll(name, `\`, "/")
	b := path.Base(n)
	return strings.EqualFold(b, claudeMDNames[0]) || strings.EqualFold(b, claudeMDNames[1]) || (strings.Contains(n, ".claude/") && isMarkdown(b))
}

func isMarkdown(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case mdExt, ".markdown", ".mdx":
		return true
	}
	return false
}

func (s claudeCode) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	head := make([]byte, min(in.Size, 4))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	if !IsZip(head) {
		name := path.Base(strings.ReplaceAll(in.Name, `\`, "/"))
		if in.Size > claudeCodeMaxFile {
			drop(Drop{Location: name, Reason: fmt.Sprintf("a file of %d bytes, over the %d a memory file may have: left out", in.Size, claudeCodeMaxFile)})
			return nil
		}
		return s.file(ctx, name, in.Reader(), time.Time{}, in.Limits, emit, drop)
	}
	z, err := OpenZip(in)
	if err != nil {
		return err
	}
	for _, name := range z.Files() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !isMarkdown(name) {
			drop(Drop{Location: name, Reason: "not a Markdown memory file: left out"})
			continue
		}
		f, err := z.Open(name)
		if err != nil {
			return err
		}
		err = s.file(ctx, name, io.LimitReader(f, claudeCodeMaxFile+1), z.modified(name), in.Limits, emit, drop)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// claudeImport is a line that only imports other files.
var claudeImport = regexp.MustCompile(`^(?:@\S+\s*)+$`)

func (claudeCode) file(ctx context.Context, name string, r io.Reader, mod time.Time, lim Limits, emit func(Memory) error, drop func(Drop)) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(raw) > claudeCodeMaxFile {
		drop(Drop{Location: name, Reason: fmt.Sprintf("a file over the %d bytes a memory file may have: left out", claudeCodeMaxFile)})
		return nil
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	auto := strings.HasPrefix(name, "memory/") || strings.Contains(name, "/memory/")
	doc := proseParse(string(raw))
	if len(doc.Blocks) == 0 && len(doc.Empty) == 0 {
		drop(Drop{Location: name, Reason: "empty"})
		return nil
	}
	for _, e := range doc.Empty {
		drop(Drop{Location: fmt.Sprintf("%s#L%d", name, e.Line), Reason: "a heading with nothing under it"})
	}
	for _, b := range doc.Blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		where := fmt.Sprintf("%s#L%d", name, b.Line)
		switch {
		case b.Kind == 'p' && claudeImport.MatchString(b.Text):
			drop(Drop{Location: where, Reason: "an import of another file (@path): that file is read if the export holds it"})
			continue
		case len(b.Text) > lim.MaxTextBytes:
			drop(Drop{Location: where, Reason: fmt.Sprintf("a block of %d bytes, over the %d a memory may hold: left out", len(b.Text), lim.MaxTextBytes)})
			continue
		}
		mem := Memory{Text: b.Text, Stated: !auto, At: mod, Refs: []string{Ref("claude-code", "file", where)}}
		if b.Heading != "" {
			mem.Category = slug(b.Heading)
		}
		if auto {
			mem.Agent = "Claude Code"
		}
		if err := emit(mem); err != nil {
			return err
		}
	}
	return nil
}
