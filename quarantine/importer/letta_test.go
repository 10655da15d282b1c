package importer

import (
	"errors"
	"strings"
	"testing"
)

func TestLetta(t *testing.T) {
	human := func(value, line string) msWant {
		return msWant{value: value, key: "imported.letta.human.", assertion: "inferred", at: "2026-01-02T03:04:05Z", agent: "companion",
			evidence: []string{"letta:agent/agent-0", "letta:block/block-1", "letta:line/" + line}, not: []string{"letta:memory/"}}
	}
	tests := []struct {
		name, file       string
		body             []byte
		seen, held, drop int
		drops            []string // reasons that must be among the drops
		wants            []msWant
	}{
		{"an agent file", "companion.af", msFixture(t, "letta/companion.af"), 6, 5, 3,
			[]string{"persona", "empty", "credential"}, []msWant{
				human("Name: Robin", "1"), human("Works as a nurse in Leeds.", "2"), human("Has two kids.", "2"),
				human("Prefers short answers", "3"),
				{value: "Training for a half marathon in October.", key: "imported.letta.goals.", agent: "companion",
					evidence: []string{"letta:block/block-2", "letta:line/1"}},
			}},
		{"the earlier form, detected without its extension", "helper.json", msFixture(t, "letta/helper-v1.af"), 3, 3, 1,
			[]string{"persona"}, []msWant{
				{value: "First name: Sam", key: "imported.letta.human.", assertion: "inferred", at: "2025-03-01T09:00:00Z", agent: "sam-helper",
					evidence: []string{"letta:line/1", "letta:time/2025-03-01T10:00:00+01:00"}},
				{value: "Likes bouldering on weekends.", at: "2025-03-01T09:00:00Z"},
				{value: "Dr. Lee is their GP.", evidence: []string{"letta:line/2"}},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum, docs, err := runAll(t, "", tc.file, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Source != "letta" || sum.Seen != tc.seen || sum.Held != tc.held || len(sum.Dropped) != tc.drop {
				t.Fatalf("summary = %+v; want letta, %d seen, %d held, %d dropped", sum, tc.seen, tc.held, tc.drop)
			}
			var reasons []string
			for _, d := range sum.Dropped {
				reasons = append(reasons, d.Reason)
				if strings.Contains(d.Location+d.Reason, "hunter2") {
					t.Errorf("a drop quotes the credential: %+v", d)
				}
			}
			for _, r := range tc.drops {
				if !strings.Contains(strings.Join(reasons, "|"), r) {
					t.Errorf("drops %q lack %q", reasons, r)
				}
			}
			msCheck(t, docs, tc.wants)
		})
	}
}

func TestLettaHostile(t *testing.T) {
	af := string(msFixture(t, "letta/companion.af"))
	tests := []struct{ name, body, want string }{
		{"a wrong type", strings.Replace(af, `"label": "goals"`, `"label": ["goals"]`, 1), "malformed"},
		{"deep messages", strings.Replace(af, `"messages": [`, `"messages": [`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`,`, 1), "nested more than"},
		{"deep skipped member", strings.Replace(af, `"groups": []`, `"groups": `+strings.Repeat("[", 100)+strings.Repeat("]", 100), 1), "nested more than"},
		{"cut short", af[:len(af)*3/4], "not JSON"},
		{"not an object", `["agents"]`, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held := 0
			_, err := Run(t.Context(), letta{}, inputOf("x.af", []byte(tc.body)), nil, msNow(), 1,
				func(r quarantineRecords) error { held += len(r.Claims); return nil }, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || held != 0 {
				t.Fatalf("err = %v, held %d; want a refusal saying %q, nothing held", err, held, tc.want)
			}
		})
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Works as a nurse. Has two kids.", []string{"Works as a nurse.", "Has two kids."}},
		{"Dr. Lee is their GP. J. Smith too.", []string{"Dr. Lee is their GP.", "J. Smith too."}},
		{"version 1.2 is fine. ok", []string{"version 1.2 is fine. ok"}},
		{"Why? Because.", []string{"Why?", "Because."}},
	}
	for _, tc := range tests {
		if got := sentences(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("sentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzLetta: no agent file makes the Letta reader panic.
func FuzzLetta(f *testing.F) {
	f.Add(msFixture(f, "letta/companion.af"))
	f.Add(msFixture(f, "letta/helper-v1.af"))
	f.Add([]byte(`{"agents": [{"id": "a", "block_ids": ["b"]}], "blocks": [{"id": "b", "label": "human", "value": "x. Y"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		msFuzzRun(t, letta{}, "x.af", b)
	})
}
