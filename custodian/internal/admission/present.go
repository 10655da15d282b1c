package admission

import (
	"slices"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/dec/dectype"
)

// Present takes a recipient's DEC document, bound to the token it is
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
func (s Service) Present(p model.Principal, in model.DECDocumentInput) (model.Presented, error) {
	const op = "dec.present"
	if p.Kind() != model.PrincipalConsumer {
		return model.Presented{}, model.Fail(op, model.KindInvalid, "a recipient presents its own document, with its service token")
	}
	v, err := s.verifier(op)
	if err != nil {
		return model.Presented{}, err
	}
	raw := in.Document
	if len(raw) > maxDocument+1024 {
		return model.Presented{}, model.Fail(op, model.KindTooLarge, "")
	}
	if err := s.Core.RateLimit(op, p, true); err != nil {
		return model.Presented{}, err
	}
	var out model.Presented
	var refused *model.Error
	err = s.Core.Write(op, p, func(st *engine.State, b *engine.Batch, r Rules) error {
		if !r.Live(p, b.Now) {
			return model.Fail(op, model.KindUnauthenticated, "")
		}
		PurgePresentations(st, b)
		pins := pins(st)
		report := v.Verify(raw, pins)
		head := report.Head
		subject, want := report.Subject, presenterSubject(st, p)
		if subject == nil || *subject != want {
			DropPresentation(st, b, p.Token().ID)
			refused = &model.Error{Op: op, Kind: model.KindQualificationRequired,
				Public: "the document is not about the presenting recipient: its subject must be " + subjectText(want)}
			records := []string{"subject:not_presenter"}
			if head != "" {
				records = append(records, "head:"+head)
			}
			b.Receipt(model.Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "deny",
				Constraint: model.KindQualificationRequired.Row().Constraint, Records: records, Revision: b.NextRevision()})
			return nil
		}
		pres := &model.Presentation{Token: p.Token().ID, Document: slices.Clone(raw), PresentedAt: b.Now, Subject: subject}
		st.Presentations[p.Token().ID] = pres
		b.Put(engine.BucketDECPresentations, p.Token().ID, pres)
		seen := map[string]bool{}
		records := []string{}
		allAdmitted := true
		out.Admissions = []dectype.Admission{}
		for _, g := range r.ReadGrants(p, b.Now) {
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
		rc := model.Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "allow", Records: records, Revision: out.Revision}
		if !allAdmitted {
			rc.Decision, rc.Constraint = "deny", model.KindQualificationRequired.Row().Constraint
		}
		b.Receipt(rc)
		return nil
	})
	if err == nil && refused != nil {
		err = refused
	}
	return out, err
}
