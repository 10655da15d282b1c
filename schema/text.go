package schema

// Disguises reports whether r could make a display of untrusted text differ
// from the text itself: a C0 or C1 control or DEL, a line or paragraph
// separator, or a bidirectional formatting character (the marks LRM, RLM
// and ALM, the embeddings and overrides U+202A–U+202E, the isolates
// U+2066–U+2069), which reorder or hide what is shown. The binding's
// purpose pattern (common.json) refuses the same characters; the core
// refuses them in a purpose, and a value reference's display leaves them
// out.
func Disguises(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
