package importer

import (
	"errors"
	"strings"
	"testing"
)

func TestPAM(t *testing.T) {
	store := msFixture(t, "pam/memory-store.json")
	sum, docs, err := runAll(t, "", "memory-store.json", store, Map{"home": {Key: "home.city"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source != "pam" || sum.Seen != 4 || sum.Held != 3 || len(sum.Dropped) != 1 || strings.Contains(sum.Dropped[0].Reason, "AKIA") {
		t.Fatalf("summary = %+v; want pam, 4 seen, 3 held, the credential dropped", sum)
	}
	msCheck(t, docs, []msWant{
		{value: "Prefers replies in British English", key: "imported.pam.preference.mem-pref-1", assertion: "reported",
			at: "2025-03-01T09:00:00Z", agent: "claude", evidence: []string{"pam:memory/mem-pref-1", "pam:platform/claude",
				"pam:conversation/conv-7", "pam:message/msg-3", "pam:extraction/explicit_user_input", "pam:tag/style",
				"pam:time/2025-03-01T10:00:00+01:00"}, not: []string{"pam:state/"}},
		{value: "Lives in Bristol", key: "imported.pam.context.mem-ctx-2", assertion: "inferred", at: "2024-11-05T08:00:00Z", agent: "chatgpt",
			evidence: []string{"pam:state/superseded", "pam:superseded_by/mem-ctx-3", "pam:valid_until/2025-06-01T00:00:00Z"}},
		{value: "Lives in Cardiff", key: "home.city.mem-ctx-3", assertion: "inferred"},
	})
	if d := msDoc(docs, "Prefers replies in British English"); d["kind"] != "preference" {
		t.Errorf("kind = %v, want preference", d["kind"])
	}
}

func TestPAMHostile(t *testing.T) {
	store := string(msFixture(t, "pam/memory-store.json"))
	tests := []struct{ name, body, want string }{
		{"another schema", strings.Replace(store, `"schema": "portable-ai-memory"`, `"schema": "something-else"`, 1), "not a PAM memory store"},
		{"a wrong type", strings.Replace(store, `"content": "Lives in Cardiff"`, `"content": ["Cardiff"]`, 1), "malformed"},
		{"deep relations", strings.Replace(store, `"relations": [`, `"relations": [`+strings.Repeat("{\"a\":", 100)+"1"+strings.Repeat("}", 100)+",", 1), "nested more than"},
		{"cut short", store[:len(store)/2], "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held := 0
			_, err := Run(t.Context(), pam{}, inputOf("memory-store.json", []byte(tc.body)), nil, msNow(), 1,
				func(r quarantineRecords) error { held += len(r.Claims); return nil }, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || held != 0 {
				t.Fatalf("err = %v, held %d; want a refusal saying %q, nothing held", err, held, tc.want)
			}
		})
	}
}

// FuzzPAM: no memory store makes the PAM reader panic.
func FuzzPAM(f *testing.F) {
	f.Add(msFixture(f, "pam/memory-store.json"))
	f.Add([]byte(`{"schema": "portable-ai-memory", "memories": [{"id": "a", "content": "b", "temporal": {"created_at": 1e99}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		msFuzzRun(t, pam{}, "memory-store.json", b)
	})
}
