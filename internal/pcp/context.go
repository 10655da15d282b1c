package pcp

import (
	"encoding/json"
	"strconv"
)

// EncodeContext writes a context answer, {"revision", "claims",
// "persona"}, from the encodings of its claims (each a claim of the
// binding, encoded once and cached by the caller) and of its persona
// (omitted when nil): a read of many claims does not encode them again.
func EncodeContext(revision uint64, claims []json.RawMessage, persona json.RawMessage) []byte {
	n := 64
	for _, c := range claims {
		n += len(c) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"revision":`...)
	b = strconv.AppendUint(b, revision, 10)
	b = append(b, `,"claims":[`...)
	for i, c := range claims {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	b = append(b, ']')
	if persona != nil {
		b = append(b, `,"persona":`...)
		b = append(b, persona...)
	}
	return append(b, '}')
}
