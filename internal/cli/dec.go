package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/dec"
	"github.com/phc-project/phc/dec/dectype"
	"github.com/phc-project/phc/internal/client"
)

// runDEC is phc dec: trust ISSUER JWKS.json, unrevoke ISSUER KID, policy
// add POLICY.json, and verify FILE — offline against keys given on the command line, or by the
// daemon against its pinned trust store.
func runDEC(ctx context.Context, env *Env, args []string) error {
	const usage = "usage: phc dec trust ISSUER JWKS.json [--revoked KID@TIME …] | phc dec unrevoke ISSUER KID | " +
		"phc dec policy add POLICY.json | phc dec verify FILE [--trust JWKS.json --issuer ISSUER [--revoked KID@TIME …]] (phc help dec)"
	if len(args) == 0 {
		return usageError(usage)
	}
	switch args[0] {
	case "trust":
		return runDECTrust(ctx, env, args[1:])
	case "unrevoke":
		return runDECUnrevoke(ctx, env, args[1:])
	case "policy":
		return runDECPolicy(ctx, env, args[1:])
	case "verify":
	default:
		return usageError(usage)
	}
	var c common
	fs := newFlags(env, "dec verify", &c)
	trustFile := fs.String("trust", "", "the issuer's public keys (a JWKS file, every key with a kid)")
	issuer := fs.String("issuer", "", "the issuer those keys are pinned for")
	var revoked revocations
	fs.Var(&revoked, "revoked", "a key revoked from a moment on, as KID@2026-01-02T03:04:05Z (repeatable)")
	file, ok, err := parseOne(fs, args[1:])
	if err != nil {
		return err
	}
	if !ok {
		return usageError(usage)
	}
	if (*trustFile == "") != (*issuer == "") {
		return usageError("--trust and --issuer go together")
	}
	raw, err := readLimited(file, dectype.MaxDocumentSize+1)
	if err != nil {
		return err
	}
	var rep dectype.Report
	if *trustFile == "" {
		// The daemon's pinned trust store.
		cl, err := newClient(env, c, true)
		if err != nil {
			return err
		}
		if rep, err = cl.VerifyDEC(ctx, raw); err != nil {
			return err
		}
	} else {
		keys, err := os.ReadFile(*trustFile)
		if err != nil {
			return err
		}
		set, err := jwk.Parse(keys)
		if err != nil {
			return fmt.Errorf("--trust: not a JWKS")
		}
		rep = dec.Verify(raw, dec.Trust{Keys: map[string]jwk.Set{*issuer: set}, Revoked: map[string][]dectype.Revocation{*issuer: revoked}})
	}
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
type revocations []dectype.Revocation

func (r *revocations) String() string { raw, _ := json.Marshal(r); return string(raw) }

func (r *revocations) Set(v string) error {
	kid, at, ok := strings.Cut(v, "@")
	t, err := time.Parse(time.RFC3339, at)
	if !ok || kid == "" || err != nil {
		return fmt.Errorf("want KID@RFC3339 time")
	}
	*r = append(*r, dectype.Revocation{Kid: kid, At: t})
	return nil
}

// runDECTrust pins an issuer's keys in the daemon.
func runDECTrust(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "dec trust", &c)
	var revoked revocations
	fs.Var(&revoked, "revoked", "a key revoked from a moment on, as KID@2026-01-02T03:04:05Z (repeatable)")
	pos, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("usage: phc dec trust ISSUER JWKS.json [--revoked KID@TIME …]")
	}
	keys, err := os.ReadFile(pos[1])
	if err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	if _, err := cl.PinDECIssuer(ctx, custodian.DECTrustInput{Pin: dectype.Pin{Issuer: pos[0], JWKS: keys, Revoked: revoked}}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "pinned the keys of %s\n", printable(pos[0]))
	return nil
}

// runDECUnrevoke withdraws a revocation of a pinned issuer's key: pinning
// again merges revocations, it never withdraws one.
func runDECUnrevoke(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags(env, "dec unrevoke", &c)
	pos, err := idsAndFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("usage: phc dec unrevoke ISSUER KID")
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	_, err = cl.UnrevokeDECKey(ctx, custodian.DECUnrevokeInput{Issuer: pos[0], Kid: pos[1]})
	if client.IsConstraint(err, "not_found") {
		return fmt.Errorf("nothing to withdraw: %s is not pinned, or has not revoked %s (phc dec trust ISSUER JWKS --revoked KID@TIME revokes one)", printable(pos[0]), printable(pos[1]))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "withdrew the revocation of %s of %s\n", printable(pos[1]), printable(pos[0]))
	return nil
}

// runDECPolicy adds an admission policy to the daemon.
func runDECPolicy(ctx context.Context, env *Env, args []string) error {
	if len(args) < 1 || args[0] != "add" {
		return usageError("usage: phc dec policy add POLICY.json")
	}
	var c common
	fs := newFlags(env, "dec policy add", &c)
	file, ok, err := parseOne(fs, args[1:])
	if err != nil {
		return err
	}
	if !ok {
		return usageError("usage: phc dec policy add POLICY.json")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	cl, err := newClient(env, c, true)
	if err != nil {
		return err
	}
	out, err := cl.AddDECPolicy(ctx, raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "policy %s added\n", printable(out.ID))
	return nil
}
