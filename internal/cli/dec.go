package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/dec"
)

// runDEC is phc dec: today, verify (offline, against keys given on the
// command line). Pinning issuers and policies in the custodian comes with
// admission (issue 6).
func runDEC(ctx context.Context, env *Env, args []string) error {
	const usage = "usage: phc dec verify FILE --trust JWKS.json --issuer ISSUER [--revoked KID@RFC3339 ...]"
	if len(args) == 0 || args[0] != "verify" {
		return usageError(usage)
	}
	var c common
	fs := newFlags(env, "dec verify", &c)
	trustFile := fs.String("trust", "", "the issuer's public keys (a JWKS file, every key with a kid)")
	issuer := fs.String("issuer", "", "the issuer those keys are pinned for")
	var revoked revocations
	fs.Var(&revoked, "revoked", "a key revoked from a moment on, as KID@2026-01-02T03:04:05Z (repeatable)")
	rest := args[1:]
	var file string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		file, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if file == "" || fs.NArg() != 0 {
		return usageError(usage)
	}
	if *trustFile == "" || *issuer == "" {
		return usageError("phc dec verify needs --trust JWKS.json and --issuer ISSUER")
	}
	keys, err := os.ReadFile(*trustFile)
	if err != nil {
		return err
	}
	set, err := jwk.Parse(keys)
	if err != nil {
		return fmt.Errorf("--trust: not a JWKS")
	}
	raw, err := readLimited(file, dec.MaxDocumentSize+1)
	if err != nil {
		return err
	}
	rep := dec.Verify(raw, dec.Trust{Keys: map[string]jwk.Set{*issuer: set}, Revoked: map[string][]dec.Revocation{*issuer: revoked}})
	if err := printJSON(env.Stdout, rep); err != nil {
		return err
	}
	if !rep.OK {
		return &exitError{code: 1, err: fmt.Errorf("the document does not verify (structural %v, signature %v, chain %v)",
			rep.Structural.OK, rep.Signature.OK, rep.Chain.OK)}
	}
	return nil
}

// readLimited reads at most n bytes of file (a larger file is cut there,
// which the verifier then reports as too large).
func readLimited(file string, n int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 64<<10)
	for int64(len(buf)) < n {
		k, err := f.Read(tmp)
		buf = append(buf, tmp[:k]...)
		if err != nil {
			break
		}
	}
	return buf, nil
}

// revocations is a repeatable KID@TIME flag.
type revocations []dec.Revocation

func (r *revocations) String() string { raw, _ := json.Marshal(r); return string(raw) }

func (r *revocations) Set(v string) error {
	kid, at, ok := strings.Cut(v, "@")
	t, err := time.Parse(time.RFC3339, at)
	if !ok || kid == "" || err != nil {
		return fmt.Errorf("want KID@RFC3339 time")
	}
	*r = append(*r, dec.Revocation{Kid: kid, At: t})
	return nil
}
