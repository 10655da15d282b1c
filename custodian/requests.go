package custodian

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
)

// maxPendingRequests bounds the requests one consumer may have waiting.
const maxPendingRequests = 20

// requestTier is the highest tier consumer p's request for scope may
// reach, as far as p may know it (with st.mu held). For a field the scope
// names, it is that field's own tier where p's app may read the field with
// a token of its own (the owner may have lowered or raised the tier), else
// the key's default, raised by the
// defaults rooted below the key and by the fields below it that p may
// read; for a prefix (a.*, *) it is the highest default the prefix covers
// (patternTier). A field p may not read counts exactly like an absent one,
// so neither the tier nor whether the request is granted at once tells p
// anything about it.
func (st *state) requestTier(p Principal, scope []string, now time.Time) string {
	grants := st.grantsFor(p.Consumer, OpRead, now)
	// What the app may read with any token it may mint: a read token of
	// scope *, which sees nothing it could not see anyway.
	wide := *p.Token()
	wide.Scope, wide.Mode = []string{"*"}, ModeRead
	p, _ = model.ConsumerPrincipal(p.Consumer, &wide, p.SessionBinding()).WithDisclosure(p.Disclosure())
	sees := func(r *claimRecord) bool {
		if _, ok := st.fieldGrant(p, r, "", now, grants); ok {
			return true
		}
		for _, g := range grants {
			if _, ok := st.fieldGrant(p, r, g.Purpose, now, grants); ok {
				return true
			}
		}
		return false
	}
	tier := SensitivityPublic
	for _, pat := range scope {
		if pat == "*" || strings.HasSuffix(pat, ".*") {
			tier = model.RaiseTier(tier, patternTier(pat))
			continue
		}
		for _, r := range tierRoots {
			if strings.HasPrefix(r.root, pat+".") {
				tier = model.RaiseTier(tier, r.tier)
			}
		}
		if r := st.field(pat); r != nil && sees(r) {
			tier = model.RaiseTier(tier, r.Meta.Tier)
		} else {
			tier = model.RaiseTier(tier, defaultSensitivity(pat))
		}
		for _, r := range st.fields(pat + ".*") {
			if sees(r) {
				tier = model.RaiseTier(tier, r.Meta.Tier)
			}
		}
	}
	return tier
}

// RequestContext files a consumer's request for context, made on ch. A
// scope whose tier (requestTier) the owner's auto_grant covers is granted
// at once, as a grant limited to the auto_grant tiers, and answers with a
// token for that scope where ch may carry one (HTTP; over MCP the answer
// reaches a model, and the app gets the token by polling over HTTP) and
// the app's live-token quota leaves room for it (else it polls for it
// later); anything else waits for the owner and answers pending.
func (s *Service) RequestContext(ctx context.Context, ch Channel, p Principal, in RequestInput) (RequestView, error) {
	v, err := s.requestContext(ctx, p, in, ch.holdsTokens())
	return onChannel(ch, v), err
}

func (s *Service) requestContext(ctx context.Context, p Principal, in RequestInput, mint bool) (RequestView, error) {
	const op = "request.create"
	if p.Kind() == PrincipalSealed {
		return RequestView{}, model.Fail(op, KindLocked, "")
	}
	if p.Kind() != PrincipalConsumer || p.Token().Trust != "" {
		return RequestView{}, model.Fail(op, KindInvalid, "requests are made by registered consumers, with their service token")
	}
	if err := s.rateLimit(op, p, true); err != nil {
		return RequestView{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return RequestView{}, err
	}
	scope, err := parseScope(string(in.Scope))
	if err != nil {
		return RequestView{}, err
	}
	if !validPurpose(in.Purpose) {
		return RequestView{}, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if in.Category != "" && !slices.Contains(PurposeCategories, in.Category) {
		return RequestView{}, model.Fail(op, KindInvalid, "purpose_category must be one of "+strings.Join(PurposeCategories, ", "))
	}
	dur, err := parseTTL(in.Duration)
	if err != nil {
		return RequestView{}, err
	}
	if dur > model.MaxTokenTTL {
		return RequestView{}, model.Fail(op, KindInvalid, "duration must be at most 30 days")
	}
	switch in.Usage {
	case "":
		in.Usage = "multi"
	case "single", "multi":
	case "single-use", "multi-use": // as PCP §4 writes them
		in.Usage = strings.TrimSuffix(in.Usage, "-use")
	default:
		return RequestView{}, model.Fail(op, KindInvalid, "usage must be single or multi (or single-use, multi-use)")
	}
	if in.Disclosure != "" && in.Disclosure != DisclosureReference {
		return RequestView{}, model.Fail(op, KindInvalid, "disclosure may only ask for references; values are the owner's decision")
	}
	if in.Disclosure != "" {
		var err error
		if p, err = p.WithDisclosure(in.Disclosure); err != nil {
			return RequestView{}, err
		}
	}
	var out RequestView
	joined := false
	err = s.write(op, p, func(st *state, b *batch) error {
		if !st.live(p, b.Now) {
			return model.Fail(op, KindUnauthenticated, "")
		}
		if err := st.tooManyPending(op, p.Consumer); err != nil {
			return err
		}
		r, err := st.draftRequest(p, scope, in.Purpose, in.Category, dur, in.Usage, b.Now)
		if err != nil {
			return err
		}
		if requires, auto := st.autoGrants(p, r); auto {
			// Asked again, the request granted at once joins the one
			// already granted, while its grant is in force: asking
			// again adds no record.
			if same := st.grantedAlike(p, r, requires, b.Now); same != nil {
				joined = true
				out = RequestView{ID: same.ID, Status: same.Status, Scope: same.Scope, Purpose: same.Purpose, Tier: same.Tier, Revision: st.Revision}
				return nil
			}
			if err := st.tooManyAutoGrants(op, p.Consumer, b.Now); err != nil {
				return err
			}
		}
		r = st.fileDraft(b, p, r)
		out = RequestView{ID: r.ID, Status: r.Status, Scope: scope, Purpose: r.Purpose, Tier: r.Tier, Revision: st.Revision}
		return nil
	})
	if err != nil || out.Status != RequestApproved {
		return out, err
	}
	v, err := s.pollRequest(ctx, p, out.ID, mint, joined)
	if model.KindOf(err) == KindRateLimited {
		// Granted, but no token now (the app holds as many live tokens as
		// it may, or spent its reads): the request stands, and polling it
		// later fetches its token.
		if v.ID == "" {
			v = out
		}
		v.Token = ""
		return v, nil
	}
	return v, err
}

// approve turns request r into a grant for its consumer, disclosing at most
// maxTier, in personas (all, if none), requiring requires (none if nil)
// (with st.mu held).
func (st *state) approve(b *batch, r *ContextRequest, maxTier string, personas []string, rev uint64, requires *Requires, auto bool) {
	gid, err := identity.NewID("grt_")
	if err != nil {
		b.Err = err
		return
	}
	g := &Grant{
		ID: gid, Recipient: Recipient{Kind: "consumer", ID: r.Consumer}, Purpose: r.Purpose,
		Category: r.Category, Operations: []string{OpRead}, Selectors: Selectors{Keys: r.Scope, Personas: personas},
		ExpiresAt: b.Now.Add(time.Duration(r.Duration) * time.Second), Usage: r.Usage,
		CreatedAt: b.Now, Revision: rev, Request: r.ID, MaxTier: maxTier, Requires: requires, Auto: auto,
		Disclosure: r.Disclosure,
	}
	st.SetGrant(g)
	b.Put(engine.BucketGrants, gid, g)
	at := b.Now
	r.Status, r.DecidedAt, r.GrantID = RequestApproved, &at, gid
}

// PollRequest answers the consumer that made request id, asking on ch:
// its status and, on the first answer after approval where ch may carry a
// token (see RequestContext), a token limited to the request's scope (read
// mode, expiring with the grant), one of the app's live tokens: where the
// app holds as many as it may, KindRateLimited until one expires, and the
// token waits for a later poll. Another consumer's request answers like
// a missing one.
func (s *Service) PollRequest(ctx context.Context, ch Channel, p Principal, id string) (RequestView, error) {
	v, err := s.pollRequest(ctx, p, id, ch.holdsTokens(), false)
	return onChannel(ch, v), err
}

// pollRequest answers request id's consumer p; again mints a token where
// the request's token was already issued (a request granted at once that
// p asked again, as a new request would bring one).
func (s *Service) pollRequest(ctx context.Context, p Principal, id string, mint, again bool) (RequestView, error) {
	const op = "request.get"
	if p.Kind() == PrincipalSealed {
		return RequestView{}, model.Fail(op, KindLocked, "")
	}
	if p.Kind() != PrincipalConsumer {
		return RequestView{}, model.Fail(op, KindInvalid, "requests are polled by the consumer that made them")
	}
	if !identity.ValidID(id, "req_") {
		return RequestView{}, model.Fail(op, KindInvalid, "malformed request id")
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return RequestView{}, err
	}
	token, err := identity.NewToken(identity.ServicePrefix)
	if err != nil {
		return RequestView{}, model.Wrap(op, KindInternal, err)
	}
	tid, err := identity.NewID("tok_")
	if err != nil {
		return RequestView{}, model.Wrap(op, KindInternal, err)
	}
	var out RequestView
	err = s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Requests[id]
		if !ok || r.Consumer != p.Consumer || !st.live(p, b.Now) {
			return model.NotFound(op)
		}
		out = RequestView{ID: r.ID, Status: r.Status, Scope: r.Scope, Purpose: r.Purpose, Tier: r.Tier, Revision: st.Revision}
		if r.Status != RequestApproved {
			return nil
		}
		g := st.Grants[r.GrantID]
		if g == nil {
			return model.Internalf(op, "request %s has no grant", r.ID)
		}
		exp := g.ExpiresAt
		out.ExpiresAt = &exp
		if !mint || (r.TokenIssued && !again) || !g.Allows(OpRead, b.Now) {
			return nil
		}
		// The token is one of the app's live tokens, within its quota as
		// a minted one is: rates count per token, so a token past the
		// quota would multiply the app's rate. The request keeps its
		// token for a later poll.
		if refused := st.tooManyTokens(op, r.Consumer, b.Now); refused != nil {
			refused.Public = "the request is approved, but the app holds as many live tokens as it may: " +
				"revoke one, or wait until one expires, then poll the request again for its token"
			return refused
		}
		t := newToken(tid, token)
		t.Consumer, t.Scope, t.Mode, t.CreatedAt, t.ExpiresAt = r.Consumer, r.Scope, ModeRead, b.Now, g.ExpiresAt
		t.Purpose = r.Purpose // it reads under the purpose it was approved for
		st.putToken(b, t)
		admission.PurgePresentations(st.view, b)
		nr := *r
		nr.TokenIssued = true
		st.Requests[id] = &nr
		b.Put(engine.BucketRequests, id, &nr)
		rev := b.NextRevision()
		b.Receipt(Receipt{Actor: p.Actor(), Operation: "token.create", Recipient: r.Consumer, Purpose: r.Purpose,
			Decision: "allow", Records: []string{tid, r.ID}, Revision: rev})
		out.Token, out.Revision = token, rev
		return nil
	})
	return out, err
}

// ListRequests returns every context request, pending ones first, newest
// first within each (owner only).
func (s *Service) ListRequests(ctx context.Context, p Principal) ([]ContextRequest, error) {
	return ownerRead(s, "request.list", p, func(st *state) ([]ContextRequest, error) {
		out := make([]ContextRequest, 0, len(st.Requests))
		for _, r := range st.Requests {
			out = append(out, *r)
		}
		sort.Slice(out, func(i, j int) bool {
			pi, pj := out[i].Status == RequestPending, out[j].Status == RequestPending
			if pi != pj {
				return pi
			}
			return out[i].CreatedAt.After(out[j].CreatedAt)
		})
		return out, nil
	})
}

// DecideRequest approves or denies a pending request (owner only). An
// approval becomes a grant for the request's consumer, purpose, scope,
// duration and usage, which may disclose sensitive data; a request whose
// scope may reach critical data is approved only with the owner's password
// re-entered ({"password": …}), checked by Config.VerifyPassword.
func (s *Service) DecideRequest(ctx context.Context, p Principal, id string, approve bool, in DecisionInput) (ContextRequest, error) {
	op := "request.deny"
	if approve {
		op = "request.approve"
	}
	if err := p.RequireOwner(op); err != nil {
		return ContextRequest{}, err
	}
	if !identity.ValidID(id, "req_") {
		return ContextRequest{}, model.Fail(op, KindInvalid, "malformed request id")
	}
	if err := s.accept(op, &in); err != nil {
		return ContextRequest{}, err
	}
	passwordOK := false
	if approve && in.Password != "" {
		if s.verifyPassword == nil {
			return ContextRequest{}, model.Fail(op, KindInvalid, "this custodian cannot check a password")
		}
		if wait := s.reentryFailures.Wait("", s.eng.Clock.Now()); wait > 0 {
			return ContextRequest{}, &Error{Op: op, Kind: KindRateLimited, RetryAfter: wait}
		}
		if err := s.verifyPassword([]byte(in.Password)); err != nil {
			s.reentryFailures.Note("", s.eng.Clock.Now())
			return ContextRequest{}, model.Fail(op, KindUnauthenticated, "wrong password")
		}
		passwordOK = true
	}
	if in.Disclosure != "" && (!approve || (in.Disclosure != DisclosureValue && in.Disclosure != DisclosureReference)) {
		return ContextRequest{}, model.Fail(op, KindInvalid, "disclosure (value or reference) goes with an approval")
	}
	if (in.Requires != nil || in.DropRequires) && !approve {
		return ContextRequest{}, model.Fail(op, KindInvalid, "requires and drop_requires go with an approval")
	}
	if in.Requires != nil && in.DropRequires {
		return ContextRequest{}, model.Fail(op, KindInvalid, "requires names a qualification; drop_requires drops one: give one of them")
	}
	r, _, err := s.decide(op, p, id, approve, "owner", func(st *state, r *ContextRequest) error {
		if approve && r.Tier == SensitivityCritical && !passwordOK {
			return model.Fail(op, KindUnauthenticated, "approving critical data needs the owner's password")
		}
		if in.Requires != nil && st.DecPolicies[in.Requires.Qualification] == nil {
			return model.Fail(op, KindInvalid, "requires names no admission policy (phc dec policy add)")
		}
		return nil
	}, in.Requires, in.DropRequires, in.Disclosure)
	return r, err
}

// DecideByUser records the person's answer to a pending request of
// consumer p's own, given in p's MCP host (an elicitation) and relayed by
// it. An approval counts only where the owner's settings allow it
// (elicited_approvals); a refusal always does. Critical data is never
// approved this way: it stays pending for the owner's approval out of band
// (phc approve, with the password), answered KindApprovalRequired. The
// receipt says the decision came through p.
func (s *Service) DecideByUser(ctx context.Context, p Principal, id string, approve bool) (RequestView, error) {
	op := "request.deny"
	if approve {
		op = "request.approve"
	}
	if p.Kind() == PrincipalSealed {
		return RequestView{}, model.Fail(op, KindLocked, "")
	}
	if p.Kind() != PrincipalConsumer {
		return RequestView{}, model.Fail(op, KindInvalid, "only the app whose host asked may relay the answer")
	}
	if !identity.ValidID(id, "req_") {
		return RequestView{}, model.Fail(op, KindInvalid, "malformed request id")
	}
	r, rev, err := s.decide(op, p, id, approve, "user-via:"+p.Actor(), func(st *state, r *ContextRequest) error {
		if r.Consumer != p.Consumer {
			return model.NotFound(op)
		}
		if approve && !st.Settings.ElicitedApprovals {
			return &Error{Op: op, Kind: KindApprovalRequired, RequestID: r.ID,
				Public: "the owner has not allowed approvals through an app's host (settings: elicited_approvals)"}
		}
		if approve && r.Tier == SensitivityCritical {
			return &Error{Op: op, Kind: KindApprovalRequired, RequestID: r.ID,
				Public: "critical data needs the owner's approval out of band (phc approve, with the password)"}
		}
		return nil
	}, nil, false, "")
	if err != nil {
		return RequestView{}, err
	}
	return RequestView{ID: r.ID, Status: r.Status, Scope: r.Scope, Purpose: r.Purpose, Tier: r.Tier, Revision: rev}, nil
}

// decide approves or denies pending request id, after check, in the name
// of actor. An approval's grant requires requires when it is given, else
// the qualification the consumer's earlier grants over the scope require —
// unless drop (the owner's explicit act) drops it; the receipt records
// "policy:ID" of the qualification the grant requires, and
// "requires_dropped:ID" of one dropped.
func (s *Service) decide(op string, p Principal, id string, approve bool, actor string, check func(st *state, r *ContextRequest) error, requires *Requires, drop bool, disclosure string) (ContextRequest, uint64, error) {
	var out ContextRequest
	var outRev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		r, ok := st.Requests[id]
		if !ok {
			return model.NotFound(op)
		}
		if p.Kind() == PrincipalConsumer && (!st.live(p, b.Now) || r.Consumer != p.Consumer) {
			return model.NotFound(op)
		}
		if r.Status != RequestPending {
			return model.Fail(op, KindConflict, "the request was already decided")
		}
		if err := check(st, r); err != nil {
			return err
		}
		records := []string{id}
		if approve {
			inherited, all, ok := st.inheritedRequires(r.Consumer, r.Scope)
			switch {
			case requires != nil:
			case drop:
				for _, q := range all {
					records = append(records, "requires_dropped:"+q)
				}
			case !ok && p.Kind() == PrincipalConsumer:
				return &Error{Op: op, Kind: KindApprovalRequired, RequestID: r.ID,
					Public: "the app's earlier grants over this scope require different qualifications: the owner decides"}
			case !ok:
				return model.Fail(op, KindInvalid, "the app's earlier grants over this scope require different qualifications ("+
					strings.Join(all, ", ")+"): name one in requires, or drop them with drop_requires")
			default:
				requires = inherited
			}
		}
		nr := *r
		if disclosure != "" {
			nr.Disclosure = disclosure
		}
		rev := b.NextRevision()
		if approve {
			st.approve(b, &nr, nr.Tier, nil, rev, requires, false)
			records = append(records, nr.GrantID)
			if requires != nil {
				records = append(records, "policy:"+requires.Qualification)
			}
		} else {
			at := b.Now
			nr.Status, nr.DecidedAt = RequestDenied, &at
		}
		st.Requests[id] = &nr
		b.Put(engine.BucketRequests, id, &nr)
		b.Receipt(Receipt{Actor: actor, Operation: op, Recipient: nr.Consumer, Purpose: nr.Purpose,
			Decision: "allow", Records: records, Revision: rev})
		out, outRev = nr, rev
		return nil
	})
	return out, outRev, err
}

// inheritedRequires is the qualification a new grant to consumer over scope
// must require: the one its earlier grants whose keys may meet scope
// require — revoked, expired and spent ones included, so that asking again
// never walks around a qualification; a grant selecting no keys meets
// every scope; a narrowed grant counts with the selectors it was made
// with. all lists the policies they name, sorted; ok is false when
// they name more than one, which only the owner can settle.
func (st *state) inheritedRequires(consumer string, scope []string) (req *Requires, all []string, ok bool) {
	for _, g := range st.GrantsBy[consumer] {
		if g.Requires == nil || g.Recipient.Kind != "consumer" || slices.Contains(all, g.Requires.Qualification) {
			continue
		}
		sel := g.Selectors
		if g.MadeWith != nil {
			sel = *g.MadeWith // a narrowed grant binds what it first selected
		}
		if len(sel.Keys) == 0 || scopesMeet(sel.Keys, scope) {
			all = append(all, g.Requires.Qualification)
		}
	}
	slices.Sort(all)
	switch len(all) {
	case 0:
		return nil, nil, true
	case 1:
		return &Requires{Qualification: all[0]}, all, true
	}
	return nil, all, false
}

// scopesMeet reports whether some key matches a pattern of a and one of b.
func scopesMeet(a, b []string) bool {
	for _, p := range a {
		for _, q := range b {
			if patternsMeet(p, q) {
				return true
			}
		}
	}
	return false
}

// patternsMeet reports whether some key is covered by both scope patterns.
func patternsMeet(p, q string) bool {
	for _, a := range scopePatterns([]string{p}) {
		for _, b := range scopePatterns([]string{q}) {
			if keyPatternsMeet(a, b) {
				return true
			}
		}
	}
	return false
}

// keyPatternsMeet reports whether some key matches both key patterns (of
// matchKey's language).
func keyPatternsMeet(p, q string) bool {
	pp, pPrefix := strings.CutSuffix(p, ".*")
	qp, qPrefix := strings.CutSuffix(q, ".*")
	switch {
	case p == "*" || q == "*":
		return true
	case pPrefix && qPrefix:
		return underKey(pp, qp) || underKey(qp, pp)
	case pPrefix:
		return engine.MatchKey(p, q)
	case qPrefix:
		return engine.MatchKey(q, p)
	}
	return p == q
}

// approvalNeeded answers a consumer's read, inside its token's scope, of a
// field whose key is sensitive or critical by default, which it may not
// read. The answer depends on the key alone, never on whether the field
// exists. The vault manages the approval (PCP §10): the latest of the
// consumer's requests covering the key (for purpose, when the read names
// one) decides — a denial stands as KindApprovalDenied until a newer
// request; a pending request is joined, answered KindApprovalRequired with
// its request_id; an approval whose grant still serves the key leaves
// nothing to ask for, and the field answers like an absent one. Anything
// else files one pending request for the key and purpose (a read naming
// none files it for unstatedPurpose), within the consumer's quota of
// pending requests, and answers with its request_id to poll — unless the
// request would be granted at once (the app may read the field under
// another purpose, at a tier the auto_grant covers): then no approval
// would serve the read, and it answers like an absent field. An OIDC
// recipient, which files no request, is told to ask the owner for a grant.
func (s *Service) approvalNeeded(op string, p Principal, key, purpose string) error {
	var answer *Error
	err := s.write(op, p, func(st *state, b *batch) error {
		if !st.live(p, b.Now) {
			return model.Fail(op, KindUnauthenticated, "")
		}
		var latest *ContextRequest
		for _, r := range st.Requests {
			if r.Consumer == p.Consumer && matchAny(r.Scope, key) && (purpose == "" || r.Purpose == purpose) &&
				(latest == nil || r.CreatedAt.After(latest.CreatedAt) || (r.CreatedAt.Equal(latest.CreatedAt) && r.ID > latest.ID)) {
				latest = r
			}
		}
		switch {
		case p.Token().Trust != "":
			// An OIDC recipient files no request (requestContext refuses
			// it): only a grant from the owner serves it.
			answer = &Error{Op: op, Kind: KindApprovalRequired,
				Public: "the owner's approval is required: the owner grants it to this OIDC identity (an OIDC recipient files no request)"}
		case latest != nil && latest.Status == RequestDenied:
			answer = model.Fail(op, KindApprovalDenied, "")
		case latest != nil && latest.Status == RequestPending:
			answer = &Error{Op: op, Kind: KindApprovalRequired, RequestID: latest.ID,
				Public: "the owner's approval is required; the request waits for the owner: poll request_id"}
		case latest != nil && latest.Status == RequestApproved && st.approvalServes(latest, key, b.Now):
			answer = model.NotFound(op)
		case st.Settings.AutoGranted(st.requestTier(p, []string{key}, b.Now)):
			// The app may read the field, at a tier the auto_grant
			// covers, under another purpose: the owner's restrictions
			// refuse this read, and no approval lifts them. A request
			// would be granted at once, outside the quota of waiting
			// ones, one more for each purpose the app names: file none.
			// (An absent or hidden field has its key's default tier,
			// sensitive or critical here, which no auto_grant covers.)
			answer = model.NotFound(op)
		default:
			if err := st.tooManyPending(op, p.Consumer); err != nil {
				answer = err
				break
			}
			asked := purpose
			if asked == "" {
				asked = unstatedPurpose
			}
			dur := model.DefaultTokenTTL
			if left := p.Token().ExpiresAt.Sub(b.Now); left < dur {
				dur = max(left, time.Minute)
			}
			r, err := st.fileRequest(b, p, []string{key}, asked, "", dur, "multi")
			if err != nil {
				return err
			}
			answer = &Error{Op: op, Kind: KindApprovalRequired, RequestID: r.ID,
				Public: "the owner's approval is required; the vault asked the owner: poll request_id"}
		}
		b.Receipt(model.DenyReceipt(p, op, answer))
		return nil
	})
	if err != nil {
		return err
	}
	return answer
}

// unstatedPurpose is the purpose of a request the vault files for a read
// that named none, by a token bound to none: the owner sees that the app
// stated no purpose, and the grant an approval makes is the one such
// reads are served under.
const unstatedPurpose = "none stated (a read without a purpose)"

// approvalServes reports whether approved request r's grant still serves
// reads of key: in force at now and selecting it (with st.mu held).
func (st *state) approvalServes(r *ContextRequest, key string, now time.Time) bool {
	g := st.Grants[r.GrantID]
	return g != nil && g.Allows(OpRead, now) && matchAny(g.Selectors.Keys, key)
}

// autoPersonas is the persona selector of a grant made automatically for
// consumer: the personas its live read grants are limited to. When one of
// them is not limited to personas — or it has none, and the auto_grant
// tiers it may read everywhere are all an automatic grant discloses — it
// is nil (every persona).
func (st *state) autoPersonas(consumer string, now time.Time) []string {
	var out []string
	for _, g := range st.grantsFor(consumer, OpRead, now) {
		if len(g.Selectors.Personas) == 0 {
			return nil
		}
		for _, pe := range g.Selectors.Personas {
			if !slices.Contains(out, pe) {
				out = append(out, pe)
			}
		}
	}
	slices.Sort(out)
	return out
}

// tooManyPending is KindRateLimited when consumer already has as many
// requests waiting as it may (with st.mu held).
func (st *state) tooManyPending(op, consumer string) *Error {
	pending := 0
	for _, r := range st.Requests {
		if r.Consumer == consumer && r.Status == RequestPending {
			pending++
		}
	}
	if pending < maxPendingRequests {
		return nil
	}
	return &Error{Op: op, Kind: KindRateLimited, Public: "too many requests wait for the owner", RetryAfter: time.Minute}
}

// fileRequest records p's request for scope and receipts it; a scope whose
// tier (requestTier) the owner's auto_grant covers is approved at once, for
// the auto_grant tiers (with st.mu held for writing).
func (st *state) fileRequest(b *batch, p Principal, scope []string, purpose, category string, dur time.Duration, usage string) (*ContextRequest, error) {
	r, err := st.draftRequest(p, scope, purpose, category, dur, usage, b.Now)
	if err != nil {
		return nil, err
	}
	return st.fileDraft(b, p, r), nil
}

// draftRequest is p's request for scope as fileRequest would file it, not
// yet filed nor decided (with st.mu held).
func (st *state) draftRequest(p Principal, scope []string, purpose, category string, dur time.Duration, usage string, now time.Time) (*ContextRequest, error) {
	id, err := identity.NewID("req_")
	if err != nil {
		return nil, model.Wrap("request.create", KindInternal, err)
	}
	r := &ContextRequest{ID: id, Consumer: p.Consumer, Scope: scope, Purpose: purpose, Category: category,
		Duration: int64(dur / time.Second), Usage: usage, Tier: st.requestTier(p, scope, now),
		Status: RequestPending, CreatedAt: now}
	if p.Disclosure() == DisclosureReference {
		r.Disclosure = DisclosureReference
	}
	return r, nil
}

// autoGrants reports whether draft r of p's is granted at once, and the
// qualification its grant requires (with st.mu held). Granted at once only
// for the tiers the owner's auto_grant covers; anything else waits for the
// owner. A qualification the app's earlier grants over the scope require
// is required again: asking anew never walks around it. Where they require
// different ones, the owner decides.
func (st *state) autoGrants(p Principal, r *ContextRequest) (*Requires, bool) {
	requires, _, ok := st.inheritedRequires(p.Consumer, r.Scope)
	return requires, ok && st.Settings.AutoGranted(r.Tier)
}

// fileDraft files draft r of p's and receipts it, approving it at once
// where autoGrants says so, never across personas the app holds no grant
// for (with st.mu held for writing).
func (st *state) fileDraft(b *batch, p Principal, r *ContextRequest) *ContextRequest {
	rev := b.NextRevision()
	if requires, auto := st.autoGrants(p, r); auto {
		st.approve(b, r, st.Settings.AutoGrant, st.autoPersonas(p.Consumer, b.Now), rev, requires, true)
	}
	st.Requests[r.ID] = r
	b.Put(engine.BucketRequests, r.ID, r)
	b.Receipt(Receipt{Actor: p.Actor(), Operation: "request.create", Recipient: p.Consumer, Purpose: r.Purpose,
		Decision: "allow", Records: []string{r.ID}, Revision: rev})
	return r
}

// maxAutoGrants bounds the grants an app's requests were granted at once
// (by the owner's auto_grant) that are in force at a time.
const maxAutoGrants = 100

// grantedAlike is p's request, granted at once, that draft r (which
// autoGrants grants at once, requiring requires) asks again — the same
// scope, purpose, category, duration, usage and disclosure, granted on the
// terms r would be granted now — whose grant is in force at now; nil if
// none (with st.mu held). It looks at p's own requests and grants only.
func (st *state) grantedAlike(p Principal, r *ContextRequest, requires *Requires, now time.Time) *ContextRequest {
	scope := sortedSet(r.Scope)
	var personas []string
	personasDone := false
	var best *ContextRequest
	for _, g := range st.GrantsBy[p.Consumer] {
		if !g.Auto || g.Recipient.Kind != "consumer" || g.NarrowedAt != nil || !g.Allows(OpRead, now) {
			continue
		}
		old := st.Requests[g.Request]
		if old == nil || old.Consumer != p.Consumer || old.Status != RequestApproved || old.GrantID != g.ID ||
			old.Purpose != r.Purpose || old.Category != r.Category || old.Duration != r.Duration ||
			old.Usage != r.Usage || old.Disclosure != r.Disclosure || old.Tier != r.Tier ||
			!slices.Equal(sortedSet(old.Scope), scope) || g.MaxTier != st.Settings.AutoGrant ||
			!sameRequires(g.Requires, requires) {
			continue
		}
		if !personasDone {
			personas, personasDone = st.autoPersonas(p.Consumer, now), true
		}
		if !slices.Equal(g.Selectors.Personas, personas) {
			continue
		}
		if best == nil || old.CreatedAt.After(best.CreatedAt) || (old.CreatedAt.Equal(best.CreatedAt) && old.ID > best.ID) {
			best = old
		}
	}
	return best
}

func sortedSet(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

func sameRequires(a, b *Requires) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Qualification == b.Qualification
}

// tooManyAutoGrants is KindRateLimited when consumer's grants made at once
// by the auto_grant, in force at now, number maxAutoGrants, until the first
// of them ends (with st.mu held).
func (st *state) tooManyAutoGrants(op, consumer string, now time.Time) *Error {
	n := 0
	var first time.Time
	for _, g := range st.GrantsBy[consumer] {
		if !g.Auto || g.Recipient.Kind != "consumer" || !g.Allows(OpRead, now) {
			continue
		}
		n++
		if first.IsZero() || g.ExpiresAt.Before(first) {
			first = g.ExpiresAt
		}
	}
	if n < maxAutoGrants {
		return nil
	}
	return &Error{Op: op, Kind: KindRateLimited, RetryAfter: max(first.Sub(now), time.Second),
		Public: "the app holds as many grants made at once as it may (" + strconv.Itoa(maxAutoGrants) +
			" in force): ask again on the same terms to reuse one, or wait until one expires"}
}
