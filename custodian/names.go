package custodian

import (
	"strings"

	"github.com/mtibben/confusables"
)

// reservedNames are words that name the owner, the custodian or its policy
// (in written_by, confirmation.by, receipts and subjects): no app may be
// called so, nor anything that looks like one of them (see nameKey).
var reservedNames = []string{WrittenByUser, "owner", "auto_grant", "custodian", "anonymous", SubjectSelf, "phc"}

// validConsumerName: 1–64 of [A-Za-z0-9_.-], starting with a letter or
// digit. It is the syntax every route that names a consumer checks; a new
// name must also pass [state.checkNewName].
func validConsumerName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '_' || c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// lookalikes maps, after case folding and the TR39 skeleton, the characters
// and pairs a person still takes for one another in an app's name: digits
// for letters (0/o, 1/l/i, 5/s, …), and the separators for each other.
var lookalikes = strings.NewReplacer(
	"0", "o", "1", "l", "i", "l", "2", "z", "3", "e", "4", "a", "5", "s", "7", "t", "8", "b", "9", "g",
	"vv", "w", "_", "-", ".", "-",
)

// nameKey is what two app names must not share: the Unicode TR39 skeleton
// (which maps "m" to "rn", "I" to "l", "0" to "O" and every confusable
// Unicode letter to its prototype), case-folded, skeletoned again, then
// with the ASCII lookalikes folded. "tutor", "Tutor", "TUTOR" and "tut0r"
// have one key.
func nameKey(name string) string {
	k := confusables.Skeleton(name)
	k = confusables.Skeleton(strings.ToLower(k))
	return lookalikes.Replace(k)
}

// reservedName reports whether name is, or looks like, a reserved word.
func reservedName(name string) bool {
	k := nameKey(name)
	for _, r := range reservedNames {
		if k == nameKey(r) {
			return true
		}
	}
	return false
}

// lookalike returns the registered consumers, other than name itself,
// whose names look like name (with st.mu held).
func (st *state) lookalikes(name string) []*Consumer {
	k := nameKey(name)
	var out []*Consumer
	for n, c := range st.Consumers {
		if n != name && nameKey(n) == k {
			out = append(out, c)
		}
	}
	return out
}
