package custodian_test

import "github.com/phc-project/phc/custodian"

// decoder is a Service, or a test fixture that embeds one.
type decoder interface {
	Decode(op string, raw []byte, in custodian.Input) error
}

// input decodes raw into a T as the adapters do (Service.Decode). A
// refusal stays in the input: the method given it answers it where it
// answered a raw body, so the tests that send malformed bodies keep
// their meaning.
func input[T any, P interface {
	*T
	custodian.Input
}, R ~string | ~[]byte](d decoder, raw R) T {
	var in T
	_ = d.Decode("test", []byte(raw), P(&in))
	return in
}
