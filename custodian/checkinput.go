package custodian

import (
	"encoding/json"
	"reflect"
)

// checkInput holds an input built by hand (not decoded by an adapter) to
// the trust-boundary checks of a decoded body: it is encoded and decoded
// again with decodeStrict's limits (size, depth, string bytes, members),
// so that no face gets past them by handing the core a struct.
//
// TODO(typedin): fold into the one validation of Service.Decode.
func checkInput(op string, in any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return wrap(op, KindInvalid, err)
	}
	return decodeStrict(op, raw, reflect.New(reflect.TypeOf(in)).Interface())
}
