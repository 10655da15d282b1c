package custodian

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

const maxParents = 64

// CreateSummary records a summary derived from exact current versions
// (owner, or a consumer with a write-mode token whose grants cover every
// parent for purpose). A parent the caller cannot see answers exactly as
// one that does not exist (KindNotFound); a parent that is no longer
// current is KindConflict.
func (s *Service) CreateSummary(ctx context.Context, p Principal, in SummaryInput) (SummaryWritten, error) {
	const op = "summary.create"
	if err := s.accept(op, &in); err != nil {
		return SummaryWritten{}, err
	}
	if len(in.Value) == 0 || string(in.Value) == "null" {
		return SummaryWritten{}, model.Fail(op, KindInvalid, "value is required")
	}
	if len(in.DerivedFrom) == 0 || len(in.DerivedFrom) > maxParents {
		return SummaryWritten{}, model.Fail(op, KindInvalid, fmt.Sprintf("derived_from must list 1 to %d parents", maxParents))
	}
	seen := map[string]bool{}
	for _, ref := range in.DerivedFrom {
		if _, _, ok := model.ParseRef(ref); !ok {
			return SummaryWritten{}, model.Fail(op, KindInvalid, "derived_from holds a malformed ref (clm_…@n or sum_…@n)")
		}
		if seen[ref] {
			return SummaryWritten{}, model.Fail(op, KindInvalid, "derived_from lists a parent twice")
		}
		seen[ref] = true
	}
	producer := model.OwnerAuth
	switch p.Kind() {
	case PrincipalOwner:
	case PrincipalConsumer:
		if !validPurpose(in.Purpose) {
			return SummaryWritten{}, model.Fail(op, KindInvalid, model.ErrPurpose)
		}
		if err := s.rateLimit(op, p, true); err != nil {
			return SummaryWritten{}, err
		}
		producer = Authenticated{Kind: "consumer", ID: p.Consumer}
	default:
		return SummaryWritten{}, model.Fail(op, KindUnauthenticated, "")
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return SummaryWritten{}, err
	}
	defer release()
	if p.Kind() == PrincipalConsumer && !p.Token().CanWrite() {
		return SummaryWritten{}, s.refuse(st, p, op, model.Fail(op, KindModeDenied, "the token does not allow writes"))
	}
	var out SummaryWritten
	err = s.commit(st, func(st *state, b *batch) error {
		if p.Kind() == PrincipalConsumer && !st.live(p, b.Now) {
			return model.Fail(op, KindUnauthenticated, "")
		}
		parents, err := st.summaryParents(op, p, in.DerivedFrom, in.Purpose, b.Now)
		if err != nil {
			return err
		}
		id, err := identity.NewID("sum_")
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		sm := &Summary{
			ID: id, Version: 1, Value: in.Value, DerivedFrom: append([]string{}, in.DerivedFrom...),
			Status: SummaryCurrent, Producer: &producer, CreatedAt: b.Now,
		}
		sm.Restrictions, sm.Sensitivity = inherit(parents)
		if reason := ineligibleReason(parents, b.Now); reason != "" {
			sm.Status, sm.Ineligible = SummaryIneligible, reason
		}
		sm.Revision = b.NextRevision()
		st.SetSummary(sm)
		b.Put(engine.BucketSummaries, id, sm)
		rc := Receipt{Actor: p.Actor(), Operation: op, Decision: "allow",
			Records: append([]string{sm.Ref()}, sm.DerivedFrom...), Revision: sm.Revision}
		if p.Kind() == PrincipalConsumer {
			rc.Recipient, rc.Purpose = p.Consumer, in.Purpose
		}
		b.Receipt(rc)
		out = SummaryWritten{Summary: *sm, Revision: sm.Revision}
		return nil
	})
	return out, err
}

// parent is what a summary inherits from one parent.
type parent struct {
	restrictions []Restriction
	sensitivity  string
}

// summaryParents resolves refs to current parents p may derive from.
func (st *state) summaryParents(op string, p Principal, refs []string, purpose string, now time.Time) ([]parent, error) {
	var grants []*Grant
	if p.Kind() == PrincipalConsumer {
		grants = st.grantsFor(p.Consumer, OpRead, now)
	}
	out := make([]parent, 0, len(refs))
	for _, ref := range refs {
		id, v, _ := model.ParseRef(ref)
		if strings.HasPrefix(id, "sum_") {
			sm := st.Summaries[id]
			if sm == nil || (p.Kind() == PrincipalConsumer && !st.summaryVisible(p, sm, purpose, now, grants, nil)) {
				return nil, model.NotFound(op)
			}
			if sm.Version != v || sm.Status != SummaryCurrent {
				return nil, model.Fail(op, KindConflict, "a parent summary is not current")
			}
			out = append(out, parent{sm.Restrictions, sm.Sensitivity})
			continue
		}
		r := st.Claims[id]
		if r == nil || r.Meta.Status != StatusActive ||
			(p.Kind() == PrincipalConsumer && st.recipientGrant(grants, p, r, purpose, now, nil) == nil) {
			return nil, model.NotFound(op)
		}
		if r.Meta.Head != v {
			return nil, model.Fail(op, KindConflict, "a parent claim has a newer version")
		}
		c := r.Head()
		out = append(out, parent{c.Restrictions, c.Sensitivity})
	}
	return out, nil
}

// inherit is the union of the parents' restrictions (each once, in first
// appearance) and their highest tier.
func inherit(parents []parent) ([]Restriction, string) {
	rs := []Restriction{}
	seen := map[string]bool{}
	tier := SensitivityPublic
	for _, p := range parents {
		tier = model.RaiseTier(tier, p.sensitivity)
		for _, r := range p.restrictions {
			k, _ := json.Marshal(r)
			if !seen[string(k)] {
				seen[string(k)] = true
				rs = append(rs, r)
			}
		}
	}
	return rs, tier
}

// ineligibleReason says why restrictions inherited from parents cannot be
// satisfied together, or "" when they can:
//   - material controlled by a source (source_controlled {holder}) mixed
//     with anything that holder does not control — another holder's
//     material or the person's own — would turn it into memory outside the
//     holder's control;
//   - purpose_only restrictions with no purpose in common leave no use;
//   - an unknown mandatory restriction blocks every use;
//   - an expires restriction already past leaves no use.
func ineligibleReason(parents []parent, now time.Time) string {
	holders := map[string]bool{}
	uncontrolled := false
	var purposes map[string]bool
	for _, p := range parents {
		controlled := false
		for _, r := range p.restrictions {
			switch r.Type {
			case RestrictSourceControlled:
				holders[r.Holder] = true
				controlled = true
			case RestrictPurposeOnly:
				allowed := map[string]bool{}
				if list, ok := r.Params["purposes"].([]any); ok {
					for _, v := range list {
						if s, ok := v.(string); ok && (purposes == nil || purposes[s]) {
							allowed[s] = true
						}
					}
				}
				purposes = allowed
			case RestrictExpires:
				if !restrictionsAllow([]Restriction{r}, "", &Grant{}, now) {
					return "an inherited expires restriction has passed"
				}
			default:
				if !model.KnownRestriction(r.Type) && r.Mandatory {
					return "an inherited mandatory restriction is unknown"
				}
			}
		}
		if !controlled {
			uncontrolled = true
		}
	}
	switch {
	case len(holders) > 1:
		return "parents are source-controlled by different holders"
	case len(holders) == 1 && uncontrolled:
		return "source-controlled material mixed with material its holder does not control"
	case purposes != nil && len(purposes) == 0:
		return "inherited purpose_only restrictions have no purpose in common"
	}
	return ""
}

// summaryVisible reports whether consumer principal p may receive sm for
// purpose: it is current, every ancestor is current, and p may read every
// claim it derives from. refs, if not nil, collects the refs it relied on.
func (st *state) summaryVisible(p Principal, sm *Summary, purpose string, now time.Time, grants []*Grant, used *[]*Grant) bool {
	return st.summaryVisibleDepth(p, sm, purpose, now, grants, used, map[string]bool{})
}

func (st *state) summaryVisibleDepth(p Principal, sm *Summary, purpose string, now time.Time, grants []*Grant, used *[]*Grant, memo map[string]bool) bool {
	if v, ok := memo[sm.ID]; ok {
		return v
	}
	memo[sm.ID] = false
	if sm.Status != SummaryCurrent || !restrictionsAllowSummary(sm, purpose, now) {
		return false
	}
	// What an application wrote is its own word about the parents, which
	// the custodian cannot check: it is served back to that application
	// only, never passed on to another (the owner's summaries are).
	if p.Kind() == PrincipalConsumer && sm.Producer != nil && sm.Producer.Kind == "consumer" && sm.Producer.ID != p.Consumer {
		return false
	}
	for _, ref := range sm.DerivedFrom {
		id, v, _ := model.ParseRef(ref)
		if ps := st.Summaries[id]; ps != nil {
			if ps.Version != v || !st.summaryVisibleDepth(p, ps, purpose, now, grants, used, memo) {
				return false
			}
			continue
		}
		r := st.Claims[id]
		if r == nil || r.Meta.Status != StatusActive || r.Meta.Head != v {
			return false // a parent changed: never serve what was derived from it
		}
		if p.Kind() == PrincipalOwner {
			continue
		}
		g := st.recipientGrant(grants, p, r, purpose, now, nil)
		if g == nil {
			return false
		}
		// An inherited no_training holds whatever the parent says: the
		// grant that serves the parent must not be for training either.
		if !notTraining(g.Category) && slices.ContainsFunc(sm.Restrictions, func(r Restriction) bool { return r.Type == RestrictNoTraining }) {
			return false
		}
		// A parent this reader receives only as a reference: the summary,
		// which may restate its value, is not served to it at all (its
		// value would reach the model the reference keeps it from).
		if st.referenceMode(p, g, r.Head()) {
			return false
		}
		if used != nil {
			*used = append(*used, g)
		}
	}
	memo[sm.ID] = true
	return true
}

// restrictionsAllowSummary applies the restrictions a summary inherited
// that depend only on purpose and time (route- and category-bound ones are
// checked with each parent's grant).
func restrictionsAllowSummary(sm *Summary, purpose string, now time.Time) bool {
	rs := make([]Restriction, 0, len(sm.Restrictions))
	for _, r := range sm.Restrictions {
		if r.Type != RestrictLocalProcessingOnly && r.Type != RestrictNoTraining {
			rs = append(rs, r)
		}
	}
	return restrictionsAllow(rs, purpose, &Grant{}, now)
}

// GetSummary returns a summary. The owner sees any, with its status and
// what made it stale. A consumer sees only a current summary whose every
// parent it may read for purpose; any other answers as one that does not
// exist. A MinRevision this custodian has not reached is KindConflict.
func (s *Service) GetSummary(ctx context.Context, p Principal, id, purpose string, minRevision uint64) (SummaryRead, error) {
	const op = "summary.get"
	if !identity.ValidID(id, "sum_") {
		return SummaryRead{}, model.Fail(op, KindInvalid, "malformed summary id")
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return SummaryRead{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return SummaryRead{}, err
	}
	defer release()
	if err := st.reached(op, minRevision); err != nil {
		return SummaryRead{}, err
	}
	switch p.Kind() {
	case PrincipalOwner:
		return readSettled(op, st, func() (SummaryRead, error) {
			sm, ok := st.Summaries[id]
			if !ok {
				return SummaryRead{}, model.NotFound(op)
			}
			return SummaryRead{Summary: *sm, Revision: st.Revision}, nil
		})
	case PrincipalConsumer:
	default:
		return SummaryRead{}, model.Fail(op, KindUnauthenticated, "")
	}
	if purpose, err = p.ReadPurpose(op, purpose); err != nil {
		return SummaryRead{}, err
	}
	if !validPurpose(purpose) {
		return SummaryRead{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if !p.Token().CanRead() {
		return SummaryRead{}, s.refuse(st, p, "summary.read", model.Fail(op, KindModeDenied, "the token does not allow reads"))
	}
	var out SummaryRead
	rc := Receipt{Actor: p.Actor(), Operation: "summary.read", Recipient: p.Consumer, Purpose: purpose}
	disclosed, err := s.recipientRead(st, p, rc, func(st *state, now time.Time) ([]string, []*Grant, *Error) {
		out = SummaryRead{}
		sm, ok := st.Summaries[id]
		if !ok || !st.live(p, now) {
			return nil, nil, nil
		}
		var used []*Grant
		if !st.summaryVisible(p, sm, purpose, now, st.grantsFor(p.Consumer, OpRead, now), &used) {
			return nil, nil, nil
		}
		view := *sm
		view.Producer, view.Stale, view.Ineligible, view.Origin = nil, nil, "", ""
		out = SummaryRead{Summary: view, Revision: st.Revision}
		return append([]string{sm.Ref()}, sm.DerivedFrom...), distinctGrants(used), nil
	})
	if err != nil {
		return SummaryRead{}, err
	}
	if !disclosed {
		return SummaryRead{}, model.NotFound(op)
	}
	return out, nil
}

func distinctGrants(gs []*Grant) []*Grant {
	seen := map[string]bool{}
	out := gs[:0:0]
	for _, g := range gs {
		if !seen[g.ID] {
			seen[g.ID] = true
			out = append(out, g)
		}
	}
	return out
}

// ListSummaries returns every summary, oldest first (owner only).
func (s *Service) ListSummaries(ctx context.Context, p Principal) ([]Summary, error) {
	return ownerRead(s, "summary.list", p, func(st *state) ([]Summary, error) {
		out := make([]Summary, 0, len(st.Summaries))
		for _, sm := range st.Summaries {
			out = append(out, *sm)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
		return out, nil
	})
}

// summaryProblems lists current summaries with a parent that is not
// current: what invalidation should have made stale.
func (st *state) summaryProblems() []string {
	out := []string{}
	for _, sm := range st.Summaries {
		if sm.Status != SummaryCurrent {
			continue
		}
		for _, ref := range sm.DerivedFrom {
			id, v, _ := model.ParseRef(ref)
			ok := false
			if ps := st.Summaries[id]; ps != nil {
				ok = ps.Version == v && ps.Status == SummaryCurrent
			} else if r := st.Claims[id]; r != nil {
				ok = r.Meta.Status == StatusActive && r.Meta.Head == v
			}
			if !ok {
				out = append(out, sm.Ref()+" is current but its parent "+ref+" is not")
			}
		}
	}
	sort.Strings(out)
	return out
}

// reached fails with KindConflict when min is a revision this custodian
// has not reached.
func (st *state) reached(op string, min uint64) error {
	st.Mu.RLock()
	ahead := min > st.Revision
	st.Mu.RUnlock()
	if ahead {
		return model.Fail(op, KindConflict, "min_revision is ahead of this custodian")
	}
	return nil
}
