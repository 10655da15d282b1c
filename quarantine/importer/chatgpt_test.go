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

// heldCase is what one held memory must be: found by its value.
type heldCase struct {
	value     string
	assertion string
	key       string // the key's prefix
	at        string // recorded_at, "" for the import's time
	refs      []string
	candidate bool
}

// checkHeld checks each case against the claim documents held, and that
// nothing held says any of absent.
func checkHeld(t *testing.T, docs []map[string]any, cases []heldCase, absent []string) {
	t.Helper()
	byValue := map[string]map[string]any{}
	for _, d := range docs {
		v, _ := d["value"].(string)
		byValue[v] = d
		for _, a := range absent {
			if strings.Contains(v, a) {
				t.Errorf("held %q, which should have been left out", v)
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			d, ok := byValue[tc.value]
			if !ok {
				t.Fatalf("not held; held: %v", keysOf(byValue))
			}
			if got := d["assertion"]; got != tc.assertion {
				t.Errorf("assertion %v, want %s", got, tc.assertion)
			}
			if got, _ := d["key"].(string); !strings.HasPrefix(got, tc.key) {
				t.Errorf("key %s, want prefix %s", got, tc.key)
			}
			at := tc.at
			if at == "" {
				at = "2026-01-02T03:04:05Z"
			}
			if got := d["recorded_at"]; got != at {
				t.Errorf("recorded_at %v, want %s", got, at)
			}
			ev, _ := json.Marshal(d["evidence"])
			for _, r := range tc.refs {
				if !strings.Contains(string(ev), r) {
					t.Errorf("evidence %s lacks %s", ev, r)
				}
			}
			if got := strings.Contains(string(ev), "split from a prose dump"); got != tc.candidate {
				t.Errorf("candidate %v, want %v (evidence %s)", got, tc.candidate, ev)
			}
			if d["status"] != "quarantined" || d["confirmation"].(map[string]any)["status"] != "unconfirmed" {
				t.Errorf("not a quarantined, unconfirmed claim: %v", d)
			}
		})
	}
}

func keysOf(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestChatGPT(t *testing.T) {
	conv, err := os.ReadFile("testdata/chatgpt/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	user, err := os.ReadFile("testdata/chatgpt/user.json")
	if err != nil {
		t.Fatal(err)
	}
	exports := map[string][]byte{
		"conversations.json": conv,
		"export.zip":         zipOf(t, map[string]string{"conversations.json": string(conv), "user.json": string(user), "chat.html": "<html></html>"}, nil),
	}
	cases := []heldCase{
		{value: "I am a night-shift nurse in Lisbon.", assertion: "reported", key: "imported.chatgpt.custom_instructions.",
			at: "2025-03-04T09:58:20.25Z", refs: []string{"chatgpt:conversation/conv-a-0001", "chatgpt:message/a-ci"}},
		{value: "Answer briefly, in British English.", assertion: "reported", key: "imported.chatgpt.custom_instructions.", at: "2025-03-04T09:58:20.25Z"},
		{value: "I am training for the Lisbon half marathon in October.", assertion: "reported", key: "imported.chatgpt.a-user-1",
			at: "2025-03-04T10:00:00.5Z", refs: []string{"chatgpt:conversation/conv-a-0001", "chatgpt:message/a-user-1", "chatgpt:time/1741082400.5"}},
		{value: "I can run three days a week, never on Mondays.", assertion: "reported", key: "imported.chatgpt.a-user-2", at: "2025-03-04T10:03:20Z"},
		{value: "I am vegetarian, please remember that.", assertion: "reported", key: "imported.chatgpt.b-user-1", at: "2025-03-05T10:01:00Z",
			refs: []string{"chatgpt:conversation/conv-b-0002", "chatgpt:message/b-user-1"}},
		{value: "What do you remember about me?", assertion: "reported", key: "imported.chatgpt.b-user-2", at: "2025-03-05T10:01:40Z"},
		{value: "User is vegetarian.", assertion: "inferred", key: "imported.chatgpt.memory.", at: "2025-03-05T10:01:01Z",
			refs: []string{"chatgpt:message/b-asst-1"}},
		{value: "Is training for a half marathon.", assertion: "inferred", key: "imported.chatgpt.memory.b-ctx-1", at: "2025-02-01T00:00:00Z",
			refs: []string{"chatgpt:message/b-ctx"}, candidate: true},
		{value: "Prefers oat milk in coffee.", assertion: "inferred", key: "imported.chatgpt.memory.b-ctx-2", at: "2025-02-03T00:00:00Z", candidate: true},
		{value: "You live in Lisbon.", assertion: "inferred", key: "imported.chatgpt.memory.b-asst-3-1", at: "2025-03-05T10:01:50Z",
			refs: []string{"chatgpt:message/b-asst-3"}, candidate: true},
		{value: "You work night shifts as a nurse.", assertion: "inferred", key: "imported.chatgpt.memory.b-asst-3-2", at: "2025-03-05T10:01:50Z", candidate: true},
		{value: "**Diet:** you are vegetarian.", assertion: "inferred", key: "imported.chatgpt.memory.b-asst-3-3", at: "2025-03-05T10:01:50Z", candidate: true},
	}
	absent := []string{"five days", "Five days", "Abandoned", "Great goal", "hunter2", "Would you like", "Here's what", "Model set context", "User profile"}
	for name, body := range exports {
		t.Run(name, func(t *testing.T) {
			sum, docs, err := runAll(t, "", name, body, Map{"custom_instructions": {Key: "imported.chatgpt.custom_instructions"}})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Source != "chatgpt" || sum.Seen != 13 || sum.Held != 12 || len(sum.Dropped) != 2 {
				t.Fatalf("summary = %+v; want chatgpt, 13 seen, 12 held, 2 dropped", sum)
			}
			if !strings.Contains(sum.Dropped[0].Location, "a-user-3") || !strings.Contains(sum.Dropped[1].Reason, "credential") {
				t.Errorf("dropped %+v; want the attachment-only message and the credential", sum.Dropped)
			}
			for _, d := range sum.Dropped {
				if strings.Contains(d.Location+d.Reason, "hunter2") {
					t.Errorf("a drop quotes the credential: %+v", d)
				}
			}
			checkHeld(t, docs, cases, absent)
			if len(docs) != len(cases) {
				t.Errorf("held %d, want %d", len(docs), len(cases))
			}
		})
	}
}

func TestChatGPTDetect(t *testing.T) {
	conv, _ := os.ReadFile("testdata/chatgpt/conversations.json")
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"conversations.json", conv, "chatgpt"},
		{"export.zip", zipOf(t, map[string]string{"conversations.json": "[]", "user.json": "{}"}, nil), "chatgpt"},
		{"claude.zip", zipOf(t, map[string]string{"conversations.json": "[]", "users.json": "[]"}, nil), "claude"},
		{"mem0.json", []byte(`[{"id": "x", "memory": "m", "user_id": "u", "hash": "h"}]`), "mem0"},
	}
	for _, tc := range tests {
		in := inputOf(tc.name, tc.body)
		s, err := Lookup("", in)
		if err != nil || s.Name() != tc.want {
			t.Errorf("%s: detected %v, %v; want %s", tc.name, s, err, tc.want)
		}
	}
	if (chatgpt{}).Detect("x.zip", zipOf(t, map[string]string{"CLAUDE" + mdExt: "# x"}, nil)) {
		t.Error("chatgpt claims a zip of CLAUDE" + mdExt)
	}
}

func TestChatGPTNoCurrentNode(t *testing.T) {
	// Without current_node the conversation is the path to the latest
	// message; a cycle in parents ends the walk.
	body := `[{"id": "c", "mapping": {
	  "u1": {"parent": "u2", "message": {"id": "u1", "author": {"role": "user"}, "create_time": 10, "content": {"content_type": "text", "parts": ["older branch"]}}},
	  "u2": {"parent": "u1", "message": {"id": "u2", "author": {"role": "user"}, "create_time": 20, "content": {"content_type": "text", "parts": ["newer"]}}}}}]`
	sum, docs, err := runAll(t, "chatgpt", "c.json", []byte(body), nil)
	if err != nil || sum.Held != 2 || len(docs) != 2 || docs[0]["value"] != "older branch" {
		t.Fatalf("sum %+v, docs %v, err %v", sum, docs, err)
	}
}

// FuzzChatGPT: no export makes the chatgpt reader panic, and every claim
// it yields is one version of valid JSON.
func FuzzChatGPT(f *testing.F) {
	raw, err := os.ReadFile("testdata/chatgpt/conversations.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`[{"mapping": {"a": {"parent": "a", "message": null}}, "current_node": "a"}]`))
	f.Add([]byte(`[{"mapping": {"a": {"message": {"author": {"role": "assistant"}, "content": {"parts": ["- x\n- y"]}}}}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := inputOf("x.json", b)
		_, _ = Run(context.Background(), chatgpt{}, in, nil, time.Now(), 3, func(r quarantine.Records) error {
			for _, c := range r.Claims {
				if len(c.Versions) != 1 || !json.Valid(c.Versions[0]) {
					t.Fatalf("claim %+v", c)
				}
			}
			return nil
		}, nil)
	})
}

func TestChatGPTProfileWithoutMetadata(t *testing.T) {
	// Custom instructions without user_context_message_data: the text
	// inside the preamble's fence is the person's.
	body := "[{\"id\": \"c\", \"current_node\": \"p\", \"mapping\": {\"p\": {\"message\": {\"id\": \"p\", \"author\": {\"role\": \"user\"}, " +
		"\"content\": {\"content_type\": \"user_editable_context\", \"user_profile\": \"The user provided the following information about themselves.\\nUser profile:\\n```Keeps bees.```\"}}}}}]"
	_, docs, err := runAll(t, "chatgpt", "c.json", []byte(body), nil)
	if err != nil || len(docs) != 1 || docs[0]["value"] != "Keeps bees." || docs[0]["assertion"] != "reported" {
		t.Fatalf("docs %v, err %v", docs, err)
	}
}
