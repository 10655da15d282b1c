package webui

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// isBidiControl reports whether r is one of the invisible characters that
// reorder the text around them: the marks, embeddings, overrides and
// isolates of Unicode's bidirectional algorithm.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// showBidi makes the bidi controls in a page's text visible: each one in
// text content is written as "[U+202E]" instead, so that text an app
// supplied ("\u202eSAFE OK") shows what it holds instead of reordering
// itself ("KO EFAS"). The stylesheet isolates each inline element besides,
// so that no text reorders its neighbours. Inside tags (attribute values)
// and in a <textarea>, whose text is a form's value, the characters stay:
// a form sends back what it was given.
//
// page is html/template's output, where '<' and '>' outside markup are
// always escaped, so a '<' starts a tag and a '>' ends one.
func showBidi(page []byte) []byte {
	if !bytes.ContainsFunc(page, isBidiControl) {
		return page
	}
	var out bytes.Buffer
	out.Grow(len(page) + 64)
	inTag, inTextarea := false, false
	for i := 0; i < len(page); {
		c := page[i]
		switch {
		case c == '<':
			inTag = true
			rest := page[i:]
			if hasPrefixFold(rest, "<textarea") {
				inTextarea = true
			} else if hasPrefixFold(rest, "</textarea") {
				inTextarea = false
			}
		case c == '>':
			inTag = false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(page[i:])
			if isBidiControl(r) && !inTag && !inTextarea {
				fmt.Fprintf(&out, "[U+%04X]", r)
				i += n
				continue
			}
			out.Write(page[i : i+n])
			i += n
			continue
		}
		out.WriteByte(c)
		i++
	}
	return out.Bytes()
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}
