package pcp_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/internal/pcp"
)

func TestFieldHints(t *testing.T) {
	for _, c := range []struct {
		id   string
		want []pcp.Hint
	}{
		{"identity.fullname", []pcp.Hint{{Suggest: "identity.full_name", Reason: "synonym"}}},
		{"identity.birthday", []pcp.Hint{{Suggest: "identity.dob", Reason: "synonym"}}},
		{"identity.date_of_birth", []pcp.Hint{{Suggest: "identity.dob", Reason: "synonym"}}},
		{"identity.full-name", []pcp.Hint{{Suggest: "identity.full_name", Reason: "near_miss"}}},
		{"identity.fulname", []pcp.Hint{{Suggest: "identity.full_name", Reason: "near_miss"}}},
		{"adresses.current", []pcp.Hint{{Suggest: "addresses.current", Reason: "near_miss"}}},
		{"preferences.timezon", []pcp.Hint{{Suggest: "preferences.timezone", Reason: "near_miss"}}},
		// A well-known key, one below it, and keys that resemble none.
		{"identity.full_name", nil},
		{"identity.full_name.first", nil},
		{"addresses.current.city", nil},
		{"identity.job", nil}, // dob is too short to guess at
		{"identity.fn", nil},  // too far
		{"identity", nil},     // no category
		{"learning.spanish", nil},
		{"identity.full_name_of_partner", nil},
	} {
		if got := pcp.FieldHints(c.id); !cmp.Equal(got, c.want) {
			t.Errorf("FieldHints(%q) = %v; want %v", c.id, got, c.want)
		}
	}
}

func TestAuditAction(t *testing.T) {
	for _, tc := range []struct{ operation, decision, want string }{
		{"context.read", "allow", "READ"},
		{"vault.resolve", "allow", "READ"},
		{"context.read", "deny", "DENY"},
		{"request.deny", "allow", "DENY"},
		{"request.create", "allow", "REQUEST"},
		{"token.exchange", "allow", "GRANT"},
		{"grant.narrow", "allow", "REVOKE"},
		{"field.put", "allow", "WRITE"},
		{"vault.unlock", "allow", "ADMIN"},
	} {
		if got := pcp.AuditAction(tc.operation, tc.decision); got != tc.want {
			t.Errorf("AuditAction(%s, %s) = %s; want %s", tc.operation, tc.decision, got, tc.want)
		}
	}
}

func TestAuditDuration(t *testing.T) {
	for seconds, want := range map[int64]string{1800: "30min", 3600: "1h", 8760 * 3600: "8760h", 5400: "1h30m0s", 90: "1m30s"} {
		if got := pcp.AuditDuration(seconds); got != want {
			t.Errorf("AuditDuration(%d) = %q; want %q", seconds, got, want)
		}
	}
}

// TestContextBundleEncoding: a bundle encoded from its fields' cached
// encodings is what encoding/json writes of it, cached or not.
func TestContextBundleEncoding(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	fs := []pcp.Field{
		{ID: "contact.email", Category: "contact", FieldName: "email", Value: json.RawMessage(`"a@b.co"`), Sensitivity: "standard", UpdatedAt: at, Version: 1, WrittenBy: "owner", ClaimID: "clm_A"},
		{ID: "contact.phone", Category: "contact", FieldName: "phone", Value: json.RawMessage(`"+1 555"`), Sensitivity: "standard", UpdatedAt: at, Version: 2, WrittenBy: "app", ClaimID: "clm_B", Status: "disputed"},
		{ID: "identity.full_name", Category: "identity", FieldName: "full_name", Value: json.RawMessage(`"Ada"`), Sensitivity: "standard", UpdatedAt: at, Version: 1, WrittenBy: "owner", ClaimID: "clm_C"},
	}
	type plain pcp.ContextBundle
	for _, cached := range []bool{false, true} {
		in := slices.Clone(fs)
		if cached {
			for i := range in {
				if err := in[i].CacheJSON(); err != nil {
					t.Fatal(err)
				}
			}
		}
		b := pcp.ContextBundle{ContextVersion: pcp.Version, Categories: pcp.ByCategory(in), Revision: 7, Warnings: []string{"w"}}
		if got := b.Categories["contact"]; len(got) != 2 || len(b.Categories) != 2 {
			t.Fatalf("ByCategory = %v", b.Categories)
		}
		got, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(plain(b))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("cached %v: MarshalJSON = %s; want %s", cached, got, want)
		}
	}
}

func TestEncodeContext(t *testing.T) {
	claims := []json.RawMessage{json.RawMessage(`{"id":"clm_A"}`), json.RawMessage(`{"id":"clm_B"}`)}
	if got, want := string(pcp.EncodeContext(3, claims, nil)), `{"revision":3,"claims":[{"id":"clm_A"},{"id":"clm_B"}]}`; got != want {
		t.Errorf("EncodeContext without persona = %s; want %s", got, want)
	}
	got := pcp.EncodeContext(4, nil, json.RawMessage(`{"id":"work"}`))
	if want := `{"revision":4,"claims":[],"persona":{"id":"work"}}`; string(got) != want {
		t.Errorf("EncodeContext with persona = %s; want %s", got, want)
	}
	if !json.Valid(got) {
		t.Errorf("EncodeContext wrote invalid JSON: %s", got)
	}
}
