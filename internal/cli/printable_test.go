package cli

import "testing"

func TestPrintable(t *testing.T) {
	t.Parallel()
	tag := func(s string) string {
		out := ""
		for _, r := range s {
			out += string(rune(0xE0000 + r))
		}
		return out
	}
	tests := []struct{ in, want string }{
		{"Practice Spanish", "Practice Spanish"},
		{"café 日本 ✓", "café 日本 ✓"},
		{"a\tb\nc", `a\tb\nc`},
		{"\x1b[31mred", `\u001b[31mred`},
		{"x\u200by", `x\u200by`},   // zero-width space
		{"x\u202ey", `x\u202ey`},   // right-to-left override
		{"x\u200fy", `x\u200fy`},   // right-to-left mark
		{"\ufeffbom", `\ufeffbom`}, // byte-order mark
		{"soft\u00adhyphen", `soft\u00adhyphen`},
		{"go" + tag("hi"), `go\U000e0068\U000e0069`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"\ufffd\xff", "\ufffd" + `\xff`}, // a real U+FFFD stays, a bad byte is escaped
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
