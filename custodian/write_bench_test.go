package custodian_test

import (
	"fmt"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// BenchmarkOwnerPutField: an owner's write of an existing field, one at a
// time, through the journal (memory store: the engine's own cost).
func BenchmarkOwnerPutField(b *testing.B) {
	ts := benchFields(b)
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := ts.PutField(ctx, ts.owner, fmt.Sprintf("bench.k%d", i%100), input[custodian.FieldInput](ts, []byte(fmt.Sprintf(`{"value":"v%d"}`, i)))); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkOwnerGetField: an owner's read of a field.
func BenchmarkOwnerGetField(b *testing.B) {
	ts := benchFields(b)
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := ts.GetField(ctx, ts.owner, fmt.Sprintf("bench.k%d", i%100), ""); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// benchFields is a service with no claim cache and the owner's fields
// bench.k0 … bench.k99.
func benchFields(b *testing.B) *testService {
	ts := newTestService(b, func(c *custodian.Config) { c.ClaimCacheBytes = 0 })
	for i := range 100 {
		if _, _, err := ts.PutField(b.Context(), ts.owner, fmt.Sprintf("bench.k%d", i), input[custodian.FieldInput](ts, []byte(`{"value":"v"}`))); err != nil {
			b.Fatal(err)
		}
	}
	return ts
}
