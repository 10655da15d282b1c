package admission

import (
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

// Verifier verifies DEC 0.1 documents and evaluates DCER admission
// policies (docs/formats/dec.md); package dec implements it (dec.Service). The
// data are package dectype's, which dec and the core share: dec itself
// uses jwx, whose key package imports net/http, which the core must not.
type Verifier interface {
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

// Core is what the DEC operations need from the core (package custodian).
type Core interface {
	// Accept gives in, built in Go or decoded, the checks of the strict
	// decoding of its body.
	Accept(op string, in model.Input) error
	// RateLimit counts a request of p's (a write when write is true)
	// against its rate limit, and fails when it is over.
	RateLimit(op string, p model.Principal, write bool) error
	// Write runs fn for p as one journal job, once the vault is open and
	// p's session current: fn runs alone on the view v with its lock held
	// for writing, stages its writes and receipts in b, and consults the
	// core's rules on v through r. It should validate before it mutates v
	// (see custodian's commit).
	Write(op string, p model.Principal, fn func(v *engine.State, b *engine.Batch, r Rules) error) error
	// OwnerRead runs fn on the current view for the owner only, and
	// returns once what fn saw is durable.
	OwnerRead(op string, p model.Principal, fn func(v *engine.State) error) error
}

// Rules are the core's rules on one view that the DEC operations consult.
type Rules interface {
	// Live reports whether consumer principal p may still act at now.
	Live(p model.Principal, now time.Time) bool
	// ReadGrants returns the grants in force at now under which p reads,
	// in the order the core picks them.
	ReadGrants(p model.Principal, now time.Time) []*model.Grant
}

// Service is the DEC operations of a custodian: the owner's trust store and
// policies, verification, and recipients' presentations. DEC is nil when
// the custodian has no verifier, which refuses the operations that need
// one.
type Service struct {
	Core Core
	DEC  Verifier
}

// opaqueKey is a store key for a name chosen outside the custodian: store
// keys never hold names.
func opaqueKey(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + hex.EncodeToString(sum[:16])
}

func (s Service) verifier(op string) (Verifier, error) {
	if s.DEC == nil {
		return nil, model.Fail(op, model.KindInvalid, "this custodian has no DEC verifier")
	}
	return s.DEC, nil
}

// PinIssuer pins an issuer's public keys (owner only). Pinning again
// replaces the keys but merges the revocations: a revocation stays until
// the owner withdraws it explicitly ([Service.Unrevoke]); a kid
// revoked twice stays revoked from the earlier moment.
func (s Service) PinIssuer(p model.Principal, in model.DECTrustInput) (model.DECIssuer, error) {
	const op = "dec.trust"
	if err := p.RequireOwner(op); err != nil {
		return model.DECIssuer{}, err
	}
	v, err := s.verifier(op)
	if err != nil {
		return model.DECIssuer{}, err
	}
	if err := s.Core.Accept(op, &in); err != nil {
		return model.DECIssuer{}, err
	}
	if in.Issuer == "" || len(in.Issuer) > 256 {
		return model.DECIssuer{}, model.Fail(op, model.KindInvalid, "issuer is required: at most 256 bytes")
	}
	if err := v.CheckKeys(in.JWKS); err != nil {
		return model.DECIssuer{}, model.Fail(op, model.KindInvalid, "jwks must be 1 to 64 public Ed25519 or P-256 keys, each with a kid")
	}
	if len(in.Revoked) > maxRevocations {
		return model.DECIssuer{}, model.Fail(op, model.KindInvalid, "at most 256 revocations")
	}
	for _, r := range in.Revoked {
		if r.Kid == "" || len(r.Kid) > 256 {
			return model.DECIssuer{}, model.Fail(op, model.KindInvalid, "a revocation names a kid: at most 256 bytes")
		}
	}
	var out model.DECIssuer
	err = s.Core.Write(op, p, func(st *engine.State, b *engine.Batch, _ Rules) error {
		revoked := slices.Clone(in.Revoked) // the view keeps no slice of the caller's
		if old := st.DecTrust[in.Issuer]; old != nil {
			revoked = mergeRevocations(old.Revoked, in.Revoked)
		}
		if len(revoked) > maxRevocations {
			return model.Fail(op, model.KindInvalid, "at most 256 revocations per issuer: withdraw some first")
		}
		d := &model.DECIssuer{Issuer: in.Issuer, JWKS: slices.Clone(in.JWKS), Revoked: revoked, PinnedAt: b.Now, Revision: b.NextRevision()}
		st.DecTrust[in.Issuer] = d
		key := opaqueKey("dis_", in.Issuer)
		b.Put(engine.BucketDECTrust, key, d)
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{key}, Revision: d.Revision})
		out = *d
		return nil
	})
	return out, err
}

// maxRevocations bounds an issuer's revocations.
const maxRevocations = 256

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

// Unrevoke withdraws the revocation of one pinned issuer's key (owner
// only): the explicit act that undoes a revocation made by mistake, which
// re-pinning never does. An issuer not pinned, or a kid it has not revoked,
// is KindNotFound. The receipt names the pin and the kid by opaque ids.
func (s Service) Unrevoke(p model.Principal, in model.DECUnrevokeInput) (model.DECIssuer, error) {
	const op = "dec.unrevoke"
	if err := p.RequireOwner(op); err != nil {
		return model.DECIssuer{}, err
	}
	if err := s.Core.Accept(op, &in); err != nil {
		return model.DECIssuer{}, err
	}
	if in.Issuer == "" || in.Kid == "" {
		return model.DECIssuer{}, model.Fail(op, model.KindInvalid, "issuer and kid are required")
	}
	var out model.DECIssuer
	err := s.Core.Write(op, p, func(st *engine.State, b *engine.Batch, _ Rules) error {
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
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow",
			Records: []string{key, opaqueKey("kid_", in.Issuer+"\x00"+in.Kid)}, Revision: d.Revision})
		out = d
		return nil
	})
	return out, err
}

// AddPolicy adds (or replaces) an admission policy (owner only).
func (s Service) AddPolicy(p model.Principal, in model.DECPolicyInput) (model.DECPolicy, error) {
	const op = "dec.policy"
	if err := p.RequireOwner(op); err != nil {
		return model.DECPolicy{}, err
	}
	v, err := s.verifier(op)
	if err != nil {
		return model.DECPolicy{}, err
	}
	if err := s.Core.Accept(op, &in); err != nil {
		return model.DECPolicy{}, err
	}
	pol := in.Policy
	// The view keeps no slice of the caller's.
	pol.ReleaseDigests, pol.RuntimeConfigDigests = slices.Clone(pol.ReleaseDigests), slices.Clone(pol.RuntimeConfigDigests)
	if err := v.CheckPolicy(pol); err != nil {
		return model.DECPolicy{}, &model.Error{Op: op, Kind: model.KindInvalid, Public: "the policy does not match the format (docs/formats/dec.md)", Err: err}
	}
	id := pol.ID
	var out model.DECPolicy
	err = s.Core.Write(op, p, func(st *engine.State, b *engine.Batch, _ Rules) error {
		d := &model.DECPolicy{ID: id, Policy: pol, Revision: b.NextRevision()}
		st.DecPolicies[id] = d
		b.Put(engine.BucketDECPolicies, opaqueKey("pol_", id), d)
		b.Receipt(model.Receipt{Actor: "owner", Operation: op, Decision: "allow", Records: []string{id}, Revision: d.Revision})
		out = *d
		return nil
	})
	return out, err
}

// ListTrust returns the pinned issuers and the policies (owner only).
func (s Service) ListTrust(p model.Principal) (model.DECTrust, error) {
	var out model.DECTrust
	err := s.Core.OwnerRead("dec.list", p, func(st *engine.State) error {
		out = model.DECTrust{Issuers: []model.DECIssuer{}, Policies: []model.DECPolicy{}}
		for _, d := range st.DecTrust {
			out.Issuers = append(out.Issuers, *d)
		}
		for _, pol := range st.DecPolicies {
			out.Policies = append(out.Policies, *pol)
		}
		sort.Slice(out.Issuers, func(i, j int) bool { return out.Issuers[i].Issuer < out.Issuers[j].Issuer })
		sort.Slice(out.Policies, func(i, j int) bool { return out.Policies[i].ID < out.Policies[j].ID })
		return nil
	})
	if err != nil {
		return model.DECTrust{}, err
	}
	return out, nil
}

// pins is the view's trust store as the verifier takes it.
func pins(st *engine.State) []dectype.Pin {
	pins := make([]dectype.Pin, 0, len(st.DecTrust))
	for _, d := range st.DecTrust {
		pins = append(pins, dectype.Pin{Issuer: d.Issuer, JWKS: d.JWKS, Revoked: d.Revoked})
	}
	return pins
}

// maxDocument bounds a DEC document (docs/formats/dec.md: 4 MiB).
const maxDocument = 4 << 20

// Verify verifies a DEC document against the pinned trust store (owner
// only): the report of docs/formats/dec.md, three verdicts, never a bare boolean.
func (s Service) Verify(p model.Principal, in model.DECDocumentInput) (dectype.Report, error) {
	const op = "dec.verify"
	v, err := s.verifier(op)
	if err != nil {
		return dectype.Report{}, err
	}
	var pinned []dectype.Pin
	if err := s.Core.OwnerRead(op, p, func(st *engine.State) error { pinned = pins(st); return nil }); err != nil {
		return dectype.Report{}, err
	}
	return v.Verify(in.Document, pinned), nil
}

// presenterSubject is the DEC subject a chain presented by p must name: a
// registered consumer is {client_id: its name}; an OIDC recipient is
// {client_id: its subject, issuer: its issuer} — the identity the
// custodian authenticated, never one the presenter claims.
func presenterSubject(st *engine.State, p model.Principal) dectype.Subject {
	if t := p.Token(); t != nil && t.Trust != "" {
		if tr := st.Trust[t.Trust]; tr != nil {
			return dectype.Subject{ClientID: strings.TrimPrefix(p.Consumer, model.OIDCRecipient(tr.Issuer, "")), Issuer: tr.Issuer}
		}
	}
	return dectype.Subject{ClientID: p.Consumer}
}

// DropPresentation removes the document presented with token id, if any
// (with st.Mu held for writing).
func DropPresentation(st *engine.State, b *engine.Batch, id string) {
	if _, ok := st.Presentations[id]; !ok {
		return
	}
	delete(st.Presentations, id)
	b.Del(engine.BucketDECPresentations, id)
}

// PurgePresentations drops every presentation no token can use any more:
// its token revoked, expired, gone, or an OIDC recipient's whose issuer is
// no longer trusted (with st.Mu held for writing).
func PurgePresentations(st *engine.State, b *engine.Batch) {
	for id := range st.Presentations {
		t := st.TokenByID[id]
		if t == nil || t.RevokedAt != nil || !b.Now.Before(t.ExpiresAt) || (t.Trust != "" && st.Trust[t.Trust] == nil) {
			DropPresentation(st, b, id)
		}
	}
}

// ListPresentations lists the stored presentations (owner only): one per
// token that presented a document and can still use it.
func (s Service) ListPresentations(p model.Principal) ([]model.PresentationView, error) {
	var out []model.PresentationView
	err := s.Core.OwnerRead("dec.presentations", p, func(st *engine.State) error {
		out = make([]model.PresentationView, 0, len(st.Presentations))
		for id, pr := range st.Presentations {
			v := model.PresentationView{Token: id, PresentedAt: pr.PresentedAt}
			if t := st.TokenByID[id]; t != nil {
				v.Recipient = t.Consumer
			}
			out = append(out, v)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Token < out[j].Token })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
