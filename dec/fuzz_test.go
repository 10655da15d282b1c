package dec

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/dec/dectype"
)

// FuzzVerify: nothing panics; every problem has a known code; a document
// that is structurally sound gives the same report as its compact
// re-encoding (the wrapper's member order and whitespace mean nothing; the
// entries' bytes are what is signed). Seeded from the vectors.
//
//	go test -fuzz=FuzzVerify -fuzztime=60s -fuzzminimizetime=2s ./dec
func FuzzVerify(f *testing.F) {
	vs := loadVectors(f)
	for _, v := range vs {
		// Small documents only: each signature check is slow under the
		// fuzzer's instrumentation, and a 50-entry seed makes every
		// mutation of it cost 50.
		if v.Synthetic == "" && len(v.Document) < 8<<10 {
			f.Add([]byte(v.Document))
		}
	}
	// The vectors' keys are pinned, so mutations reach the signature
	// checks too. Run it with a short minimization: the default 60 s per
	// new input spends a 60 s run minimizing the first one (otherwise
	// about 15,000 executions a second):
	//
	//	go test -fuzz=FuzzVerify -fuzztime=60s -fuzzminimizetime=2s ./dec
	trust := trustOf(f, vs[0])
	f.Fuzz(func(t *testing.T, raw []byte) {
		rep := Verify(raw, trust)
		for _, v := range []dectype.Verdict{rep.Structural, rep.Signature, rep.Chain} {
			for _, p := range v.Problems {
				if !knownCodes[p.Code] {
					t.Fatalf("unknown problem code %q", p.Code)
				}
			}
		}
		if rep.Structural.OK {
			// Member order and whitespace of the wrapper carry no meaning:
			// the compact form of a sound document says exactly the same.
			var d dectype.Document
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatalf("a structurally sound document does not decode: %v", err)
			}
			again := Verify(d.Encode(), trust)
			if !reflect.DeepEqual(again, rep) {
				t.Fatalf("the compact form of a sound document verifies differently:\n%+v\n%+v", again, rep)
			}
		}
		if rep.Replay != "not_asserted" || rep.GrantsAccess {
			t.Fatal("a report asserted replay or access")
		}
	})
}

var knownCodes = map[string]bool{}

func init() {
	for _, c := range []string{dectype.CodeMalformedDocument, dectype.CodeTooLarge, dectype.CodeVersion, dectype.CodeChainID, dectype.CodeNoEntries,
		dectype.CodeTooManyEntries, dectype.CodeEntryTooLarge, dectype.CodeMalformedEntry, dectype.CodeBadPayload, dectype.CodeChainIDMismatch, dectype.CodeMixedIssuers, dectype.CodeMixedSubjects, dectype.CodeSeq,
		dectype.CodeIatDecreasing, dectype.CodeBadHeader, dectype.CodeKeyInHeader, dectype.CodeUnknownCrit, dectype.CodeAlgNotAllowed, dectype.CodeAlgKeyMismatch, dectype.CodeUnknownIssuer,
		dectype.CodeUnknownKid, dectype.CodeBadSignature, dectype.CodeRevokedKey, dectype.CodePrevNotNull, dectype.CodePrevMismatch, dectype.CodeFork} {
		knownCodes[c] = true
	}
}

// BenchmarkVerify1000: verification of a 1,000-entry EdDSA chain.
func BenchmarkVerify1000(b *testing.B) {
	for _, alg := range []jwa.SignatureAlgorithm{jwa.EdDSA, jwa.ES256} {
		b.Run(alg.String(), func(b *testing.B) {
			s := newSigner(b, "https://releases.example/tutor", "k-1", alg)
			raw := []byte(doc(s.chain(b, dectype.MaxEntries)))
			set, err := jwk.Parse(jwks(b, s.public))
			if err != nil {
				b.Fatal(err)
			}
			trust := Trust{Keys: map[string]jwk.Set{s.issuer: set}}
			b.SetBytes(int64(len(raw)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if rep := Verify(raw, trust); !rep.OK {
					b.Fatalf("%+v", rep.Structural)
				}
			}
			b.ReportMetric(float64(dectype.MaxEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
