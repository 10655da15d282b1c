package importer

import (
	"bytes"
	"context"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// basicMemory reads a Basic Memory knowledge base: a zip of its project
// folder, or one note (.md). Its format was checked in
// basicmachines-co/basic-memory at commit 4d1dfdb7e2cf: the note format
// (https://github.com/basicmachines-co/basic-memory/blob/4d1dfdb7e2cf/docs/NOTE-FORMAT.md)
// and the README's "The Markdown format", and the parser itself,
// src/basic_memory/markdown/plugins.py (observations and relations),
// schemas.py (Observation, Relation, EntityFrontmatter) and
// entity_parser.py (the created and modified frontmatter times).
//
// A note is markdown with YAML frontmatter (title, type, permalink, tags,
// created, modified, and any other field). Its list items are read:
//   - an observation, "- [category] content #tag (context)", is a memory
//     whose category is its [category] (an item with #tags and no
//     category is of category "Note", as Basic Memory has it); its text
//     is the note's title, ": ", and the item without its category;
//     checkboxes ([ ], [x], [-] and the like), markdown links, clock
//     times ([00:01:02]) and one-character markers are not categories;
//   - an explicit relation, "- relation_type [[Target]] (context)" (or a
//     quoted multi-word type), is a fact, not a relationship claim (those
//     need entities, which an import does not make): its text is "<title>
//     <relation_type> <Target>" and it is held under
//     imported.basic-memory.relations (category "relations", which a
//     mapping can send elsewhere).
//
// Prose, headings, blockquotes, code blocks, bare [[links]] and inline
// links are not memories and are not read (a note with none of the above
// is reported). A note is the person's own file in their knowledge base,
// so what it says is stated (reported) — Basic Memory does not record
// whether the person typed a note or had an assistant write it through
// Basic Memory's tools. A memory's time is the note's modified time, else
// its created time, from its frontmatter. Evidence keeps the note's
// permalink (or path), the file, the line and the item's tags.
type basicMemory struct{}

func init() { Register(basicMemory{}) }

func (basicMemory) Name() string { return "basic-memory" }

var (
	bmObservationLine = regexp.MustCompile(`(?m)^\s*[-*+] \[[^\[\]()]+\] \S`)
	bmRelationLine    = regexp.MustCompile(`(?m)^\s*[-*+] (?:[^\s\[]+|"[^"]+"|'[^']+') \[\[[^\]]+\]\]`)
	bmPermalink       = regexp.MustCompile(`(?m)^permalink:`)
)

// bmNotNotes are markdown files of other tools, never Basic Memory notes.
var bmNotNotes = map[string]bool{"claude" + mdExt: true, "claude.local" + mdExt: true, "agents" + mdExt: true, "gemini" + mdExt: true}

func (basicMemory) Detect(name string, head []byte) bool {
	if IsZip(head) {
		md := false
		for _, n := range ZipHeadNames(head) {
			if hidden(n) {
				continue
			}
			switch ext := strings.ToLower(path.Ext(n)); {
			case ext == ".json" || ext == ".jsonl" || ext == ".gz" || bmNotNotes[strings.ToLower(path.Base(n))]:
				return false
			case ext == mdExt:
				md = true
			}
		}
		return md
	}
	if strings.ToLower(path.Ext(name)) != mdExt || bmNotNotes[strings.ToLower(path.Base(name))] {
		return false
	}
	fm := bytes.HasPrefix(head, []byte("---"))
	return (fm && bmPermalink.Match(head)) || bmObservationLine.Match(head) || bmRelationLine.Match(head)
}

func (s basicMemory) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	head := make([]byte, min(in.Size, 4))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	if !IsZip(head) {
		if in.Size > in.Limits.MaxBytes {
			return refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
		}
		return s.note(ctx, path.Base(in.Name), in.Reader(), in.Limits, emit, drop)
	}
	z, err := OpenZip(in)
	if err != nil {
		return err
	}
	notes := 0
	for _, name := range z.Files() {
		if hidden(name) {
			continue
		}
		if strings.ToLower(path.Ext(name)) != mdExt {
			drop(Drop{Location: name, Reason: "not a note (markdown)"})
			continue
		}
		notes++
		rc, err := z.Open(name)
		if err != nil {
			return err
		}
		err = s.note(ctx, name, rc, in.Limits, emit, drop)
		rc.Close()
		if err != nil {
			return err
		}
	}
	if notes == 0 {
		drop(Drop{Location: in.Name, Reason: "no notes (markdown files)"})
	}
	return nil
}

// hidden reports whether name is in a hidden folder or is a hidden file
// (.git, .obsidian, .DS_Store, …).
func hidden(name string) bool {
	for _, seg := range strings.Split(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// bmNote is what a note's frontmatter says.
type bmNote struct {
	file, title, permalink string
	created, modified      string
}

// note reads one note, file, from r.
func (s basicMemory) note(ctx context.Context, file string, r io.Reader, lim Limits, emit func(Memory) error, drop func(Drop)) error {
	n := bmNote{file: file, title: strings.TrimSuffix(path.Base(file), path.Ext(file))}
	inFront, fence, items := false, "", 0
	err := eachLine(r, lim.MaxTextBytes, func(no int, line string, cut bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		trim := strings.TrimSpace(line)
		switch {
		case no == 1 && trim == "---":
			inFront = true
			return nil
		case inFront:
			if trim == "---" || trim == "..." {
				inFront = false
			} else {
				n.front(line)
			}
			return nil
		case fence != "":
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			return nil
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			fence = trim[:3]
			return nil
		}
		item, ok := listItem(trim)
		if !ok {
			return nil
		}
		if cut {
			drop(Drop{Location: file + ":" + strconv.Itoa(no), Reason: "a line longer than a memory may be"})
			return nil
		}
		m, ok := n.item(item)
		if !ok {
			return nil
		}
		items++
		m.Refs = append(m.Refs, Ref("basic-memory", "line", strconv.Itoa(no)))
		return emit(m)
	})
	if err == nil && items == 0 {
		drop(Drop{Location: file, Reason: "no observations or relations (prose is not imported)"})
	}
	return err
}

// front reads one line of the frontmatter.
func (n *bmNote) front(line string) {
	key, value, ok := strings.Cut(line, ":")
	if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
		return
	}
	value = strings.Trim(strings.TrimSpace(value), `"'`)
	switch strings.TrimSpace(key) {
	case "title":
		if value != "" {
			n.title = value
		}
	case "permalink":
		n.permalink = value
	case "created":
		n.created = value
	case "modified":
		n.modified = value
	}
}

// listItem is the content of a markdown list item line (not in a
// blockquote).
func listItem(trim string) (string, bool) {
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(trim, p) {
			return strings.TrimSpace(trim[len(p):]), true
		}
	}
	if rest := trimListMarker(trim); rest != trim {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

var (
	bmCategory   = regexp.MustCompile(`^\[([^\[\]()]+)\]\s+(.+)`)
	bmTimestamp  = regexp.MustCompile(`^\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?:\s+-\s+\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)?$`)
	bmMarkdownLn = regexp.MustCompile(`^\[.*?\]\(.*?\)$`)
	bmWikiLink   = regexp.MustCompile(`^\[\[.*?\]\]$`)
)

// item is the memory a list item of the note is, if it is an observation
// or an explicit relation.
func (n *bmNote) item(content string) (Memory, bool) {
	if strings.HasPrefix(content, "[ ]") || strings.HasPrefix(content, "[x]") || strings.HasPrefix(content, "[-]") ||
		bmMarkdownLn.MatchString(content) || bmWikiLink.MatchString(content) {
		return Memory{}, false
	}
	m := Memory{Stated: true}
	if typ, target, context, ok := relation(content); ok {
		m.Category, m.Text = "relations", n.title+" "+typ+" "+target
		if context != "" {
			m.Text += " (" + context + ")"
		}
	} else {
		category, text := "", content
		if g := bmCategory.FindStringSubmatch(content); g != nil {
			c := strings.TrimSpace(g[1])
			if !bmTimestamp.MatchString(c) && !(len([]rune(c)) == 1 && (c == "x" || c == "X" || !isAlnum(c))) {
				category, text = c, strings.TrimSpace(g[2])
			}
		}
		tags := hashTags(text)
		if category == "" && len(tags) == 0 {
			return Memory{}, false
		}
		if category == "" {
			category = "Note"
			text = strings.TrimSpace(strings.TrimPrefix(text, "[]"))
		}
		m.Category, m.Text = category, n.title+": "+text
		for _, tag := range tags {
			m.Refs = append(m.Refs, Ref("basic-memory", "tag", Clip(tag, 128)))
		}
	}
	if n.permalink != "" {
		m.Refs = append(m.Refs, Ref("basic-memory", "note", n.permalink))
	}
	m.Refs = append(m.Refs, Ref("basic-memory", "file", n.file))
	t := n.modified
	if t == "" {
		t = n.created
	}
	m.At, m.RawTime, _ = ParseTime(t)
	return m, true
}

func isAlnum(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127) {
			return false
		}
	}
	return true
}

// hashTags are the #tags of an observation's text.
func hashTags(text string) []string {
	var tags []string
	for _, w := range strings.Fields(text) {
		if strings.HasPrefix(w, "#") {
			for _, t := range strings.Split(w, "#") {
				if t != "" {
					tags = append(tags, t)
				}
			}
		}
	}
	return tags
}

// relation parses an explicit relation, `type [[Target]] (context)`, the
// type one token or quoted, and nothing after but the context.
func relation(content string) (typ, target, context string, ok bool) {
	before, rest, found := strings.Cut(content, "[[")
	before = strings.TrimSpace(before)
	if !found || before == "" {
		return "", "", "", false
	}
	if q := before[0]; (q == '"' || q == '\'') && len(before) > 1 && before[len(before)-1] == q {
		typ = strings.TrimSpace(before[1 : len(before)-1])
	} else if !strings.ContainsAny(before, " \t") {
		typ = before
	}
	target, after, found := strings.Cut(rest, "]]")
	target = strings.TrimSpace(target)
	if typ == "" || !found || target == "" {
		return "", "", "", false
	}
	after = strings.TrimSpace(after)
	if after != "" {
		if !singleParenthesized(after) {
			return "", "", "", false
		}
		context = strings.TrimSpace(after[1 : len(after)-1])
	}
	return typ, target, context, true
}

// singleParenthesized reports whether s is one balanced "(…)" group.
func singleParenthesized(s string) bool {
	if !strings.HasPrefix(s, "(") {
		return false
	}
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i == len(s)-1
			}
		}
	}
	return false
}
