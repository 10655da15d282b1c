package importer

import (
	"strings"
	"testing"
)

func TestProseStatements(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		sentences bool
		want      []string // heading|text|time
	}{
		{"bold headings and prose", "**Work context**\nAlex is a nurse. Works nights, e.g. Fridays. Dr. Reyes is her manager!\n\n**Personal context**\n\n- Likes figs.",
			true, []string{"Work context|Alex is a nurse.|", "Work context|Works nights, e.g. Fridays.|", "Work context|Dr. Reyes is her manager!|", "Personal context|Likes figs.|"}},
		{"a model's answer", "Here's what I remember:\n\n1. Lives in Porto.\n2) Has a cat named Miso.\n\nAnything else?", false,
			[]string{"|Lives in Porto.|", "|Has a cat named Miso.|"}},
		{"a code block of dated lines", "```\n[2025-01-02] - Likes tea.\n- [unknown] - Dislikes rain.\n2025-03-04: Runs.\n```", false,
			[]string{"|Likes tea.|2025-01-02", "|Dislikes rain.|", "|Runs.|2025-03-04"}},
		{"setext heading and nested items", "Tools\n-----\n- Go\n  - gofmt always\n- Make", false, []string{"Tools|Go\n- gofmt always|", "Tools|Make|"}},
		{"a tag is not a date", "- [stated] Prefers metric units", false, []string{"|[stated] Prefers metric units|"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range proseStatements(tc.text, tc.sentences) {
				at := ""
				if !s.At.IsZero() {
					at = s.At.Format("2006-01-02")
				}
				got = append(got, s.Heading+"|"+s.Text+"|"+at)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestMemoryDump(t *testing.T) {
	list := "Sure:\n\n- Lives in Porto.\n- Has a cat."
	tests := []struct {
		request, answer string
		want            int
	}{
		{"What do you remember about me?", list, 2},
		{"List every memory you have stored about me.", list, 2},
		{"Plan a trip to Porto", list, 0},
		{"hi", "Here's what I remember about you:\n- Lives in Porto.", 1},
		{"What do you know about me?", "Not much yet.", 0},
	}
	for _, tc := range tests {
		if got := len(memoryDump(tc.request, tc.answer)); got != tc.want {
			t.Errorf("memoryDump(%q, %q): %d statements, want %d", tc.request, tc.answer, got, tc.want)
		}
	}
}

func TestZipHeadNames(t *testing.T) {
	z := zipOf(t, map[string]string{"a/CLAUDE" + mdExt: "x", "users.json": "[]"}, nil)
	names := ZipHeadNames(z)
	if len(names) != 2 || !zipHeadHas(names, []string{"claude" + mdExt}) || !zipHeadHas(names, nil, "a/") {
		t.Fatalf("names %q", names)
	}
	if ZipHeadNames([]byte("PK\x03\x04 short")) != nil {
		t.Error("a truncated header named an entry")
	}
}
