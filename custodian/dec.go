package custodian

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/dec/dectype"
)

// DECVerifier verifies DEC 0.1 documents and evaluates DCER admission
// policies (docs/formats/dec.md); package dec implements it (dec.Service).
// It is the Verifier of package admission, which holds the DEC glue: the
// trust store and policies, verification, presentations and the admission
// cache. The core keeps the rules that consult it (grantFor,
// qualificationFailure).
type DECVerifier = admission.Verifier

// decOps is the DEC operations (package admission) on this Service.
func (s *Service) decOps() admission.Service {
	return admission.Service{Core: admissionCore{s}, DEC: s.dec}
}

// PinDECIssuer pins an issuer's public keys (owner only). Pinning again
// replaces the keys but merges the revocations: a revocation stays until
// the owner withdraws it explicitly ([Service.UnrevokeDECKey]); a kid
// revoked twice stays revoked from the earlier moment.
func (s *Service) PinDECIssuer(ctx context.Context, p Principal, in DECTrustInput) (DECIssuer, error) {
	return s.decOps().PinIssuer(p, in)
}

// UnrevokeDECKey withdraws the revocation of one pinned issuer's key (owner
// only): the explicit act that undoes a revocation made by mistake, which
// re-pinning never does. An issuer not pinned, or a kid it has not revoked,
// is KindNotFound. The receipt names the pin and the kid by opaque ids.
func (s *Service) UnrevokeDECKey(ctx context.Context, p Principal, in DECUnrevokeInput) (DECIssuer, error) {
	return s.decOps().Unrevoke(p, in)
}

// AddDECPolicy adds (or replaces) an admission policy (owner only).
func (s *Service) AddDECPolicy(ctx context.Context, p Principal, in DECPolicyInput) (DECPolicy, error) {
	return s.decOps().AddPolicy(p, in)
}

// ListDECTrust returns the pinned issuers and the policies (owner only).
func (s *Service) ListDECTrust(ctx context.Context, p Principal) (DECTrust, error) {
	return s.decOps().ListTrust(p)
}

// VerifyDEC verifies a DEC document against the pinned trust store (owner
// only): the report of docs/formats/dec.md, three verdicts, never a bare boolean.
func (s *Service) VerifyDEC(ctx context.Context, p Principal, in DECDocumentInput) (dectype.Report, error) {
	return s.decOps().Verify(p, in)
}

// ListDECPresentations lists the stored presentations (owner only): one per
// token that presented a document and can still use it.
func (s *Service) ListDECPresentations(ctx context.Context, p Principal) ([]PresentationView, error) {
	return s.decOps().ListPresentations(p)
}

// PresentDEC takes a recipient's DEC document, bound to the token it is
// presented with, and answers its admission under every policy the
// recipient's grants require (see admission.Service.Present): admission is
// an extra condition on top of consent, never a substitute, evaluated
// again at every read. A document not about the presenting recipient is
// refused with KindQualificationRequired.
func (s *Service) PresentDEC(ctx context.Context, p Principal, in DECDocumentInput) (Presented, error) {
	return s.decOps().Present(p, in)
}

// qualified reports whether p's presented document is admitted now under
// the policy g requires: the failed condition codes, and the chain head
// (admission.Cache.Qualified).
func (st *state) qualified(p Principal, g *Grant, now time.Time) (bool, []string, string) {
	return st.adm.Qualified(st.view, p, g, now)
}

// qualificationFailure returns the failed conditions of the first of p's
// read grants for purpose that requires a qualification p does not meet,
// reaches sensitive data (the only data it requires one for) and selects,
// for all p can tell, what it asks for: key, or claim id ("" when not
// named). It is decided on the grants alone, never on a record, so that a
// record hidden from p and an absent one answer alike. nil otherwise, and
// for a read under no purpose, which no grant serves.
func (st *state) qualificationFailure(p Principal, purpose, key, claim string, now time.Time) []string {
	if purpose == "" {
		return nil
	}
	for _, g := range st.grantsFor(p.Consumer, OpRead, now) {
		sel := g.Selectors
		if g.Purpose != purpose || g.Requires == nil || model.TierRank[g.EffectiveTier()] < model.TierRank[SensitivitySensitive] ||
			(key != "" && len(sel.Keys) > 0 && !matchAny(sel.Keys, key)) || (claim != "" && len(sel.Claims) > 0 && !slices.Contains(sel.Claims, claim)) {
			continue
		}
		if ok, failed, _ := st.qualified(p, g, now); !ok {
			return failed
		}
	}
	return nil
}

// qualificationRequired is the answer to a read refused for a
// qualification: 403, naming the failed conditions.
func qualificationRequired(op string, failed []string) *Error {
	return &Error{Op: op, Kind: KindQualificationRequired,
		Public: "a current DEC admission is required (POST /phc/v1/dec/present); failed: " + strings.Join(failed, ", ")}
}

// admissionCore is what package admission needs from the core.
type admissionCore struct{ s *Service }

func (c admissionCore) Accept(op string, in Input) error { return c.s.accept(op, in) }
func (c admissionCore) RateLimit(op string, p Principal, write bool) error {
	return c.s.rateLimit(op, p, write)
}

func (c admissionCore) Write(op string, p Principal, fn func(*view, *batch, admission.Rules) error) error {
	return c.s.write(op, p, func(st *state, b *batch) error { return fn(st.view, b, admissionRules{st}) })
}

func (c admissionCore) OwnerRead(op string, p Principal, fn func(*view) error) error {
	_, err := ownerRead(c.s, op, p, func(st *state) (struct{}, error) { return struct{}{}, fn(st.view) })
	return err
}

// admissionRules are the core's rules on st that package admission consults.
type admissionRules struct{ st *state }

func (r admissionRules) Live(p Principal, now time.Time) bool { return r.st.live(p, now) }
func (r admissionRules) ReadGrants(p Principal, now time.Time) []*Grant {
	return r.st.grantsFor(p.Consumer, OpRead, now)
}
