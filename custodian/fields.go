package custodian

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/localvault"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/pcp"
)

// Field is a PCP field (see pcp.Field).
type Field = pcp.Field

// fieldCached is fieldView(r, true) with its JSON, encoded once per record
// (a record is replaced, never changed, so the cache cannot go stale).
func fieldCached(r *claimRecord) Field {
	if f := r.Field.Load(); f != nil {
		return *f
	}
	f := fieldView(r, true)
	_ = f.CacheJSON() // uncached, it is encoded when served
	r.Field.Store(&f)
	return f
}

// fieldView is the field of claim record r; withValue says whether the value
// is shown (discovery never shows it).
func fieldView(r *claimRecord, withValue bool) Field {
	f := claimField(r.Head(), withValue)
	if r.Meta.DisputedAt != nil {
		f.Status = ConfirmationDisputed
	}
	return f
}

// claimField is the field of claim c, undisputed (see fieldView).
func claimField(c *Claim, withValue bool) Field {
	cat, name, _ := strings.Cut(c.Key, ".")
	f := Field{ID: c.Key, Category: cat, FieldName: name, Sensitivity: c.Sensitivity,
		UpdatedAt: c.RecordedAt, Version: c.Version, WrittenBy: c.WrittenBy, ClaimID: c.ID}
	if withValue {
		f.Value = c.Value
	}
	return f
}

// field returns the record of the field key: of the active claims about the
// owner with that key, the one written last (by revision, which only grows;
// wall-clock time may step back). Callers hold st.mu.
func (st *state) field(key string) *claimRecord { return st.FieldOf[key] }

// fields returns the fields (one per key) whose keys match pattern, sorted
// by key. Callers hold st.mu.
func (st *state) fields(pattern string) []*claimRecord {
	var out []*claimRecord
	key := ""
	engine.ScanPattern(st.Active, pattern, func(r *claimRecord) bool {
		if k := r.Meta.Key; k != key {
			key = k
			if f := st.field(k); f != nil {
				out = append(out, f)
			}
		}
		return true
	})
	return out
}

// fieldsOf returns the fields of the keys of records (sorted by key), in
// order, one per key and only those matching pattern. Callers hold st.mu.
func (st *state) fieldsOf(records []*claimRecord, pattern string) []*claimRecord {
	var out []*claimRecord
	key := ""
	for _, r := range records {
		k := r.Meta.Key
		if k == key || !engine.MatchKey(pattern, k) {
			continue
		}
		key = k
		if f := st.field(k); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// ListFields is PCP discovery: fields without values. The owner sees every
// field; a consumer sees the fields it may read (see [Service.GetField]),
// and its discovery is receipted.
func (s *Service) ListFields(ctx context.Context, p Principal, purpose string) (FieldList, error) {
	fs, _, rev, err := s.fieldsFor("field.list", p, purpose, "*", false)
	if err != nil {
		return FieldList{}, err
	}
	return FieldList{ContextVersion: PCPVersion, Fields: fs, Revision: rev}, nil
}

// fieldsFor reads the fields whose keys match pattern (with their values,
// if withValue): every one of them for the owner, as a settled owner read;
// those it may read for a consumer, as a decided and receipted recipient
// read (see consumerFields).
func (s *Service) fieldsFor(op string, p Principal, purpose, pattern string, withValue bool) ([]Field, []string, uint64, error) {
	if p.Kind() == PrincipalConsumer {
		var err error
		if purpose, err = p.ReadPurpose(op, purpose); err != nil {
			return nil, nil, 0, err
		}
		return s.consumerFields(op, p, purpose, pattern, withValue)
	}
	type read struct {
		fs  []Field
		rev uint64
	}
	out, err := ownerRead(s, op, p, func(st *state) (read, error) {
		out := read{fs: []Field{}, rev: st.Revision}
		for _, r := range st.fields(pattern) {
			if withValue {
				out.fs = append(out.fs, fieldCached(r))
			} else {
				out.fs = append(out.fs, fieldView(r, false))
			}
		}
		return out, nil
	})
	return out.fs, nil, out.rev, err
}

// checkFieldID refuses a malformed field id as KindInvalid, before
// anything else is decided: a field is addressed as category.field_name
// (PCP §2), so a key without a period is a format error on every route
// that takes a field id, never a missing field.
func checkFieldID(op, id string) error {
	if !model.ValidKey(id) {
		return model.Fail(op, KindInvalid, "malformed field id")
	}
	if !strings.Contains(id, ".") {
		return model.Fail(op, KindInvalid, "a field id is category.field_name: at least two dot-separated segments")
	}
	return nil
}

// GetField returns field id with its value. A key outside the consumer
// token's scope is KindScopeExceeded whether or not the field exists: the
// answer depends on the token's own scope, which the app knows, and never
// files a request or names a purpose. A consumer may read it when its
// token's mode and scope allow, and either the field's tier is one the
// owner's auto_grant setting grants every approved consumer, or one of its
// read grants covers it — for purpose, when given, else for the one purpose
// of the grants that serve it (KindPurposeRequired, listing them, where
// grants of several purposes could). Anything else — and a field that does
// not exist — is the same KindNotFound, with the same receipt; for a key
// sensitive by default it is approvalNeeded's answer instead, which files
// the request the read needs. A value another app wrote comes with a
// warning naming it.
func (s *Service) GetField(ctx context.Context, p Principal, id, purpose string) (FieldRead, error) {
	const op = "field.get"
	if err := checkFieldID(op, id); err != nil {
		return FieldRead{}, err
	}
	if p.Kind() == PrincipalConsumer && p.Token() != nil && p.Token().CanRead() && !matchAny(p.Token().Scope, id) {
		return FieldRead{}, s.outOfScope(op, p)
	}
	fs, warnings, rev, err := s.fieldsFor(op, p, purpose, id, true)
	if err != nil {
		return FieldRead{}, err
	}
	if len(fs) == 0 {
		if p.Kind() == PrincipalConsumer {
			purpose, _ = p.ReadPurpose(op, purpose) // fieldsFor accepted it
		}
		if p.Kind() == PrincipalConsumer && model.TierRank[defaultSensitivity(id)] >= model.TierRank[SensitivitySensitive] {
			return FieldRead{}, s.approvalNeeded(op, p, id, purpose)
		}
		return FieldRead{}, model.NotFound(op)
	}
	return FieldRead{Field: fs[0], Revision: rev, Warnings: warnings}, nil
}

// outOfScope refuses consumer p's use of a key outside its token's scope,
// with a deny receipt, after the rate limit every read counts against.
func (s *Service) outOfScope(op string, p Principal) error {
	if err := s.rateLimit(op, p, false); err != nil {
		return err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	refused := model.Fail(op, KindScopeExceeded, "the key is outside the token's scope")
	if err := s.commit(st, func(st *state, b *batch) error {
		if !st.live(p, b.Now) {
			refused = model.Fail(op, KindUnauthenticated, "")
		}
		b.Receipt(model.DenyReceipt(p, op, refused))
		return nil
	}); err != nil {
		return err
	}
	return refused
}

// FieldsInCategory returns the fields of a category with values: all of
// them for the owner, those it may read for a consumer.
func (s *Service) FieldsInCategory(ctx context.Context, p Principal, category, purpose string) (CategoryFields, error) {
	const op = "field.category"
	if !model.ValidSegment(category) {
		return CategoryFields{}, model.Fail(op, KindInvalid, "malformed category")
	}
	fs, warnings, rev, err := s.fieldsFor(op, p, purpose, category+".*", true)
	if err != nil {
		return CategoryFields{}, err
	}
	return CategoryFields{Category: category, Fields: fs, Revision: rev, Warnings: warnings}, nil
}

// FieldContext returns fields with values grouped by category: all of them
// for the owner, those it may read for a consumer (absent, not redacted).
func (s *Service) FieldContext(ctx context.Context, p Principal, purpose string) (ContextBundle, error) {
	const op = "field.context"
	fs, warnings, rev, err := s.fieldsFor(op, p, purpose, "*", true)
	if err != nil {
		return ContextBundle{}, err
	}
	return ContextBundle{ContextVersion: PCPVersion, Categories: pcp.ByCategory(fs), Revision: rev, Warnings: warnings}, nil
}

// fieldGrant reports whether consumer p may read field r for purpose (which
// may be empty: PCP reads carry none) and under which of grants — p's read
// grants in force, from grantsFor — (nil for the owner's auto_grant).
// Callers hold st.mu.
func (st *state) fieldGrant(p Principal, r *claimRecord, purpose string, now time.Time, grants []*Grant) (*Grant, bool) {
	g, ok := st.fieldGrantOf(p, r, purpose, now, grants)
	if ok && !st.endsVisible(r.Head(), func(x *claimRecord) bool {
		_, ok := st.fieldGrantOf(p, x, purpose, now, grants)
		return ok
	}, nil) {
		return nil, false
	}
	return g, ok
}

// fieldGrantOf is fieldGrant without the check of a relationship's ends.
func (st *state) fieldGrantOf(p Principal, r *claimRecord, purpose string, now time.Time, grants []*Grant) (*Grant, bool) {
	c := r.Head()
	if p.Token() == nil || !p.Token().CanRead() || !matchAny(p.Token().Scope, c.Key) {
		return nil, false
	}
	// The auto_grant is no decision about any purpose: a purpose the app
	// names itself satisfies no purpose_only restriction.
	if st.Settings.AutoGranted(c.Sensitivity) && restrictionsAllow(c.Restrictions, "", &Grant{}, now) {
		return nil, true
	}
	// A grant serves only the purpose it was made for: a read under no
	// purpose (consumerFieldsWhere settles one where a single purpose's
	// grants serve it) gets what auto_grant gives, never the union of the
	// grants.
	if purpose == "" {
		return nil, false
	}
	g := st.readGrant(grants, p, r, purpose, now)
	return g, g != nil
}

// servingPurposes lists, sorted, the purposes of consumer p's read grants
// (grants, from grantsFor) that would serve its read of some field whose
// key matches pattern, where auto_grant alone would not: only grants of the
// app's own, each serving a field the app may read under its purpose, so
// the list tells the app nothing it could not read. Callers hold st.mu.
//
// Each purpose is tried with its own grants only (candidates and
// fieldGrant pass over grants of other purposes), so the cost follows the
// number of grants, not its square: an app's grants are many where it asks
// for public data under ever new purposes.
func (st *state) servingPurposes(p Principal, grants []*Grant, pattern string, now time.Time) []string {
	byPurpose := map[string][]*Grant{}
	var purposes []string
	for _, g := range grants {
		if _, ok := byPurpose[g.Purpose]; !ok {
			purposes = append(purposes, g.Purpose)
		}
		byPurpose[g.Purpose] = append(byPurpose[g.Purpose], g) // in grants' order
	}
	slices.Sort(purposes)
	serving := purposes[:0]
	for _, q := range purposes {
		own := byPurpose[q]
		for _, r := range st.fieldsOf(st.candidates(p, own, q, false), pattern) {
			if g, ok := st.fieldGrant(p, r, q, now, own); ok && g != nil {
				serving = append(serving, q)
				break
			}
		}
	}
	return serving
}

// purposeRequired refuses a read that names no purpose where grants of
// several purposes could serve it: the app names one of purposes.
func purposeRequired(op string, purposes []string) *Error {
	return &Error{Op: op, Kind: KindPurposeRequired, Purposes: purposes,
		Public: "grants for several purposes could serve this read: pass purpose, naming one of purposes"}
}

// consumerFields is a consumer's read of the fields whose keys match
// pattern, decided and receipted like every recipient read. The read of one
// field (a pattern without a wildcard) that a grant would serve but for its
// qualification is refused as qualification_required, in the answer and in
// the receipt alike.
func (s *Service) consumerFields(op string, p Principal, purpose, pattern string, withValue bool) (fs []Field, warnings []string, rev uint64, err error) {
	return s.consumerFieldsWhere(op, p, purpose, pattern, withValue, nil)
}

// consumerFieldsWhere is consumerFields keeping, of the fields p may read,
// only those pick returns, in the order it returns them (nil: all of them,
// in key order). Only the fields kept are disclosed and receipted.
func (s *Service) consumerFieldsWhere(op string, p Principal, purpose, pattern string, withValue bool, pick func(rs []*claimRecord, byRef func(*claimRecord) bool) []*claimRecord) (fs []Field, warnings []string, rev uint64, err error) {
	if purpose != "" && !validPurpose(purpose) {
		return nil, nil, 0, model.Fail(op, KindInvalid, model.ErrPurpose)
	}
	if err := s.rateLimit(op, p, false); err != nil {
		return nil, nil, 0, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return nil, nil, 0, err
	}
	defer release()
	if !p.Token().CanRead() {
		return nil, nil, 0, s.refuse(st, p, op, model.Fail(op, KindModeDenied, "the token does not allow reads"))
	}
	rc := Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Purpose: purpose}
	var (
		wants []localvault.Want
		at    []int // the index in fs of each want
	)
	asked := purpose // "" only for a token bound to no purpose, reading without naming one
	_, err = s.recipientReadAs(st, p, &rc, func(st *state, now time.Time) (records []string, used []*Grant, refused *Error) {
		fs, warnings, rev, wants, at = []Field{}, nil, st.Revision, nil, nil
		rc.Purpose = asked
		if !st.live(p, now) {
			return nil, nil, nil
		}
		seen := map[*Grant]bool{}
		grants := st.grantsFor(p.Consumer, OpRead, now)
		// A read that names no purpose reads under the purpose of the
		// grants that serve it, when they share one; where grants of
		// several purposes could serve it, the app names one.
		purpose := asked
		if purpose == "" {
			serving := st.servingPurposes(p, grants, pattern, now)
			switch len(serving) {
			case 0:
			case 1:
				purpose = serving[0]
			default:
				return nil, nil, purposeRequired(op, serving)
			}
			rc.Purpose = purpose
		}
		// Only the keys its scope, the auto_grant and its grants for the
		// purpose can select.
		cands := st.fieldsOf(st.candidates(p, grants, purpose, true), pattern)
		if pick != nil {
			readable := cands[:0:0]
			for _, r := range cands {
				if _, ok := st.fieldGrant(p, r, purpose, now, grants); ok {
					readable = append(readable, r)
				}
			}
			// A value served as a reference is matched by nothing but its
			// key: its text must not answer a search.
			cands = pick(readable, func(r *claimRecord) bool {
				g, _ := st.fieldGrant(p, r, purpose, now, grants)
				return st.referenceMode(p, g, r.Head())
			})
		}
		fs, records = make([]Field, 0, len(cands)), make([]string, 0, len(cands))
		for _, r := range cands {
			g, ok := st.fieldGrant(p, r, purpose, now, grants)
			if !ok {
				continue
			}
			f := fieldView(r, false)
			if withValue {
				f = fieldCached(r)
				if st.referenceMode(p, g, r.Head()) {
					gid := ""
					if g != nil {
						gid = g.ID
					}
					wants = append(wants, localvault.Want{Claim: r.Meta.ID, Version: r.Head().Version, Grant: gid, Purpose: purpose})
					at = append(at, len(fs))
				}
			}
			fs = append(fs, f)
			records = append(records, r.Head().Ref())
			// Discovery shows no value: it spends no single-use grant.
			if g != nil && !seen[g] && (withValue || g.Usage != "single") {
				seen[g] = true
				used = append(used, g)
			}
			if author := r.Head().Producer.Authenticated; withValue && author.Kind != "owner" && !(author.Kind == "consumer" && author.ID == p.Consumer) {
				warnings = append(warnings, "the value of "+f.ID+" was written by another app: "+author.ID)
			}
		}
		if len(records) == 0 && withValue && !strings.Contains(pattern, "*") {
			if failed := st.qualificationFailure(p, purpose, pattern, "", now); failed != nil {
				return nil, nil, qualificationRequired(op, failed)
			}
		}
		return records, used, nil
	})
	if err != nil || len(wants) == 0 {
		return fs, warnings, rev, err
	}
	hint, err := s.asReferences(op, st, p.Consumer, fs, wants, at)
	if err != nil {
		return nil, nil, 0, err
	}
	return fs, append(warnings, hint), rev, nil
}

// asReferences replaces the value of field fs[at[i]] by the reference that
// stands for it for reader, for each wants[i], and returns the warning
// that tells the reader how to obtain the values (referenceHint).
func (s *Service) asReferences(op string, st *state, reader string, fs []Field, wants []localvault.Want, at []int) (string, error) {
	texts, err := s.references(st, reader, wants)
	if err != nil {
		return "", err
	}
	keys := make([]string, 0, len(wants))
	for i, w := range wants {
		f := fs[at[i]]
		f.Value, _ = json.Marshal(texts[w.Claim])
		if err := f.CacheJSON(); err != nil {
			return "", model.Wrap(op, KindInternal, err)
		}
		fs[at[i]] = f
		keys = append(keys, f.ID)
	}
	st.Mu.RLock()
	localVaults := st.Settings.LocalVaults
	st.Mu.RUnlock()
	return referenceHint(keys, localVaults), nil
}

// referenceHint tells an app that the values of keys came as references
// (⟦TYPE_N:display⟧, the owner's disclosure settings or grant) and how it
// obtains the values: the person's local vault hook resolves them with a
// Client-Vault v=1 resolve, which needs the owner's local_vaults on; or
// the owner approves the app's request with values.
func referenceHint(keys []string, localVaults bool) string {
	const resolve = "the person's local vault hook puts the values in place through a Client-Vault v=1 resolve " +
		"(client_vault_endpoint in /.well-known/oauth-protected-resource/mcp; its key is bound by an MCP request " +
		"carrying the Client-Vault header and activated by the owner)"
	head := "the values of " + strings.Join(keys, ", ") + " are references (⟦…⟧), not the values, as the owner's disclosure settings give them: "
	if localVaults {
		return head + resolve + "; or ask the owner to approve your request with values (disclosure value)"
	}
	return head + "ask the owner to approve your request with values (disclosure value), or to turn on local vaults, so that " + resolve
}

// PutField writes field id. The owner's write is a new version of the
// field's claim when there is one, else a new claim (a confirmed, reported
// fact about the owner, written by the user); the previous value stays as a
// superseded version. An app's write needs a token with write mode whose
// scope covers the key (else KindModeDenied, KindScopeExceeded) and never
// touches a user-only-write field (KindUserOnlyWrite). Where PCP
// auto-approves (see agentPutField) it is committed at once — written_by
// names the app, confirmation.by is "auto_grant" — and the answer is the
// field with status "committed"; anything else, sensitive data included,
// becomes a proposal waiting for the owner, answered with its proposal_id
// and status "pending". Which one never depends on a field the app may not
// read: where one is hidden from it, the answer is an absent field's, and
// a write that answers committed waits for the owner (fileBlind).
func (s *Service) PutField(ctx context.Context, p Principal, id string, in FieldInput) (FieldWritten, *Proposed, error) {
	const op = "field.put"
	if err := checkFieldID(op, id); err != nil {
		return FieldWritten{}, nil, err
	}
	if err := s.accept(op, &in); err != nil {
		return FieldWritten{}, nil, err
	}
	if len(in.Value) == 0 || string(in.Value) == "null" {
		return FieldWritten{}, nil, model.Fail(op, KindInvalid, "value is required")
	}
	if in.Sensitivity != "" {
		if _, ok := model.TierRank[in.Sensitivity]; !ok {
			return FieldWritten{}, nil, model.Fail(op, KindInvalid, "unknown sensitivity tier")
		}
	}
	switch p.Kind() {
	case PrincipalOwner:
		out, err := s.ownerPutField(op, p, id, in)
		return out, nil, err
	case PrincipalConsumer:
		return s.agentPutField(op, p, id, in)
	case PrincipalSealed:
		return FieldWritten{}, nil, model.Fail(op, KindLocked, "")
	}
	return FieldWritten{}, nil, model.Fail(op, KindUnauthenticated, "")
}

func (s *Service) ownerPutField(op string, p Principal, id string, in FieldInput) (FieldWritten, error) {
	var out FieldWritten
	err := s.write(op, p, func(st *state, b *batch) error {
		r, records := st.writeField(b, id, in, model.OwnerAuth, "owner")
		c := r.Head()
		b.Receipt(Receipt{Actor: "owner", Operation: op, Decision: "allow",
			Records: append(records, c.Ref()), Revision: c.Revision})
		out = FieldWritten{FieldRead: FieldRead{Field: fieldView(r, true), Revision: c.Revision}, Status: WriteCommitted}
		return nil
	})
	return out, err
}

// writeField writes value and tier of in to field id as author, confirmed
// by confirmedBy: a new version of the field's claim, or a new claim. It
// returns the field's record and the ref of the version it superseded, if
// any.
func (st *state) writeField(b *batch, id string, in FieldInput, author Authenticated, confirmedBy string) (*claimRecord, []string) {
	if r := st.field(id); r != nil {
		prev := r.Head().Ref()
		return st.addVersion(b, r, author, confirmedBy, func(c *Claim) {
			c.Value = in.Value
			if in.Sensitivity != "" {
				c.Sensitivity = in.Sensitivity
			}
		}), []string{prev}
	}
	return st.newClaim(b, newFieldClaim(b, id, in, author, confirmedBy), []string{}), nil
}

// newFieldClaim is the first version of a new field id, written as
// writeField writes it.
func newFieldClaim(b *batch, id string, in FieldInput, author Authenticated, confirmedBy string) *Claim {
	cid, err := identity.NewOrderedID("clm_", b.Now)
	if err != nil {
		b.Err = err
		cid = "clm_" + strings.Repeat("A", 26)
	}
	at := b.Now
	tier := in.Sensitivity
	if tier == "" {
		tier = defaultSensitivity(id)
	}
	return &Claim{
		ID: cid, Version: 1, Key: id, Value: in.Value, Subject: SubjectSelf, Kind: "fact",
		Assertion: AssertionReported, Confirmation: Confirmation{Status: ConfirmationConfirmed, By: confirmedBy, At: &at},
		Producer: Producer{Authenticated: author}, Evidence: []Evidence{}, RecordedAt: at,
		Sensitivity: tier, Restrictions: []Restriction{}, WrittenBy: writtenByOf(author),
	}
}

// userOnlyWrite lists the fields no app may write, whatever its grants;
// each covers its subtree too (identity.ssn.number).
var userOnlyWrite = []string{"identity.ssn", "identity.tax_id", "financial.bank_routing", "financial.bank_account_number"}

// userOnly reports whether key is a field only the owner may write: a
// built-in one, below one, or one the owner marked.
func (st *state) userOnly(key string) bool {
	for _, k := range userOnlyWrite {
		if underKey(k, key) {
			return true
		}
	}
	return matchAny(st.Settings.UserOnlyWrite, key)
}

// underKey reports whether key is k or below it.
func underKey(k, key string) bool {
	return key == k || strings.HasPrefix(key, k+".")
}

func (s *Service) agentPutField(op string, p Principal, id string, in FieldInput) (FieldWritten, *Proposed, error) {
	if err := s.rateLimit(op, p, true); err != nil {
		return FieldWritten{}, nil, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return FieldWritten{}, nil, err
	}
	defer release()
	switch {
	case !p.Token().CanWrite():
		return FieldWritten{}, nil, s.refuse(st, p, op, model.Fail(op, KindModeDenied, "the token does not allow writes"))
	case !matchAny(p.Token().Scope, id):
		return FieldWritten{}, nil, s.refuse(st, p, op, model.Fail(op, KindScopeExceeded, "the key is outside the token's scope"))
	}
	var (
		out     FieldWritten
		pending *Proposed
		refused *Error
	)
	author := Authenticated{Kind: "consumer", ID: p.Consumer}
	err = s.commit(st, func(st *state, b *batch) error {
		deny := func(e *Error) error {
			refused = e
			b.Receipt(model.DenyReceipt(p, op, e))
			return nil
		}
		if !st.live(p, b.Now) {
			return deny(model.Fail(op, KindUnauthenticated, ""))
		}
		if st.userOnly(id) {
			return deny(model.Fail(op, KindUserOnlyWrite, ""))
		}
		// Decide only on what the app may know: the key's default tier, the
		// tier it asks for, and the field itself only if it may read it (the
		// auto_grant's tiers; else it is still known where the app reads it
		// under a grant); a field it cannot read counts as one it did not
		// write, and one it may not know of is decided as an absent one.
		cur := st.field(id)
		visible, blind := false, false
		if cur != nil {
			grants := st.grantsFor(p.Consumer, OpRead, b.Now)
			_, visible = st.fieldGrant(p, cur, "", b.Now, grants)
			reads := func(g *Grant) bool { _, ok := st.fieldGrant(p, cur, g.Purpose, b.Now, grants); return ok }
			blind = !visible && !slices.ContainsFunc(grants, reads)
		}
		known := model.RaiseTier(defaultSensitivity(id), in.Sensitivity)
		if visible {
			known = model.RaiseTier(known, cur.Meta.Tier)
		}
		// The tier written is never lower than the field's own.
		tier := known
		if cur != nil {
			tier = model.RaiseTier(tier, cur.Meta.Tier)
		}
		// PCP auto-approves a public or standard write: here where the
		// owner's auto_grant covers the tier, and nothing is replaced that
		// the app did not write itself under that same policy (one the owner
		// confirmed, or another producer wrote). "committed" is given only
		// where the app could read the result back (a token that reads this
		// key, a tier auto_grant lets it read). Everything else — a
		// write-only token, a field the app cannot read, a contribute grant
		// alone — is a proposal for the owner.
		readBack := p.Token().CanRead() && st.Settings.AutoGranted(known)
		// Its own: written by this app — under this name, and since this
		// consumer record exists (a removed app's namesake inherits
		// nothing) — under the auto_grant policy.
		mine := cur == nil || blind || (visible && cur.Head().Producer.Authenticated == author && cur.Head().Confirmation.By == "auto_grant" &&
			!cur.Head().RecordedAt.Before(st.consumerSince(p.Consumer)))
		confirm := readBack && mine && st.Settings.AutoGranted(known) && model.TierRank[known] <= model.TierRank[SensitivityStandard]
		w := in
		w.Sensitivity = known
		if confirm && blind {
			// Where the field is hidden from the app, what an absent one
			// would answer, and the owner reviews the write (fileBlind).
			return st.fileBlind(b, p, op, newFieldClaim(b, id, w, author, "auto_grant"), tier, &out)
		}
		if confirm {
			r, records := st.writeField(b, id, w, author, "auto_grant")
			c := r.Head()
			b.Receipt(Receipt{Actor: p.Actor(), Operation: op, Recipient: p.Consumer, Decision: "allow",
				Records: append(records, c.Ref()), Revision: c.Revision})
			out = FieldWritten{FieldRead: FieldRead{Field: fieldView(r, true), Revision: c.Revision}, Status: WriteCommitted}
			return nil
		}
		if err := st.tooManyProposals(op, p.Consumer); err != nil {
			return err
		}
		pid, err := identity.NewOrderedID("prp_", b.Now)
		if err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		pr := &Proposal{
			ID: pid, Status: StatusProposed, Key: id, Value: in.Value, Subject: SubjectSelf,
			Kind: "fact", Assertion: AssertionReported, Producer: Producer{Authenticated: author},
			Evidence: []Evidence{}, Sensitivity: tier, Restrictions: []Restriction{},
			ProposedAt: b.Now, Revision: b.NextRevision(),
		}
		st.filePending(b, pr)
		b.Receipt(Receipt{Actor: p.Actor(), Operation: "proposal.create", Recipient: p.Consumer, Decision: "allow",
			Records: []string{pid}, Revision: pr.Revision})
		pending = &Proposed{ProposalID: pid, Status: WritePending, Revision: pr.Revision}
		return nil
	})
	if err == nil && refused != nil {
		return FieldWritten{}, nil, refused
	}
	return out, pending, err
}

// SetSensitivity overrides the tier of the owner's field id (a new version
// with the tier changed).
func (s *Service) SetSensitivity(ctx context.Context, p Principal, id string, in SensitivityInput) (FieldRead, error) {
	const op = "field.sensitivity"
	if err := p.RequireOwner(op); err != nil {
		return FieldRead{}, err
	}
	if err := checkFieldID(op, id); err != nil {
		return FieldRead{}, err
	}
	if err := s.accept(op, &in); err != nil {
		return FieldRead{}, err
	}
	if _, ok := model.TierRank[in.Tier]; !ok {
		return FieldRead{}, model.Fail(op, KindInvalid, "tier must be public, standard, sensitive or critical")
	}
	var out FieldRead
	err := s.write(op, p, func(st *state, b *batch) error {
		r := st.field(id)
		if r == nil {
			return model.NotFound(op)
		}
		prev := r.Head()
		r = st.addVersion(b, r, prev.Producer.Authenticated, "owner", func(c *Claim) {
			// The content and its provenance stay; only the tier changes.
			*c = Claim{ID: c.ID, Version: c.Version, Key: prev.Key, Value: prev.Value, Subject: prev.Subject,
				Kind: prev.Kind, Assertion: prev.Assertion, Confirmation: c.Confirmation, Producer: prev.Producer,
				Evidence: prev.Evidence, ValidFrom: prev.ValidFrom, ValidTo: prev.ValidTo, RecordedAt: c.RecordedAt,
				Sensitivity: in.Tier, Restrictions: prev.Restrictions, WrittenBy: prev.WrittenBy, Note: prev.Note}
		})
		c := r.Head()
		b.Receipt(Receipt{Actor: "owner", Operation: "field.sensitivity", Decision: "allow",
			Records: []string{prev.Ref(), c.Ref()}, Revision: c.Revision})
		out = FieldRead{Field: fieldView(r, true), Revision: c.Revision}
		return nil
	})
	return out, err
}

// DeleteField erases every active claim about the owner with key id (owner
// only), as DeleteClaim does for one.
func (s *Service) DeleteField(ctx context.Context, p Principal, id string) (uint64, error) {
	const op = "field.delete"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	if err := checkFieldID(op, id); err != nil {
		return 0, err
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		var doomed []*claimRecord
		for r := st.field(id); r != nil; r = st.field(id) {
			doomed = append(doomed, r)
			st.erase(b, r)
		}
		if len(doomed) == 0 {
			return model.NotFound(op)
		}
		rev = b.NextRevision()
		var refs []string
		for _, r := range doomed {
			for v := 1; v <= r.Meta.Head; v++ {
				refs = append(refs, model.VersionRef(r.Meta.ID, v))
			}
		}
		b.Receipt(Receipt{Actor: "owner", Operation: "field.delete", Decision: "allow", Records: refs, Revision: rev})
		return nil
	})
	return rev, err
}
