package custodian

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/dec/dectype"
)

// DECVerifier verifies DEC 0.1 documents and evaluates DCER admission
// policies (docs/formats/dec.md); package dec implements it (dec.Service). The
// data are package dectype's, which dec and the core share: dec itself
// uses jwx, whose key package imports net/http, which the core must not.
type DECVerifier interface {
	// CheckKeys accepts a key set to pin: 1 to 64 public Ed25519 or P-256
	// keys, each with a kid. An error says it is not one.
	CheckKeys(jwks dectype.JWKS) error
	// CheckPolicy accepts a policy the format allows, of at most
	// dectype.MaxPolicyBytes as JSON. An error says why not.
	CheckPolicy(p dectype.Policy) error
	// Verify verifies doc against the pinned issuers. It never fails:
	// whatever doc holds, the report says what is wrong with it.
	Verify(doc dectype.RawDocument, pins []dectype.Pin) dectype.Report
	// Admit verifies doc against the pinned issuers and evaluates p, a
	// policy CheckPolicy accepted, at now: admit, or deny with every
	// failed condition.
	Admit(doc dectype.RawDocument, p dectype.Policy, pins []dectype.Pin, now time.Time) dectype.Admission
}

// The owner's DEC trust store and admission policies.
const ()

// opaqueKey is a store key for a name chosen outside the custodian: store
// keys never hold names.
func opaqueKey(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + hex.EncodeToString(sum[:16])
}

func (s *Service) decVerifier(op string) (DECVerifier, error) {
	if s.dec == nil {
		return nil, model.Fail(op, KindInvalid, "this custodian has no DEC verifier")
	}
	return s.dec, nil
}

// PinDECIssuer pins an issuer's public keys (owner only). Pinning again
// replaces the keys but merges the revocations: a revocation stays until
// the owner withdraws it explicitly ([Service.UnrevokeDECKey]); a kid
// revoked twice stays revoked from the earlier moment.
func (s *Service) PinDECIssuer(ctx context.Context, p Principal, in DECTrustInput) (DECIssuer, error) {
	const op = "dec.trust"
	if err := p.RequireOwner(op); err != nil {
		return DECIssuer{}, err
	}
	v, err := s.decVerifier(op)
	if err != nil {
		return DECIssuer{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return DECIssuer{}, err
	}
	if in.Issuer == "" || len(in.Issuer) > 256 {
		return DECIssuer{}, model.Fail(op, KindInvalid, "issuer is required: at most 256 bytes")
	}
	if err := v.CheckKeys(in.JWKS); err != nil {
		return DECIssuer{}, model.Fail(op, KindInvalid, "jwks must be 1 to 64 public Ed25519 or P-256 keys, each with a kid")
	}
	if len(in.Revoked) > maxDECRevocations {
		return DECIssuer{}, model.Fail(op, KindInvalid, "at most 256 revocations")
	}
	for _, r := range in.Revoked {
		if r.Kid == "" || len(r.Kid) > 256 {
			return DECIssuer{}, model.Fail(op, KindInvalid, "a revocation names a kid: at most 256 bytes")
		}
	}
	var out DECIssuer
	err = s.write(op, p, func(st *state, b *batch) error {
		revoked := slices.Clone(in.Revoked) // the view keeps no slice of the caller's
		if old := st.DecTrust[in.Issuer]; old != nil {
			revoked = mergeRevocations(old.Revoked, in.Revoked)
		}
		if len(revoked) > maxDECRevocations {
			return model.Fail(op, KindInvalid, "at most 256 revocations per issuer: withdraw some first")
		}
		d := &DECIssuer{Issuer: in.Issuer, JWKS: slices.Clone(in.JWKS), Revoked: revoked, PinnedAt: b.Now, Revision: b.NextRevision()}
		st.DecTrust[in.Issuer] = d
		key := opaqueKey("dis_", in.Issuer)
		b.Put(engine.BucketDECTrust, key, d)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{key}, Revision: d.Revision})
		out = *d
		return nil
	})
	return out, err
}

// maxDECRevocations bounds an issuer's revocations.
const maxDECRevocations = 256

// mergeRevocations is the union of old and added, one per kid, each from
// its earliest moment, in kid order.
func mergeRevocations(old, added []dectype.Revocation) []dectype.Revocation {
	at := map[string]time.Time{}
	for _, r := range append(append([]dectype.Revocation{}, old...), added...) {
		if t, ok := at[r.Kid]; !ok || r.At.Before(t) {
			at[r.Kid] = r.At
		}
	}
	out := make([]dectype.Revocation, 0, len(at))
	for kid, t := range at {
		out = append(out, dectype.Revocation{Kid: kid, At: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kid < out[j].Kid })
	return out
}

// UnrevokeDECKey withdraws the revocation of one pinned issuer's key (owner
// only): the explicit act that undoes a revocation made by mistake, which
// re-pinning never does. An issuer not pinned, or a kid it has not revoked,
// is KindNotFound. The receipt names the pin and the kid by opaque ids.
func (s *Service) UnrevokeDECKey(ctx context.Context, p Principal, in DECUnrevokeInput) (DECIssuer, error) {
	const op = "dec.unrevoke"
	if err := p.RequireOwner(op); err != nil {
		return DECIssuer{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return DECIssuer{}, err
	}
	if in.Issuer == "" || in.Kid == "" {
		return DECIssuer{}, model.Fail(op, KindInvalid, "issuer and kid are required")
	}
	var out DECIssuer
	err := s.write(op, p, func(st *state, b *batch) error {
		old := st.DecTrust[in.Issuer]
		if old == nil {
			return model.NotFound(op)
		}
		i := slices.IndexFunc(old.Revoked, func(r dectype.Revocation) bool { return r.Kid == in.Kid })
		if i < 0 {
			return model.NotFound(op)
		}
		d := *old
		d.Revoked = slices.Delete(slices.Clone(old.Revoked), i, i+1)
		d.Revision = b.NextRevision()
		st.DecTrust[in.Issuer] = &d
		key := opaqueKey("dis_", in.Issuer)
		b.Put(engine.BucketDECTrust, key, &d)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow",
			Records: []string{key, opaqueKey("kid_", in.Issuer+"\x00"+in.Kid)}, Revision: d.Revision})
		out = d
		return nil
	})
	return out, err
}

// AddDECPolicy adds (or replaces) an admission policy (owner only).
func (s *Service) AddDECPolicy(ctx context.Context, p Principal, in DECPolicyInput) (DECPolicy, error) {
	const op = "dec.policy"
	if err := p.RequireOwner(op); err != nil {
		return DECPolicy{}, err
	}
	v, err := s.decVerifier(op)
	if err != nil {
		return DECPolicy{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return DECPolicy{}, err
	}
	pol := in.Policy
	// The view keeps no slice of the caller's.
	pol.ReleaseDigests, pol.RuntimeConfigDigests = slices.Clone(pol.ReleaseDigests), slices.Clone(pol.RuntimeConfigDigests)
	if err := v.CheckPolicy(pol); err != nil {
		return DECPolicy{}, &Error{Op: op, Kind: KindInvalid, Public: "the policy does not match the format (docs/formats/dec.md)", Err: err}
	}
	id := pol.ID
	var out DECPolicy
	err = s.write(op, p, func(st *state, b *batch) error {
		d := &DECPolicy{ID: id, Policy: pol, Revision: b.NextRevision()}
		st.DecPolicies[id] = d
		b.Put(engine.BucketDECPolicies, opaqueKey("pol_", id), d)
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: d.Revision})
		out = *d
		return nil
	})
	return out, err
}

// ListDECTrust returns the pinned issuers and the policies (owner only).
func (s *Service) ListDECTrust(ctx context.Context, p Principal) (DECTrust, error) {
	return ownerRead(s, "dec.list", p, func(st *state) (DECTrust, error) {
		out := DECTrust{Issuers: []DECIssuer{}, Policies: []DECPolicy{}}
		for _, d := range st.DecTrust {
			out.Issuers = append(out.Issuers, *d)
		}
		for _, pol := range st.DecPolicies {
			out.Policies = append(out.Policies, *pol)
		}
		sort.Slice(out.Issuers, func(i, j int) bool { return out.Issuers[i].Issuer < out.Issuers[j].Issuer })
		sort.Slice(out.Policies, func(i, j int) bool { return out.Policies[i].ID < out.Policies[j].ID })
		return out, nil
	})
}

// decPins is the view's trust store as the verifier takes it.
func (st *state) decPins() []dectype.Pin {
	pins := make([]dectype.Pin, 0, len(st.DecTrust))
	for _, d := range st.DecTrust {
		pins = append(pins, dectype.Pin{Issuer: d.Issuer, JWKS: d.JWKS, Revoked: d.Revoked})
	}
	return pins
}

// maxDECDocument bounds a DEC document (docs/formats/dec.md: 4 MiB).
const maxDECDocument = 4 << 20

// VerifyDEC verifies a DEC document against the pinned trust store (owner
// only): the report of docs/formats/dec.md, three verdicts, never a bare boolean.
func (s *Service) VerifyDEC(ctx context.Context, p Principal, in DECDocumentInput) (dectype.Report, error) {
	const op = "dec.verify"
	v, err := s.decVerifier(op)
	if err != nil {
		return dectype.Report{}, err
	}
	pins, err := ownerRead(s, op, p, func(st *state) ([]dectype.Pin, error) { return st.decPins(), nil })
	if err != nil {
		return dectype.Report{}, err
	}
	return v.Verify(in.Document, pins), nil
}

// presenterSubject is the DEC subject a chain presented by p must name: a
// registered consumer is {client_id: its name}; an OIDC recipient is
// {client_id: its subject, issuer: its issuer} — the identity the
// custodian authenticated, never one the presenter claims.
func (st *state) presenterSubject(p Principal) dectype.Subject {
	if t := p.Token(); t != nil && t.Trust != "" {
		if tr := st.Trust[t.Trust]; tr != nil {
			return dectype.Subject{ClientID: strings.TrimPrefix(p.Consumer, model.OIDCRecipient(tr.Issuer, "")), Issuer: tr.Issuer}
		}
	}
	return dectype.Subject{ClientID: p.Consumer}
}

// dropPresentation removes the document presented with token id, if any
// (with st.mu held for writing).
func (st *state) dropPresentation(b *batch, id string) {
	if _, ok := st.Presentations[id]; !ok {
		return
	}
	delete(st.Presentations, id)
	b.Del(engine.BucketDECPresentations, id)
}

// purgePresentations drops every presentation no token can use any more:
// its token revoked, expired, gone, or an OIDC recipient's whose issuer is
// no longer trusted (with st.mu held for writing).
func (st *state) purgePresentations(b *batch) {
	for id := range st.Presentations {
		t := st.TokenByID[id]
		if t == nil || t.RevokedAt != nil || !b.Now.Before(t.ExpiresAt) || (t.Trust != "" && st.Trust[t.Trust] == nil) {
			st.dropPresentation(b, id)
		}
	}
}

// ListDECPresentations lists the stored presentations (owner only): one per
// token that presented a document and can still use it.
func (s *Service) ListDECPresentations(ctx context.Context, p Principal) ([]PresentationView, error) {
	return ownerRead(s, "dec.presentations", p, func(st *state) ([]PresentationView, error) {
		out := make([]PresentationView, 0, len(st.Presentations))
		for id, pr := range st.Presentations {
			v := PresentationView{Token: id, PresentedAt: pr.PresentedAt}
			if t := st.TokenByID[id]; t != nil {
				v.Recipient = t.Consumer
			}
			out = append(out, v)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Token < out[j].Token })
		return out, nil
	})
}

// qualified reports whether p's presented document is admitted now under
// the policy g requires: the failed condition codes, and the chain head.
func (st *state) qualified(p Principal, g *Grant, now time.Time) (bool, []string, string) {
	if g.Requires == nil {
		return true, nil, ""
	}
	pol := st.DecPolicies[g.Requires.Qualification]
	if pol == nil {
		return false, []string{"unknown_policy"}, ""
	}
	if p.Token() == nil {
		return false, []string{"no_presentation"}, ""
	}
	pres := st.Presentations[p.Token().ID]
	if pres == nil {
		return false, []string{"no_presentation"}, ""
	}
	if pres.Subject == nil || *pres.Subject != st.presenterSubject(p) {
		return false, []string{"recipient"}, "" // not bound to this recipient
	}
	if st.dec == nil {
		return false, []string{"no_verifier"}, ""
	}
	// Verifying a chain costs up to 1,000 signatures: an answer is reused
	// for a minute, unless the presentation, the policy or the trust store
	// changed (a revocation takes effect at once; max_age within a minute).
	key := admissionKey{token: p.Token().ID, policy: pol.ID}
	trustRev := uint64(0)
	for _, d := range st.DecTrust {
		trustRev = max(trustRev, d.Revision)
	}
	st.admMu.Lock()
	c, ok := st.admCache[key]
	st.admMu.Unlock()
	if ok && c.presentedAt.Equal(pres.PresentedAt) && c.policyRev == pol.Revision && c.trustRev == trustRev &&
		!now.Before(c.at) && now.Sub(c.at) < admissionTTL {
		return c.ok, c.failed, c.head
	}
	adm := st.dec.Admit(pres.Document, pol.Policy, st.decPins(), now)
	admitted, failed, head := adm.Admitted(), adm.Codes(), adm.Head
	st.admMu.Lock()
	if len(st.admCache) >= maxAdmissionCache {
		clear(st.admCache)
	}
	st.admCache[key] = admission{ok: admitted, failed: failed, head: head, presentedAt: pres.PresentedAt,
		policyRev: pol.Revision, trustRev: trustRev, at: now}
	st.admMu.Unlock()
	return admitted, failed, head
}

// admissionTTL bounds how long an admission answer is reused.
const (
	admissionTTL      = time.Minute
	maxAdmissionCache = 4096
)

type admissionKey struct{ token, policy string }

// admission is a cached answer of qualified.
type admission struct {
	ok                  bool
	failed              []string
	head                string
	presentedAt, at     time.Time
	policyRev, trustRev uint64
}

// PresentDEC takes a recipient's DEC document, bound to the token it is
// presented with, and answers its admission under every policy the
// recipient's grants require. Admission is an extra condition on top of
// consent, never a substitute: it is evaluated again at every read. The
// receipt says, per policy, "policy:ID", "admission:admit" or
// "admission:deny" and the chain's "head:…"; it is a deny
// (qualification_required) when any policy denies.
//
// A presentation is bound to its recipient: the chain's subject must be
// the presenter as the custodian authenticated it (see presenterSubject).
// A document about another client — or about none that can be read — is
// refused with KindQualificationRequired: it can never qualify this
// recipient, whoever may read it. The refusal is receipted (deny,
// "subject:not_presenter") and withdraws the token's earlier
// presentation, as any new presentation replaces the last one. Every
// presentation also purges those no token can use any more.
func (s *Service) PresentDEC(ctx context.Context, p Principal, in DECDocumentInput) (Presented, error) {
	const op = "dec.present"
	if p.Kind() != PrincipalConsumer {
		return Presented{}, model.Fail(op, KindInvalid, "a recipient presents its own document, with its service token")
	}
	v, err := s.decVerifier(op)
	if err != nil {
		return Presented{}, err
	}
	raw := in.Document
	if len(raw) > maxDECDocument+1024 {
		return Presented{}, model.Fail(op, KindTooLarge, "")
	}
	if err := s.rateLimit(op, p, true); err != nil {
		return Presented{}, err
	}
	var out Presented
	var refused *Error
	err = s.write(op, p, func(st *state, b *batch) error {
		if !st.live(p, b.Now) {
			return model.Fail(op, KindUnauthenticated, "")
		}
		st.purgePresentations(b)
		pins := st.decPins()
		report := v.Verify(raw, pins)
		head := report.Head
		subject, want := report.Subject, st.presenterSubject(p)
		if subject == nil || *subject != want {
			st.dropPresentation(b, p.Token().ID)
			refused = &Error{Op: op, Kind: KindQualificationRequired,
				Public: "the document is not about the presenting recipient: its subject must be " + subjectText(want)}
			records := []string{"subject:not_presenter"}
			if head != "" {
				records = append(records, "head:"+head)
			}
			b.Receipt(Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "deny",
				Constraint: KindQualificationRequired.Row().Constraint, Records: records, Revision: b.NextRevision()})
			return nil
		}
		pres := &Presentation{Token: p.Token().ID, Document: slices.Clone(raw), PresentedAt: b.Now, Subject: subject}
		st.Presentations[p.Token().ID] = pres
		b.Put(engine.BucketDECPresentations, p.Token().ID, pres)
		seen := map[string]bool{}
		records := []string{}
		allAdmitted := true
		out.Admissions = []dectype.Admission{}
		for _, g := range st.grantsFor(p.Consumer, OpRead, b.Now) {
			if g.Requires == nil || seen[g.Requires.Qualification] {
				continue
			}
			seen[g.Requires.Qualification] = true
			pol := st.DecPolicies[g.Requires.Qualification]
			if pol == nil {
				continue
			}
			adm := v.Admit(raw, pol.Policy, pins, b.Now)
			admitted, head := adm.Admitted(), adm.Head
			out.Admissions = append(out.Admissions, adm)
			records = append(records, "policy:"+pol.ID, admissionRecord(admitted))
			if head != "" {
				records = append(records, "head:"+head)
			}
			allAdmitted = allAdmitted && admitted
		}
		out.Revision = b.NextRevision()
		rc := Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "allow", Records: records, Revision: out.Revision}
		if !allAdmitted {
			rc.Decision, rc.Constraint = "deny", KindQualificationRequired.Row().Constraint
		}
		b.Receipt(rc)
		return nil
	})
	if err == nil && refused != nil {
		err = refused
	}
	return out, err
}

// subjectText is a DEC subject as an answer states it.
func subjectText(s dectype.Subject) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// admissionRecord is how a receipt records an admission's decision.
func admissionRecord(admitted bool) string {
	if admitted {
		return "admission:admit"
	}
	return "admission:deny"
}

// qualificationFailure returns the failed conditions when a grant of p
// would serve r for purpose (every grant's own purpose when purpose is
// empty, as PCP reads carry none) but for its qualification; nil otherwise
// — including for a relationship with an end p may not see, which stays
// absent whatever the qualification.
func (st *state) qualificationFailure(p Principal, r *claimRecord, purpose string, now time.Time) []string {
	grants := st.grantsFor(p.Consumer, OpRead, now)
	var failed []string
	if purpose == "" {
		return nil // a read under no purpose is served by no grant
	}
	_, failed = st.grantFor(grants, p, r, purpose, now)
	may := func(x *claimRecord) bool { return st.readGrant(grants, p, x, purpose, now) != nil }
	if failed != nil && !st.endsVisible(r.Head(), may, nil) {
		return nil
	}
	return failed
}

// qualificationRequired is the answer to a read refused for a
// qualification: 403, naming the failed conditions.
func qualificationRequired(op string, failed []string) *Error {
	return &Error{Op: op, Kind: KindQualificationRequired,
		Public: "a current DEC admission is required (POST /phc/v1/dec/present); failed: " + strings.Join(failed, ", ")}
}
