package httpapi

import (
	"bytes"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/oidcrecipient"
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

// decodeExchange reads the form-encoded body of a token exchange (RFC
// 8693) into the core method's input.
//
// TODO(typedin): use Service.Decode.
func decodeExchange(raw []byte) (custodian.ExchangeInput, error) {
	const op = "token.exchange"
	in, err := oidcrecipient.ParseForm(raw)
	if e, ok := err.(*oidcrecipient.Error); ok {
		if e.TooLarge {
			return in, &custodian.Error{Op: op, Kind: custodian.KindTooLarge}
		}
		return in, &custodian.Error{Op: op, Kind: custodian.KindInvalid, Public: e.Msg}
	}
	return in, err
}
