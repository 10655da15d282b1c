package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteTable writes the report as a table, one case a line, with the
// detail of each failure and skip below its line, then the notes and a
// summary line.
func (r *Report) WriteTable(w io.Writer) error {
	width := 0
	for _, res := range r.Results {
		width = max(width, len(res.ID))
	}
	for _, res := range r.Results {
		if _, err := fmt.Fprintf(w, "%-5s  %-*s  %s\n", res.Outcome, width, res.ID, oneLine(res.Title)); err != nil {
			return err
		}
		if res.Detail != "" {
			fmt.Fprintf(w, "       %s\n", oneLine(res.Detail))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", oneLine(n))
	}
	_, err := fmt.Fprintf(w, "%d cases against %s: %d passed, %d failed, %d skipped, %d XFAIL (known bugs)\n",
		len(r.Results), r.Target, r.Count(Pass), r.Count(Fail), r.Count(Skip), r.Count(XFail))
	return err
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// oneLine shows text on one line with control characters escaped: answers
// are untrusted.
func oneLine(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069):
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
