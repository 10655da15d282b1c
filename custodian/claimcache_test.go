package custodian_test

import (
	"encoding/json"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// TestMetasFromBeforeTheirIndexFields: a store whose claim metas predate
// the index fields (key, subject, tier, kind, head revision) unlocks, is
// indexed from the claims' heads, serves the same fields, and has its metas
// upgraded by the unlock so that the next unlock reads metas alone.
func TestMetasFromBeforeTheirIndexFields(t *testing.T) {
	ctx := t.Context()
	ts := newTestService(t)
	ts.mustPersona("work")
	ts.mustClaim("work.employer", "Analytical Engines Ltd", "work")
	w := ts.mustClaim("work.title", "engineer", "work")
	if _, err := ts.Correct(ctx, ts.owner, w.Claim.ID, mustJSON(t, map[string]any{"value": "lead engineer"})); err != nil {
		t.Fatal(err)
	}
	gone := ts.mustClaim("work.desk", "4F")
	if _, err := ts.DeleteClaim(ctx, ts.owner, gone.Claim.ID); err != nil {
		t.Fatal(err)
	}
	before, err := ts.FieldsInCategory(ctx, ts.owner, "work", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}

	indexFields := []string{"key", "subject", "tier", "kind", "head_revision"}
	strip := func(tx custodian.Tx) error {
		metas := map[string][]byte{}
		if err := tx.ForEach("claim_meta", func(k string, v []byte) error {
			metas[k] = v
			return nil
		}); err != nil {
			return err
		}
		for k, v := range metas {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			for _, f := range indexFields {
				delete(m, f)
			}
			raw, _ := json.Marshal(m)
			if err := tx.Put("claim_meta", k, raw); err != nil {
				return err
			}
		}
		return nil
	}
	if err := ts.store.Update(strip); err != nil {
		t.Fatal(err)
	}
	ts.unlock()

	after, err := ts.FieldsInCategory(ctx, ts.owner, "work", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, after.Fields), mustJSON(t, before.Fields); string(got) != string(want) {
		t.Errorf("fields after the upgrade = %s; want %s", got, want)
	}
	vs, err := ts.Versions(ctx, ts.owner, w.Claim.ID)
	if err != nil || len(vs.Claims) != 2 || string(vs.Claims[1].Value) != `"lead engineer"` {
		t.Errorf("Versions = %+v, %v; want both versions", vs, err)
	}
	// The unlock wrote the index fields back.
	if err := ts.store.View(func(tx custodian.Tx) error {
		return tx.ForEach("claim_meta", func(k string, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			if m["head_revision"] == nil {
				t.Errorf("meta %s after the unlock = %s; want its index fields", k, v)
			}
			if m["status"] == "active" && (m["key"] == nil || m["tier"] == nil) {
				t.Errorf("active meta %s after the unlock = %s; want key and tier", k, v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}
