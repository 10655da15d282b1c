package importer

import (
	"errors"
	"strings"
	"testing"
)

func TestCognee(t *testing.T) {
	sum, docs, err := runAll(t, "", "main_dataset_export.json", msFixture(t, "cognee/main_dataset_export.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source != "cognee" || sum.Seen != 4 || sum.Held != 3 || len(sum.Dropped) != 4 {
		t.Fatalf("summary = %+v; want cognee, 4 seen, 3 held, 4 dropped (a credential, 2 node types, 1 edge)", sum)
	}
	for _, d := range sum.Dropped {
		if strings.Contains(d.Location+d.Reason, "swordfish") {
			t.Errorf("a drop quotes the credential: %+v", d)
		}
	}
	msCheck(t, docs, []msWant{
		{value: "Robin: The journal's author, a nurse.", key: "imported.cognee.entity.e0c00000-0000-4000-8000-000000000003",
			assertion: "inferred", at: "2025-05-01T09:30:00Z", evidence: []string{"cognee:memory/e0c00000-0000-4000-8000-000000000003", "cognee:time/1746091800000"}},
		{value: "Biscuit: A greyhound adopted by Robin.", key: "imported.cognee.entity."},
		{value: "Robin adopted Biscuit", key: "imported.cognee.relations.", assertion: "inferred", at: "2025-05-02T10:00:00Z",
			evidence: []string{"cognee:node/e0c00000-0000-4000-8000-000000000003", "cognee:node/e0c00000-0000-4000-8000-000000000004"}},
	})
}

func TestCogneeHostile(t *testing.T) {
	export := string(msFixture(t, "cognee/main_dataset_export.json"))
	tests := []struct{ name, body, want string }{
		{"a wrong type", strings.Replace(export, `"name": "Biscuit"`, `"name": 7`, 1), "malformed"},
		{"deep properties", strings.Replace(export, `"chunk_index": 0`, `"chunk_index": `+strings.Repeat("[", 100)+strings.Repeat("]", 100), 1), "nested more than"},
		{"cut short", export[:len(export)*2/3], "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held := 0
			_, err := Run(t.Context(), cognee{}, inputOf("x.json", []byte(tc.body)), nil, msNow(), 1,
				func(r quarantineRecords) error { held += len(r.Claims); return nil }, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || held != 0 {
				t.Fatalf("err = %v, held %d; want a refusal saying %q, nothing held", err, held, tc.want)
			}
		})
	}
}

// FuzzCognee: no graph export makes the Cognee reader panic.
func FuzzCognee(f *testing.F) {
	f.Add(msFixture(f, "cognee/main_dataset_export.json"))
	f.Add([]byte(`{"edges": [{"source": "a", "target": "a", "relationship_name": "r"}], "nodes": [{"id": "a", "type": "Entity", "name": "n"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		msFuzzRun(t, cognee{}, "x.json", b)
	})
}
