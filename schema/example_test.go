package schema_test

import (
	"errors"
	"fmt"

	"github.com/phc-project/phc/schema"
)

func ExampleValidator_DecodeValid() {
	v, err := schema.New() // once, when the daemon starts
	if err != nil {
		panic(err)
	}
	body := []byte(`{
		"key": "identity.full_name",
		"value": "Ada Lovelace",
		"kind": "fact",
		"assertion": "told-me",
		"evidence": [{"ref": "urn:chat:1", "url": "https://example.com"}]
	}`)
	doc, violations, err := v.DecodeValid(schema.Proposal, body, schema.DefaultLimits())
	switch {
	case errors.Is(err, schema.ErrTooLarge):
		fmt.Println("413")
	case err != nil:
		fmt.Println("400 invalid_request:", err)
	case violations != nil:
		fmt.Println("400 schema_violation")
		for _, vi := range violations {
			fmt.Printf("%s %s: %s\n", vi.Path, vi.Keyword, vi.Message)
		}
	default:
		fmt.Println("valid:", doc != nil)
	}
	// Output:
	// 400 schema_violation
	// /assertion enum: must be one of the allowed values
	// /evidence/0/url additionalProperties: is not allowed
}

func ExampleDecode() {
	_, err := schema.Decode([]byte(`{"key": "a", "key": "b"}`), schema.Limits{})
	fmt.Println(errors.Is(err, schema.ErrInvalidJSON), err)
	v, _ := schema.Decode([]byte(`{"n": 12345678901234567890}`), schema.Limits{})
	fmt.Printf("%#v\n", v)
	// Output:
	// true invalid json: duplicate member name before offset 18
	// map[string]interface {}{"n":"12345678901234567890"}
}
