package httpapi

import (
	"bytes"

	"github.com/phc-project/phc/custodian"
)

// decodeInput decodes the JSON body raw of operation op into the core
// method's input v, with the core's trust-boundary checks; an empty body,
// where allowEmpty, leaves v its zero value.
//
// TODO(typedin): use Service.Decode.
func decodeInput(op string, raw []byte, v any, allowEmpty bool) error {
	if allowEmpty && len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return custodian.DecodeBody(op, raw, v)
}
