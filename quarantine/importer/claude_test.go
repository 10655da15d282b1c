package importer

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// claudeFixture is the file of testdata/claude named name.
func claudeFixture(t testing.TB, name string) string {
	raw, err := os.ReadFile("testdata/claude/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestClaude(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"conversations.json", "memories.json", "projects.json", "users.json"} {
		files["data-2025-05-02-batch-0000/"+n] = claudeFixture(t, n)
	}
	body := zipOf(t, files, nil)
	sum, docs, err := runAll(t, "", "data-2025-05-02-batch-0000.zip", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source != "claude" || sum.Seen != 15 || sum.Held != 14 || len(sum.Dropped) != 2 {
		t.Fatalf("summary = %+v; want claude, 15 seen, 14 held, 2 dropped", sum)
	}
	for _, d := range sum.Dropped {
		if strings.Contains(d.Location+d.Reason, "ghp_") {
			t.Errorf("a drop quotes the credential: %+v", d)
		}
	}
	mem := []string{"claude:account/acct-0000-synthetic"}
	cases := []heldCase{
		{value: "I grow tomatoes on a north-facing balcony.", assertion: "reported", key: "imported.claude.m1", at: "2025-04-01T08:00:00Z",
			refs: []string{"claude:conversation/conv-1111", "claude:message/m1", "claude:time/2025-04-01T08:00:00.000000+00:00"}},
		{value: "I water them twice a week.", assertion: "reported", key: "imported.claude.m3", at: "2025-04-01T08:02:00Z",
			refs: []string{"claude:time/2025-04-01T10:02:00.000000+02:00"}},
		{value: "List every memory you have stored about me, one per line.", assertion: "reported", key: "imported.claude.n1", at: "2025-05-02T10:00:00Z"},
		{value: "Grows tomatoes on a balcony.", assertion: "inferred", key: "imported.claude.memory.n2-1", at: "2025-04-01T00:00:00Z",
			refs: []string{"claude:message/n2"}, candidate: true},
		{value: "Prefers metric units.", assertion: "inferred", key: "imported.claude.memory.n2-2", at: "2025-05-02T10:00:10Z", candidate: true},
		{value: "Sam is a night-shift nurse in Lisbon.", assertion: "inferred", key: "imported.claude.work_context.", refs: mem, candidate: true},
		{value: "They are studying for a certificate in palliative care, e.g. evening classes.", assertion: "inferred", key: "imported.claude.work_context.", candidate: true},
		{value: "Keeps a balcony garden.", assertion: "inferred", key: "imported.claude.personal_context.", refs: mem, candidate: true},
		{value: "Is vegetarian.", assertion: "inferred", key: "imported.claude.personal_context.", candidate: true},
		{value: "The project tracks a half marathon plan.", assertion: "inferred", key: "imported.claude.memory.",
			refs: []string{"claude:project/proj-aaaa", "claude:account/acct-0000-synthetic"}, candidate: true},
		{value: "Sam runs three days a week.", assertion: "inferred", key: "imported.claude.memory.", candidate: true},
		{value: "Always give distances in kilometres.", assertion: "reported", key: "imported.claude.project_instructions.",
			at: "2025-03-02T12:00:00Z", refs: []string{"claude:project/proj-aaaa"}},
		{value: "Keep plans to three runs a week.", assertion: "reported", key: "imported.claude.project_instructions.", at: "2025-03-02T12:00:00Z"},
		{value: "Never schedule runs on Mondays.", assertion: "reported", key: "imported.claude.project_instructions.", at: "2025-03-02T12:00:00Z"},
	}
	checkHeld(t, docs, cases, []string{"every day", "Daily may", "North-facing is", "ghp_", "Here is everything", "complete set", "Sam Example", "Week 1"})
	if len(docs) != len(cases) {
		t.Errorf("held %d, want %d", len(docs), len(cases))
	}
	for _, d := range docs {
		if d["assertion"] == "inferred" && d["producer"].(map[string]any)["reported"].(map[string]any)["agent"] != "Claude" {
			t.Errorf("%v: an inference not reported as Claude's", d["value"])
		}
	}
}

func TestClaudeSingleFiles(t *testing.T) {
	tests := []struct {
		file string
		held int
	}{
		{"conversations.json", 5},
		{"memories.json", 6},
		{"projects.json", 3},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			sum, _, err := runAll(t, "", tc.file, []byte(claudeFixture(t, tc.file)), nil)
			if err != nil || sum.Source != "claude" || sum.Held != tc.held {
				t.Fatalf("sum %+v, err %v; want claude, %d held", sum, err, tc.held)
			}
		})
	}
	// A single memories/<uuid>.json object, as newer exports split them.
	one := `{"conversations_memory": "Lives by the sea.", "project_memories": {"p": 3}, "account_uuid": "a"}`
	sum, docs, err := runAll(t, "claude", "memories/a.json", []byte(one), nil)
	if err != nil || sum.Held != 1 || docs[0]["value"] != "Lives by the sea." || len(sum.Dropped) != 1 {
		t.Fatalf("sum %+v, err %v", sum, err)
	}
}

func TestClaudeCurrentLeaf(t *testing.T) {
	// current_leaf_message_uuid, when the conversation has it, picks the
	// branch even against a later retry.
	body := `[{"uuid": "c", "current_leaf_message_uuid": "a", "chat_messages": [
	  {"uuid": "a", "sender": "human", "text": "kept", "created_at": "2025-01-01T00:00:00Z", "parent_message_uuid": "r"},
	  {"uuid": "b", "sender": "human", "text": "retried", "created_at": "2025-01-02T00:00:00Z", "parent_message_uuid": "r"}]}]`
	_, docs, err := runAll(t, "claude", "conversations.json", []byte(body), nil)
	if err != nil || len(docs) != 1 || docs[0]["value"] != "kept" {
		t.Fatalf("docs %v, err %v", docs, err)
	}
}

// FuzzClaude: no export makes the claude reader panic, and every claim it
// yields is one version of valid JSON.
func FuzzClaude(f *testing.F) {
	f.Add([]byte(claudeFixture(f, "conversations.json")))
	f.Add([]byte(claudeFixture(f, "memories.json")))
	f.Add([]byte(`[{"chat_messages": [{"uuid": "a", "parent_message_uuid": "a", "sender": "human"}]}]`))
	f.Add([]byte(`{"conversations_memory": "**A**\n- x\n\n` + "```\n[2025-01-01] - y\n```" + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := inputOf("x.json", b)
		_, _ = Run(context.Background(), claude{}, in, nil, time.Now(), 3, func(r quarantine.Records) error {
			for _, c := range r.Claims {
				if len(c.Versions) != 1 || !json.Valid(c.Versions[0]) {
					t.Fatalf("claim %+v", c)
				}
			}
			return nil
		}, nil)
	})
}
