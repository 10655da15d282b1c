package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// mem0 reads a mem0 export: the answer of get_all (the platform's
// MemoryClient or the open-source Memory) saved as JSON — either
// {"results": [memory, …]} (v1.1 and later), {"memories": […]}, or a bare
// array of memories. A memory is
//
//	{"id", "memory", "user_id", "agent_id", "app_id", "run_id", "hash",
//	 "categories": [...], "metadata": {...}, "created_at", "updated_at",
//	 "attributed_to"?, "role"?, "state"?}
//
// A memory is reported (stated by the person) only when mem0 attributes it
// to the user: attributed_to (or metadata.attributed_to, metadata.role)
// "user"; otherwise it is mem0's inference. Its first category picks its
// key; state (paused, archived, deleted) is kept.
type mem0 struct{}

func init() { Register(mem0{}) }

func (mem0) Name() string { return "mem0" }

func (mem0) Detect(name string, head []byte) bool {
	if IsZip(head) {
		return false
	}
	h := bytes.TrimSpace(head)
	if len(h) == 0 || (h[0] != '[' && h[0] != '{') {
		return false
	}
	return bytes.Contains(h, []byte(`"memory"`)) && (bytes.Contains(h, []byte(`"hash"`)) || bytes.Contains(h, []byte(`"user_id"`))) &&
		!bytes.Contains(h, []byte(`"app_name"`)) && // an OpenMemory export names its apps
		!bytes.Contains(h, []byte(`"category_ids"`)) // and links its categories
}

type mem0Memory struct {
	ID           string         `json:"id"`
	Memory       string         `json:"memory"`
	Text         string         `json:"text"`
	UserID       string         `json:"user_id"`
	AgentID      string         `json:"agent_id"`
	AppID        string         `json:"app_id"`
	RunID        string         `json:"run_id"`
	Categories   []string       `json:"categories"`
	Metadata     map[string]any `json:"metadata"`
	CreatedAt    any            `json:"created_at"`
	UpdatedAt    any            `json:"updated_at"`
	AttributedTo string         `json:"attributed_to"`
	Role         string         `json:"role"`
	State        string         `json:"state"`
}

func (s mem0) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	head := make([]byte, min(in.Size, 64<<10))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	member := ""
	if h := bytes.TrimSpace(head); len(h) > 0 && h[0] == '{' {
		member = "results"
		if !bytes.Contains(h, []byte(`"results"`)) && bytes.Contains(h, []byte(`"memories"`)) {
			member = "memories"
		}
	}
	return Stream(in.Reader(), member, in.Limits, func(i int, raw json.RawMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var m mem0Memory
		if err := Strict(raw, &m); err != nil {
			return err
		}
		return emit(m.memory())
	})
}

// memory is m as a Memory.
func (m mem0Memory) memory() Memory {
	text := m.Memory
	if text == "" {
		text = m.Text
	}
	out := Memory{SourceID: m.ID, Text: text, Agent: m.AgentID, State: strings.ToLower(m.State)}
	if out.State == "active" {
		out.State = ""
	}
	if len(m.Categories) > 0 {
		out.Category = m.Categories[0]
	}
	who := strings.ToLower(m.AttributedTo + m.Role)
	if v, ok := m.Metadata["attributed_to"].(string); ok {
		who += strings.ToLower(v)
	}
	if v, ok := m.Metadata["role"].(string); ok {
		who += strings.ToLower(v)
	}
	out.Stated = who == "user"
	for _, r := range []struct{ what, id string }{{"user", m.UserID}, {"agent", m.AgentID}, {"app", m.AppID}, {"run", m.RunID}} {
		if r.id != "" {
			out.Refs = append(out.Refs, Ref("mem0", r.what, r.id))
		}
	}
	t := m.CreatedAt
	if t == nil {
		t = m.UpdatedAt
	}
	out.At, out.RawTime, _ = ParseTime(t)
	return out
}
