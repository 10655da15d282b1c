package custodian

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/phc-project/phc/internal/identity"
)

// PCPVersion is the Personal Context Protocol version the /context facade
// speaks.
const PCPVersion = "0.1.0"

// Field is a PCP field: the current active claim about the owner (subject
// self) for a key. Its id is the key in dot notation; its category is the
// key's first segment and its field name the rest.
type Field struct {
	ID          string          `json:"id"`
	Category    string          `json:"category"`
	FieldName   string          `json:"field_name"`
	Value       json.RawMessage `json:"value,omitempty"`
	Sensitivity string          `json:"sensitivity"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Version     int             `json:"version"`
	WrittenBy   string          `json:"written_by"`
	ClaimID     string          `json:"claim_id"`
}

// fieldView is the field of claim record r; withValue says whether the value
// is shown (discovery never shows it).
func fieldView(r *claimRecord, withValue bool) Field {
	c := r.head()
	cat, name, _ := strings.Cut(c.Key, ".")
	f := Field{ID: c.Key, Category: cat, FieldName: name, Sensitivity: c.Sensitivity,
		UpdatedAt: c.RecordedAt, Version: c.Version, WrittenBy: c.WrittenBy, ClaimID: c.ID}
	if withValue {
		f.Value = c.Value
	}
	return f
}

// field returns the record of the field key: of the active claims about the
// owner with that key, the one recorded last. Callers hold st.mu.
func (st *state) field(key string) *claimRecord {
	active := st.activeClaims()
	i := sort.Search(len(active), func(i int) bool { return active[i].head().Key >= key })
	var best *claimRecord
	for ; i < len(active) && active[i].head().Key == key; i++ {
		r := active[i]
		if r.head().Subject != SubjectSelf {
			continue
		}
		if best == nil || r.head().RecordedAt.After(best.head().RecordedAt) {
			best = r
		}
	}
	return best
}

// fields returns the fields (one per key) whose keys match pattern, sorted
// by key. Callers hold st.mu.
func (st *state) fields(pattern string) []*claimRecord {
	var out []*claimRecord
	for _, r := range st.activeClaims() {
		k := r.head().Key
		if !matchKey(pattern, k) || (len(out) > 0 && out[len(out)-1].head().Key == k) {
			continue
		}
		if f := st.field(k); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// FieldList is the discovery answer: fields without values.
type FieldList struct {
	ContextVersion string  `json:"context_version"`
	Fields         []Field `json:"fields"`
	Revision       uint64  `json:"revision"`
}

// ListFields is PCP discovery for the owner: every field, never a value.
func (s *Service) ListFields(ctx context.Context, p Principal) (FieldList, error) {
	return ownerRead(s, "field.list", p, func(st *state) (FieldList, error) {
		out := FieldList{ContextVersion: PCPVersion, Fields: []Field{}, Revision: st.revision}
		for _, r := range st.fields("*") {
			out.Fields = append(out.Fields, fieldView(r, false))
		}
		return out, nil
	})
}

// FieldRead is one field with its value, at a revision. The field's members
// are at the top level of its JSON, as PCP clients read them.
type FieldRead struct {
	Field
	Revision uint64 `json:"revision"`
}

// GetField returns the owner's field id with its value.
func (s *Service) GetField(ctx context.Context, p Principal, id string) (FieldRead, error) {
	const op = "field.get"
	if !validKey(id) {
		return FieldRead{}, fail(op, KindInvalid, "malformed field id")
	}
	return ownerRead(s, op, p, func(st *state) (FieldRead, error) {
		r := st.field(id)
		if r == nil {
			return FieldRead{}, notFound(op)
		}
		return FieldRead{Field: fieldView(r, true), Revision: st.revision}, nil
	})
}

// CategoryFields lists the fields of one category, with values.
type CategoryFields struct {
	Category string  `json:"category"`
	Fields   []Field `json:"fields"`
	Revision uint64  `json:"revision"`
}

// FieldsInCategory returns the owner's fields of a category, with values.
func (s *Service) FieldsInCategory(ctx context.Context, p Principal, category string) (CategoryFields, error) {
	const op = "field.category"
	if !validSegment(category) {
		return CategoryFields{}, fail(op, KindInvalid, "malformed category")
	}
	return ownerRead(s, op, p, func(st *state) (CategoryFields, error) {
		out := CategoryFields{Category: category, Fields: []Field{}, Revision: st.revision}
		for _, r := range st.fields(category + ".*") {
			out.Fields = append(out.Fields, fieldView(r, true))
		}
		return out, nil
	})
}

// ContextBundle is every field, with values, grouped by category.
type ContextBundle struct {
	ContextVersion string             `json:"context_version"`
	Categories     map[string][]Field `json:"categories"`
	Revision       uint64             `json:"revision"`
}

// OwnerContext returns all of the owner's fields grouped by category.
func (s *Service) OwnerContext(ctx context.Context, p Principal) (ContextBundle, error) {
	return ownerRead(s, "field.context", p, func(st *state) (ContextBundle, error) {
		out := ContextBundle{ContextVersion: PCPVersion, Categories: map[string][]Field{}, Revision: st.revision}
		for _, r := range st.fields("*") {
			f := fieldView(r, true)
			out.Categories[f.Category] = append(out.Categories[f.Category], f)
		}
		return out, nil
	})
}

// fieldWrite is the body of PUT /context/fields/{id}.
type fieldWrite struct {
	Value       json.RawMessage `json:"value"`
	Sensitivity string          `json:"sensitivity,omitempty"`
}

// PutField is the owner writing a field: a new version of the field's claim
// when there is one, else a new claim (a confirmed, reported fact about the
// owner, written by the user). The previous value stays as a superseded
// version.
func (s *Service) PutField(ctx context.Context, p Principal, id string, raw []byte) (FieldRead, error) {
	const op = "field.put"
	if err := requireOwner(op, p); err != nil {
		return FieldRead{}, err
	}
	if !validKey(id) {
		return FieldRead{}, fail(op, KindInvalid, "malformed field id")
	}
	var in fieldWrite
	if err := decodeStrict(op, raw, &in); err != nil {
		return FieldRead{}, err
	}
	if len(in.Value) == 0 || string(in.Value) == "null" {
		return FieldRead{}, fail(op, KindInvalid, "value is required")
	}
	if in.Sensitivity != "" {
		if _, ok := tierRank[in.Sensitivity]; !ok {
			return FieldRead{}, fail(op, KindInvalid, "unknown sensitivity tier")
		}
	}
	var out FieldRead
	err := s.write(op, p, func(st *state, b *batch) error {
		r := st.field(id)
		var records []string
		if r != nil {
			records = append(records, r.head().Ref())
			r = st.addVersion(b, r, ownerAuth, func(c *Claim) {
				c.Value = in.Value
				if in.Sensitivity != "" {
					c.Sensitivity = in.Sensitivity
				}
			})
		} else {
			cid, err := identity.NewID("clm_")
			if err != nil {
				return wrap(op, KindInternal, err)
			}
			at := b.now
			tier := in.Sensitivity
			if tier == "" {
				tier = defaultSensitivity(id)
			}
			r = st.newClaim(b, &Claim{
				ID: cid, Version: 1, Key: id, Value: in.Value, Subject: SubjectSelf, Kind: "fact",
				Assertion: AssertionReported, Confirmation: Confirmation{Status: ConfirmationConfirmed, By: "owner", At: &at},
				Producer: Producer{Authenticated: ownerAuth}, Evidence: []Evidence{}, RecordedAt: at,
				Sensitivity: tier, Restrictions: []Restriction{}, WrittenBy: WrittenByUser,
			}, []string{})
		}
		c := r.head()
		b.receipt(Receipt{Actor: "owner", Operation: "field.put", Decision: "allow",
			Records: append(records, c.Ref()), Revision: c.Revision})
		out = FieldRead{Field: fieldView(r, true), Revision: c.Revision}
		return nil
	})
	return out, err
}

// SetSensitivity overrides the tier of the owner's field id (a new version
// with the tier changed).
func (s *Service) SetSensitivity(ctx context.Context, p Principal, id string, raw []byte) (FieldRead, error) {
	const op = "field.sensitivity"
	if err := requireOwner(op, p); err != nil {
		return FieldRead{}, err
	}
	if !validKey(id) {
		return FieldRead{}, fail(op, KindInvalid, "malformed field id")
	}
	var in struct {
		Tier string `json:"tier"`
	}
	if err := decodeStrict(op, raw, &in); err != nil {
		return FieldRead{}, err
	}
	if _, ok := tierRank[in.Tier]; !ok {
		return FieldRead{}, fail(op, KindInvalid, "tier must be public, standard, sensitive or critical")
	}
	var out FieldRead
	err := s.write(op, p, func(st *state, b *batch) error {
		r := st.field(id)
		if r == nil {
			return notFound(op)
		}
		prev := r.head()
		r = st.addVersion(b, r, prev.Producer.Authenticated, func(c *Claim) {
			// The content and its provenance stay; only the tier changes.
			*c = Claim{ID: c.ID, Version: c.Version, Key: prev.Key, Value: prev.Value, Subject: prev.Subject,
				Kind: prev.Kind, Assertion: prev.Assertion, Confirmation: c.Confirmation, Producer: prev.Producer,
				Evidence: prev.Evidence, ValidFrom: prev.ValidFrom, ValidTo: prev.ValidTo, RecordedAt: c.RecordedAt,
				Sensitivity: in.Tier, Restrictions: prev.Restrictions, WrittenBy: prev.WrittenBy, Note: prev.Note}
		})
		c := r.head()
		b.receipt(Receipt{Actor: "owner", Operation: "field.sensitivity", Decision: "allow",
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
	if err := requireOwner(op, p); err != nil {
		return 0, err
	}
	if !validKey(id) {
		return 0, fail(op, KindInvalid, "malformed field id")
	}
	var rev uint64
	err := s.write(op, p, func(st *state, b *batch) error {
		var doomed []*claimRecord
		for r := st.field(id); r != nil; r = st.field(id) {
			doomed = append(doomed, r)
			st.erase(b, r)
		}
		if len(doomed) == 0 {
			return notFound(op)
		}
		rev = b.nextRevision()
		var refs []string
		for _, r := range doomed {
			for _, v := range r.versions {
				refs = append(refs, v.Ref())
			}
		}
		b.receipt(Receipt{Actor: "owner", Operation: "field.delete", Decision: "allow", Records: refs, Revision: rev})
		return nil
	})
	return rev, err
}
