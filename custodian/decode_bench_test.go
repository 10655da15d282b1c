package custodian

import (
	"testing"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/schema"
)

// BenchmarkDecodeBody compares a proposal and a confirmation decoded as
// the core decoded raw bodies (decodeDoc, decodeStrict) with Decode and the
// method's accept, which the adapters and the core now do between them.
func BenchmarkDecodeBody(b *testing.B) {
	v, err := schema.New()
	if err != nil {
		b.Fatal(err)
	}
	s := &Service{schema: v}
	proposal := []byte(`{"key":"work.project.alpha","value":{"name":"alpha","since":"2024-01-01","tags":["a","b"]},"kind":"fact","assertion":"reported","reported":{"app":"bench"},"evidence":[{"ref":"chat:1"}],"note":"from the bench"}`)
	confirm := []byte(`{"personas":["work"]}`)
	b.Run("proposal/raw", func(b *testing.B) {
		for b.Loop() {
			var in ProposalInput
			if err := model.DecodeDoc(s.schema, "propose", schema.Proposal, proposal, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proposal/typed", func(b *testing.B) {
		for b.Loop() {
			var in ProposalInput
			if err := s.Decode("propose", proposal, &in); err != nil {
				b.Fatal(err)
			}
			if err := s.accept("propose", &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proposal/accept", func(b *testing.B) {
		var in ProposalInput
		if err := s.Decode("propose", proposal, &in); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := s.accept("propose", &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("confirm/raw", func(b *testing.B) {
		for b.Loop() {
			var in ConfirmInput
			if err := model.DecodeStrict("confirm", confirm, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("confirm/typed", func(b *testing.B) {
		for b.Loop() {
			var in ConfirmInput
			if err := s.Decode("confirm", confirm, &in); err != nil {
				b.Fatal(err)
			}
			if err := s.accept("confirm", &in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
