package importer

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file splits Markdown and prose into statements: the blocks of a
// file the person wrote (Claude Code's memory files), and the statements of a prose dump (a
// memory a model printed on request, or kept as one text).

// proseBlock is one unit of a Markdown text: a list item (with its
// continuation lines and nested items), a paragraph, or a fenced code
// block, under the nearest heading above it.
type proseBlock struct {
	Heading string // the nearest heading's text, "" above the first
	Text    string
	Line    int  // the 1-based line the block starts on
	Kind    byte // 'i' list item, 'p' paragraph, 'c' fenced code block
	Inner   string
}

// proseDoc is a Markdown text as blocks, and the headings nothing is
// written under (Empty, their Text the heading).
type proseDoc struct {
	Blocks []proseBlock
	Empty  []proseBlock
}

var (
	proseHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	proseBold    = regexp.MustCompile(`^(?:\*\*|__)([^*_]+)(?:\*\*|__):?$`)
	proseItem    = regexp.MustCompile(`^([ \t]*)(?:[-*+•]|\d{1,9}[.)])(?:[ \t]+(.*))?$`)
	proseRule    = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|={3,})$`)
	proseFence   = regexp.MustCompile("^[ \t]*(`{3,}|~{3,})")
)

// proseParse splits text into blocks. A YAML front matter at its start and
// HTML comments are left out; a line that is only bold text (**Work
// context**) heads what follows it, as a heading does.
func proseParse(text string) proseDoc {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for j := 1; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); t == "---" || t == "..." {
				start = j + 1
				break
			}
		}
	}
	var p proseParser
	for i := start; i < len(lines); i++ {
		p.line(i+1, strings.TrimRight(lines[i], " \t\r"))
	}
	p.flush()
	p.closeHeading()
	return p.doc
}

type proseParser struct {
	doc         proseDoc
	heading     string
	headingLine int
	filled      bool // something is written under the heading
	cur         *proseBlock
	lines       []string
	itemIndent  int
	blank       bool   // a blank line since the current item's last line
	fence       string // the open fence, "" when none
	fenceInItem bool
	comment     bool
}

func (p *proseParser) flush() {
	if p.cur != nil {
		p.cur.Text = strings.TrimSpace(strings.Join(p.lines, "\n"))
		if p.cur.Kind == 'c' && len(p.lines) > 2 {
			p.cur.Inner = strings.Join(p.lines[1:len(p.lines)-1], "\n")
		} else if p.cur.Kind == 'c' && len(p.lines) == 2 {
			p.cur.Inner = p.lines[1]
		}
		if p.cur.Text != "" {
			p.doc.Blocks = append(p.doc.Blocks, *p.cur)
			p.filled = true
		}
	}
	p.cur, p.lines, p.blank = nil, nil, false
}

func (p *proseParser) closeHeading() {
	if p.heading != "" && !p.filled {
		p.doc.Empty = append(p.doc.Empty, proseBlock{Heading: p.heading, Text: p.heading, Line: p.headingLine})
	}
}

func (p *proseParser) setHeading(n int, h string) {
	p.flush()
	p.closeHeading()
	p.heading, p.headingLine, p.filled = strings.TrimSpace(h), n, false
}

func (p *proseParser) start(n int, kind byte, first string) {
	p.flush()
	p.cur = &proseBlock{Heading: p.heading, Line: n, Kind: kind}
	p.lines = []string{first}
}

func proseIndent(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

func (p *proseParser) line(n int, line string) {
	t := strings.TrimSpace(line)
	switch {
	case p.fence != "":
		p.lines = append(p.lines, line)
		if strings.HasPrefix(t, p.fence) && strings.Trim(t, p.fence[:1]) == "" {
			p.fence = ""
			if !p.fenceInItem {
				p.flush()
			}
		}
		return
	case p.comment:
		if strings.Contains(line, "-->") {
			p.comment = false
		}
		return
	case t == "":
		if p.cur != nil && p.cur.Kind == 'i' {
			p.blank = true
		} else {
			p.flush()
		}
		return
	case strings.HasPrefix(t, "<!--"):
		p.comment = !strings.Contains(t[4:], "-->")
		return
	}
	if m := proseFence.FindStringSubmatch(line); m != nil {
		p.fence = m[1]
		if p.cur != nil && p.cur.Kind == 'i' && proseIndent(line) > p.itemIndent {
			p.fenceInItem = true
			p.lines = append(p.lines, strings.TrimSpace(line))
			return
		}
		p.fenceInItem = false
		p.start(n, 'c', line)
		return
	}
	if m := proseHeading.FindStringSubmatch(line); m != nil {
		p.setHeading(n, strings.TrimRight(strings.TrimSpace(m[2]), "#"))
		return
	}
	if proseRule.MatchString(line) {
		if p.cur != nil && p.cur.Kind == 'p' && len(p.lines) == 1 && !strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "_") {
			h := p.lines[0]
			p.cur = nil // a setext heading: the paragraph above is its text
			p.setHeading(n-1, h)
			return
		}
		p.flush()
		return
	}
	if m := proseBold.FindStringSubmatch(t); m != nil && (p.cur == nil || p.blank) {
		p.setHeading(n, m[1])
		return
	}
	if m := proseItem.FindStringSubmatch(line); m != nil {
		ind := proseIndent(m[1])
		if p.cur != nil && p.cur.Kind == 'i' && ind > p.itemIndent {
			p.lines = append(p.lines, t)
			p.blank = false
			return
		}
		p.start(n, 'i', m[2])
		p.itemIndent = ind
		return
	}
	if p.cur != nil && (p.cur.Kind == 'p' || (p.cur.Kind == 'i' && (!p.blank || proseIndent(line) > p.itemIndent))) {
		p.lines = append(p.lines, t)
		p.blank = false
		return
	}
	p.start(n, 'p', t)
}

// proseAbbrev are words a full stop follows without ending a sentence.
var proseAbbrev = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true, "ms": true,
	"dr": true, "st": true, "jr": true, "sr": true, "prof": true, "inc": true, "ltd": true, "co": true, "no": true,
	"approx": true, "cf": true, "al": true, "fig": true}

// proseSentences splits a paragraph of prose into its sentences.
func proseSentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(text) && strings.IndexByte(`"')]`, text[j]) >= 0 {
			j++
		}
		if j+1 >= len(text) || text[j] != ' ' {
			continue
		}
		next, _ := utf8.DecodeRuneInString(text[j+1:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune(`"'“‘(`, next) {
			continue
		}
		if c == '.' {
			w := text[start:i]
			if k := strings.LastIndexByte(w, ' '); k >= 0 {
				w = w[k+1:]
			}
			w = strings.ToLower(strings.TrimLeft(w, `"'(`))
			if proseAbbrev[w] || utf8.RuneCountInString(w) == 1 {
				continue
			}
		}
		if s := strings.TrimSpace(text[start:j]); s != "" {
			out = append(out, s)
		}
		start = j + 1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// proseDated matches a statement that begins with its date: "[2025-03-04]
// - text", "[2025-03-04]. text", "2025-03-04: text".
var proseDated = regexp.MustCompile(`^(?:\[([^\]]{1,40})\]|(\d{4}-\d{2}-\d{2}))\s*([-–—:.]?)\s+(\S.*)$`)

// proseDate splits a leading date off s, when s has one ParseTime reads.
// A bracketed placeholder in the date's place ("[unknown] - text") is
// split off too, leaving no time.
func proseDate(s string) (rest string, at time.Time, raw string) {
	m := proseDated.FindStringSubmatch(s)
	if m == nil {
		return s, time.Time{}, ""
	}
	if t, r, ok := ParseTime(m[1] + m[2]); ok {
		return m[4], t, r
	}
	if m[1] != "" && m[3] != "" && m[3] != "." && m[3] != ":" {
		return m[4], time.Time{}, ""
	}
	return s, time.Time{}, ""
}

// proseStatement is one statement of a prose dump.
type proseStatement struct {
	Heading string
	Text    string
	At      time.Time
	RawTime string
}

// proseStatements splits a prose dump into statements: each list item is
// one, and each line of a code block (where a model prints a list it was
// asked for); a paragraph is one statement per sentence when sentences is
// true (a memory kept as prose), otherwise only when it is a dated line
// (the intro and the closing question of a model's answer are not
// statements). A leading date is the statement's time.
func proseStatements(text string, sentences bool) []proseStatement {
	var out []proseStatement
	add := func(heading, s string) {
		s = strings.TrimSpace(s)
		rest, at, raw := proseDate(s)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return
		}
		out = append(out, proseStatement{Heading: heading, Text: rest, At: at, RawTime: raw})
	}
	for _, b := range proseParse(text).Blocks {
		switch b.Kind {
		case 'i':
			add(b.Heading, b.Text)
		case 'c':
			for _, l := range strings.Split(b.Inner, "\n") {
				if m := proseItem.FindStringSubmatch(l); m != nil {
					l = m[2]
				}
				if t := strings.TrimSpace(l); t != "" && !proseHeading.MatchString(t) {
					add(b.Heading, t)
				}
			}
		case 'p':
			for _, l := range strings.Split(b.Text, "\n") {
				if _, at, _ := proseDate(l); !at.IsZero() {
					add(b.Heading, l)
				} else if sentences {
					for _, s := range proseSentences(l) {
						add(b.Heading, s)
					}
				}
			}
		}
	}
	return out
}

// memoryRequest matches a person's request to be told their memory ("what
// do you remember about me?", "list every memory you have stored about
// me"); memoryAnswer matches a model's answer printing it.
var (
	memoryRequest = regexp.MustCompile(`(?i)(remember|know|memor(y|ies)|stored|saved|learned)\b[^.?!\n]{0,80}\babout me\b|\b(list|show|print|dump|export|tell me|output)\b[^.?!\n]{0,60}\bmemor(y|ies)\b`)
	memoryAnswer  = regexp.MustCompile(`(?i)\b(here'?s|here is|this is|below is)\b[^.\n]{0,40}\b(what|everything|all)\b[^.\n]{0,20}\bi\b[^.\n]{0,30}\b(remember|know|stored|saved|have)\b|\b(memories|memory)\b[^.\n]{0,40}\babout you\b`)
)

// memoryDump returns the statements of answer when it is a model printing
// the person's memory on request (the request is the person's message it
// answers), or nil.
func memoryDump(request, answer string) []proseStatement {
	if !memoryRequest.MatchString(request) && !memoryAnswer.MatchString(answer) {
		return nil
	}
	return proseStatements(answer, false)
}
