package importer

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenMemory(t *testing.T) {
	backup := msFixture(t, "openmemory/memories.json")
	lines := msFixture(t, "openmemory/memories.jsonl")
	const user = "openmemory:user/0b7a4c1e-0000-4000-8000-000000000001"
	full := []msWant{
		{value: "Prefers aisle seats on night trains", key: "imported.openmemory.travel.11111111-1111-4111-8111-111111111111",
			assertion: "inferred", at: "2025-05-01T09:30:00Z", agent: "claude",
			evidence: []string{"openmemory:memory/11111111", "openmemory:app/claude", user, "openmemory:time/2025-05-01T11:30:00+02:00"},
			not:      []string{"openmemory:state/"}},
		{value: "Writes backend services in Go", key: "imported.openmemory.work.22222222-2222-4222-8222-222222222222",
			assertion: "inferred", at: "2025-05-02T10:00:00Z", agent: "cursor",
			evidence: []string{"openmemory:state/paused", "openmemory:status/deleted->active@2025-05-02T10:00:00Z",
				"openmemory:status/active->paused@2025-05-03T10:00:00Z", "openmemory:app/cursor"}},
		{value: "Was planning a trip to Lisbon in June", key: "imported.openmemory.travel.33333333-3333-4333-8333-333333333333",
			evidence: []string{"openmemory:state/archived", "openmemory:archived/2025-06-30T10:00:00Z", "openmemory:status/active->archived@2025-06-30T10:00:00Z"}},
		{value: "Has a cat called Pixel", key: "imported.openmemory.44444444-4444-4444-8444-444444444444",
			evidence: []string{"openmemory:state/deleted", "openmemory:deleted/2025-05-06T10:00:00Z", "openmemory:status/active->deleted@2025-05-06T10:00:00Z"}},
	}
	logical := []msWant{
		{value: "Prefers aisle seats on night trains", key: "imported.openmemory.travel.11111111-1111-4111-8111-111111111111",
			assertion: "inferred", at: "2025-05-01T09:30:00Z", agent: "claude", evidence: []string{"openmemory:app/claude"}},
		{value: "Writes backend services in Go", agent: "cursor", evidence: []string{"openmemory:state/paused"}},
		{value: "Was planning a trip to Lisbon in June", key: "imported.openmemory.travel.33333333-3333-4333-8333-333333333333",
			evidence: []string{"openmemory:state/archived"}},
	}
	tests := []struct {
		name, file       string
		body             []byte
		seen, held, drop int
		wants            []msWant
	}{
		{"memories.json", "memories.json", backup, 5, 4, 1, full},
		{"the export zip", "memories_export_robin.zip",
			zipOf(t, map[string]string{"memories.json": string(backup), "memories.jsonl.gz": string(msGzip(t, lines))}, nil), 5, 4, 1, full},
		{"a zip of memories.jsonl.gz", "export.zip", zipOf(t, map[string]string{"memories.jsonl.gz": string(msGzip(t, lines))}, nil), 3, 3, 0, logical},
		{"memories.jsonl", "memories.jsonl", lines, 3, 3, 0, logical},
		{"memories.jsonl.gz", "memories.jsonl.gz", msGzip(t, lines), 3, 3, 0, logical},
		{"the memory list", "list.json", msFixture(t, "openmemory/list.json"), 2, 2, 0, []msWant{
			{value: "Prefers aisle seats on night trains", at: "2025-05-01T09:30:00Z", agent: "claude",
				evidence: []string{"openmemory:time/1746091800", "openmemory:app/claude"}},
			{value: "Writes backend services in Go", key: "imported.openmemory.work.22222222-2222-4222-8222-222222222222",
				evidence: []string{"openmemory:state/paused"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum, docs, err := runAll(t, "", tc.file, tc.body, nil) // the format is detected
			if err != nil {
				t.Fatal(err)
			}
			if sum.Source != "openmemory" || sum.Seen != tc.seen || sum.Held != tc.held || len(sum.Dropped) != tc.drop {
				t.Fatalf("summary = %+v; want openmemory, %d seen, %d held, %d dropped", sum, tc.seen, tc.held, tc.drop)
			}
			for _, d := range sum.Dropped {
				if strings.Contains(d.Location+d.Reason, "glpat") {
					t.Errorf("a drop quotes the credential: %+v", d)
				}
			}
			msCheck(t, docs, tc.wants)
		})
	}
}

func TestOpenMemoryHostile(t *testing.T) {
	backup := string(msFixture(t, "openmemory/memories.json"))
	bomb := msGzip(t, []byte(strings.Repeat(`{"id": "x", "content": "y", "state": "active", "app": "a", "categories": []}`+"\n", 1<<14)))
	tests := []struct {
		name, file string
		body       []byte
		maxEntry   int64
		want       string
	}{
		{"a wrong type", "memories.json", []byte(strings.Replace(backup, `"content": "Has a cat called Pixel"`, `"content": 7`, 1)), 0, "malformed"},
		{"deep history", "memories.json", []byte(strings.Replace(backup, `"status_history": [`,
			`"status_history": [{"memory_id": "x", "old_state": `+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`},`, 1)), 0, "nested more than"},
		{"deep skipped member", "memories.json", []byte(strings.Replace(backup, `"access_controls": []`,
			`"access_controls": `+strings.Repeat("[", 200)+strings.Repeat("]", 200), 1)), 0, "nested more than"},
		{"cut short", "memories.json", []byte(backup[:len(backup)/2]), 0, "not JSON"},
		{"not a line of JSON", "memories.jsonl", []byte("{\"id\": \"a\", \"content\": \"b\"}\n{oops\n"), 0, "line 2 is not JSON"},
		{"a gzip bomb", "memories.jsonl.gz", bomb, 1 << 16, "holds more than"},
		{"zip slip", "memories_export.zip", zipOf(t, map[string]string{"../memories.json": backup}, nil), 0, "outside the archive"},
		{"a zip without memories", "memories_export.zip", zipOf(t, map[string]string{"memories.json.bak": "{}"}, nil), 0, "no memories.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := inputOf(tc.file, tc.body)
			if tc.maxEntry > 0 {
				in.Limits.MaxEntryBytes = tc.maxEntry
			}
			held := 0
			_, err := Run(t.Context(), openmemory{}, in, nil, msNow(), 1, func(r quarantineRecords) error { held += len(r.Claims); return nil }, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || held != 0 {
				t.Fatalf("err = %v, held %d; want a refusal saying %q, nothing held", err, held, tc.want)
			}
		})
	}
}

func TestOpenMemoryDetect(t *testing.T) {
	backup := msFixture(t, "openmemory/memories.json")
	tests := []struct {
		name, file string
		body       []byte
		want       string
	}{
		{"memories.json", "memories.json", backup, "openmemory"},
		{"the list", "page.json", msFixture(t, "openmemory/list.json"), "openmemory"},
		{"mem0 results", "results.json", msFixture(t, "mem0/results.json"), "mem0"},
		{"a backup mentioning \"memory\"", "memories.json", []byte(strings.Replace(string(backup), "Has a cat called Pixel", `Said \"memory\" twice`, 1)), "openmemory"},
		{"a zip of conversations", "x.zip", zipOf(t, map[string]string{"conversations.json": "[]"}, nil), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Lookup("", inputOf(tc.file, tc.body))
			got := ""
			if err == nil {
				got = s.Name()
			}
			if got != tc.want {
				t.Fatalf("detected %q (%v); want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzOpenMemory: no export makes the OpenMemory reader panic.
func FuzzOpenMemory(f *testing.F) {
	f.Add("memories.json", msFixture(f, "openmemory/memories.json"))
	f.Add("memories.jsonl", msFixture(f, "openmemory/memories.jsonl"))
	f.Add("list.json", msFixture(f, "openmemory/list.json"))
	f.Add("memories.jsonl.gz", msGzip(f, msFixture(f, "openmemory/memories.jsonl")))
	f.Add("memories.json", []byte(`{"memories": null, "apps": [{"id": 1}]}`))
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		msFuzzRun(t, openmemory{}, name, b)
	})
}
