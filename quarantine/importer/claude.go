package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// claude reads the claude.ai data export (Settings › Privacy › Export
// data): a zip (data-…-batch-0000.zip) holding conversations.json,
// users.json, projects.json (or projects/<uuid>.json, one per project) and
// memories.json; or one of those JSON files alone.
//
//   - conversations.json is an array of {"uuid", "name", "summary",
//     "created_at", "updated_at", "account": {"uuid"}, "chat_messages":
//     [{"uuid", "text", "content": [{"type": "text", "text", …}, …],
//     "sender": "human"|"assistant", "created_at", "updated_at",
//     "attachments", "files", "parent_message_uuid"?}]}. chat_messages is
//     flat but keeps every edit and retry: when messages name their
//     parent, only the path from the conversation's current leaf
//     (current_leaf_message_uuid, or else its latest message) up to the
//     root counts. A human message's text is a memory the person stated;
//     an assistant answer printing the person's memory on request is a
//     prose dump, split into candidates; other assistant messages are not
//     memories.
//   - memories.json is an array (memories/<uuid>.json, in newer exports,
//     one object) of {"conversations_memory": Markdown prose under bold
//     headings ("**Work context**"), "project_memories": {project uuid:
//     prose}, "memory_files"?: [{"path", "content", "updated_at"}],
//     "account_uuid"}: Claude's memory of the person, a prose dump: one
//     candidate per statement (sentence or list item), its heading the
//     category.
//   - projects.json is an array of {"uuid", "name", "description",
//     "prompt_template", "docs", "created_at", …}: a project's
//     prompt_template is its instructions, written by the person: stated,
//     one memory per paragraph or item, category project_instructions.
//   - users.json ({"uuid", "full_name", "email_address",
//     "verified_phone_number"}) holds no memories.
//
// Checked against: Anthropic's help article 9450526 ("How can I export my
// Claude data?": conversation data and user data, by email link, from web
// or desktop); parsers and fixtures of real exports on GitHub (field
// names of conversations.json and its content blocks; memories.json with
// conversations_memory, project_memories and account_uuid; projects/
// <uuid>.json; a parser noting the bulk export keeps abandoned retries in
// the flat chat_messages with parent_message_uuid but no current leaf).
// memory_files is reported by a single source and read only if present.
type claude struct{}

func init() { Register(claude{}) }

func (claude) Name() string { return "claude" }

// claudeZip reports whether the entry names of a zip's head show a
// claude.ai export: users.json, memories or projects (a Claude Code
// folder, whose ~/.claude/projects/ holds no such JSON, is not one).
func claudeZip(names []string) bool {
	if zipHeadHas(names, claudeMDNames, ".claude/") {
		return false
	}
	if zipHeadHas(names, []string{"memories.jsonl.gz"}) && !zipHeadHas(names, []string{"conversations.json", "users.json"}) {
		return false // OpenMemory's export: memories.json beside memories.jsonl.gz
	}
	for _, n := range names {
		if k := claudeKind(n); k == "memories" || k == "projects" || path.Base(n) == "users.json" {
			return true
		}
	}
	return false
}

func (claude) Detect(name string, head []byte) bool {
	if IsZip(head) {
		names := ZipHeadNames(head)
		if claudeZip(names) {
			return true
		}
		return zipHeadHas(names, []string{"conversations.json"}) && !zipHeadHas(names, chatgptFiles) &&
			!bytes.Contains(head, []byte(`"mapping"`))
	}
	h := bytes.TrimSpace(head)
	if len(h) == 0 || (h[0] != '[' && h[0] != '{') {
		return false
	}
	for _, k := range []string{`"chat_messages"`, `"conversations_memory"`, `"project_memories"`} {
		if bytes.Contains(h, []byte(k)) {
			return true
		}
	}
	// projects.json: a project's instructions beside its docs (a Letta
	// agent file has prompt_template too, in its tool rules).
	return bytes.Contains(h, []byte(`"prompt_template"`)) && bytes.Contains(h, []byte(`"docs"`)) && !bytes.Contains(h, []byte(`"agents"`))
}

type claudeConversation struct {
	UUID        string          `json:"uuid"`
	CreatedAt   any             `json:"created_at"`
	CurrentLeaf string          `json:"current_leaf_message_uuid"`
	Messages    []claudeMessage `json:"chat_messages"`
}

type claudeMessage struct {
	UUID      string `json:"uuid"`
	Text      any    `json:"text"`
	Sender    string `json:"sender"`
	CreatedAt any    `json:"created_at"`
	Parent    string `json:"parent_message_uuid"`
	Content   []struct {
		Type string `json:"type"`
		Text any    `json:"text"`
	} `json:"content"`
}

type claudeMemories struct {
	ConversationsMemory any            `json:"conversations_memory"`
	ProjectMemories     map[string]any `json:"project_memories"`
	MemoryFiles         []struct {
		Path      string `json:"path"`
		Content   any    `json:"content"`
		UpdatedAt any    `json:"updated_at"`
	} `json:"memory_files"`
	AccountUUID string `json:"account_uuid"`
}

type claudeProject struct {
	UUID           string `json:"uuid"`
	PromptTemplate any    `json:"prompt_template"`
	CreatedAt      any    `json:"created_at"`
	UpdatedAt      any    `json:"updated_at"`
}

func (s claude) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	r := &claudeReader{ctx: ctx, in: in, emit: emit, drop: drop}
	head := make([]byte, min(in.Size, 64<<10))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	if !IsZip(head) {
		kind := "conversations"
		switch {
		case bytes.Contains(head, []byte(`"chat_messages"`)):
		case bytes.Contains(head, []byte(`"conversations_memory"`)) || bytes.Contains(head, []byte(`"project_memories"`)):
			kind = "memories"
		case bytes.Contains(head, []byte(`"prompt_template"`)):
			kind = "projects"
		}
		return r.file(in.Name, kind, in.Reader())
	}
	z, err := OpenZip(in)
	if err != nil {
		return err
	}
	found, err := z.Each(func(name string) bool { return claudeKind(name) != "" }, func(name string, f io.Reader) error {
		return r.file(name, claudeKind(name), f)
	})
	if err != nil {
		return err
	}
	if found == 0 {
		return refused("the archive has no conversations.json, memories.json or projects: not a claude.ai export")
	}
	return nil
}

// claudeKind is what the export's file name holds: conversations,
// memories, projects, or "" (nothing this source reads).
func claudeKind(name string) string {
	base, dir := path.Base(name), path.Base(path.Dir(name))
	switch {
	case conversationsFile.MatchString(base):
		return "conversations"
	case base == "memories.json" || (dir == "memories" && path.Ext(base) == ".json"):
		return "memories"
	case base == "projects.json" || (dir == "projects" && path.Ext(base) == ".json"):
		return "projects"
	}
	return ""
}

// claudeReader reads the files of one export.
type claudeReader struct {
	ctx  context.Context
	in   *Input
	emit func(Memory) error
	drop func(Drop)
}

func (r *claudeReader) file(name, kind string, rd io.Reader) error {
	return streamOneOrMany(rd, r.in.Limits, func(i int, raw json.RawMessage) error {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		var err error
		switch kind {
		case "conversations":
			var c claudeConversation
			if err = Strict(raw, &c); err == nil {
				err = r.conversation(name, c)
			}
		case "memories":
			var m claudeMemories
			if err = Strict(raw, &m); err == nil {
				err = r.memories(name, m)
			}
		case "projects":
			var p claudeProject
			if err = Strict(raw, &p); err == nil {
				err = r.project(name, p)
			}
		}
		if err != nil {
			return fmt.Errorf("%s record %d: %w", name, i, err)
		}
		return nil
	})
}

// path is the conversation as it stands: every message when none names
// its parent, otherwise the path from the current leaf to the root.
func (c claudeConversation) path() []*claudeMessage {
	byID := map[string]*claudeMessage{}
	hasChild := map[string]bool{}
	tree := false
	for i := range c.Messages {
		m := &c.Messages[i]
		byID[m.UUID] = m
		if m.Parent != "" {
			tree = true
			hasChild[m.Parent] = true
		}
	}
	if !tree {
		out := make([]*claudeMessage, len(c.Messages))
		for i := range c.Messages {
			out[i] = &c.Messages[i]
		}
		return out
	}
	leaf := byID[c.CurrentLeaf]
	if leaf == nil {
		var latest time.Time
		for i := range c.Messages {
			m := &c.Messages[i]
			if hasChild[m.UUID] {
				continue
			}
			t, _, _ := ParseTime(m.CreatedAt)
			if leaf == nil || !t.Before(latest) {
				leaf, latest = m, t
			}
		}
	}
	var out []*claudeMessage
	seen := map[*claudeMessage]bool{}
	for m := leaf; m != nil && !seen[m]; m = byID[m.Parent] {
		seen[m] = true
		out = append(out, m)
		if m.Parent == "" {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// text is a message's text: its text blocks, or its text.
func (m *claudeMessage) text() string {
	var parts []string
	for _, b := range m.Content {
		if s, ok := b.Text.(string); ok && b.Type == "text" && strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		s, _ := m.Text.(string)
		return s
	}
	return strings.Join(parts, "\n\n")
}

func (r *claudeReader) conversation(file string, c claudeConversation) error {
	lastHuman := ""
	for _, m := range c.path() {
		text := m.text()
		mem := Memory{SourceID: m.UUID, Text: strings.TrimSpace(text), Refs: []string{Ref("claude", "conversation", c.UUID)}}
		if m.UUID != "" {
			mem.Refs = append(mem.Refs, Ref("claude", "message", m.UUID))
		}
		var ok bool
		if mem.At, mem.RawTime, ok = ParseTime(m.CreatedAt); !ok {
			mem.At, mem.RawTime, _ = ParseTime(c.CreatedAt)
		}
		where := fmt.Sprintf("%s conversation %s message %s", file, Clip(c.UUID, 128), Clip(m.UUID, 128))
		switch m.Sender {
		case "human":
			lastHuman = text
			switch {
			case mem.Text == "":
				r.drop(Drop{Location: where, Reason: "a message with no text (an attachment only)"})
				continue
			case len(mem.Text) > r.in.Limits.MaxTextBytes:
				r.drop(Drop{Location: where, Reason: fmt.Sprintf("a message of %d bytes, over the %d a memory may hold: left out", len(mem.Text), r.in.Limits.MaxTextBytes)})
				continue
			}
			mem.Stated = true
			if err := r.emit(mem); err != nil {
				return err
			}
		case "assistant":
			mem.Agent = "Claude"
			if err := r.candidates(mem, memoryDump(lastHuman, text)); err != nil {
				return err
			}
		}
	}
	return nil
}

// candidates emits each statement of a prose dump as a candidate like
// base, its heading the category.
func (r *claudeReader) candidates(base Memory, sts []proseStatement) error {
	for i, st := range sts {
		mem := base
		mem.Text, mem.Candidate, mem.Stated, mem.Category = st.Text, true, false, "memory"
		if st.Heading != "" {
			mem.Category = slug(st.Heading)
		}
		if base.SourceID != "" {
			mem.SourceID = fmt.Sprintf("%s-%d", base.SourceID, i+1)
		}
		if !st.At.IsZero() {
			mem.At, mem.RawTime = st.At, st.RawTime
		}
		if len(mem.Text) > r.in.Limits.MaxTextBytes {
			r.drop(Drop{Location: strings.Join(mem.Refs, " "), Reason: "a statement over the size a memory may hold: left out"})
			continue
		}
		if err := r.emit(mem); err != nil {
			return err
		}
	}
	return nil
}

func (r *claudeReader) memories(file string, m claudeMemories) error {
	base := Memory{Agent: "Claude"}
	if m.AccountUUID != "" {
		base.Refs = []string{Ref("claude", "account", m.AccountUUID)}
	}
	if s, ok := m.ConversationsMemory.(string); ok {
		if err := r.candidates(base, proseStatements(s, true)); err != nil {
			return err
		}
	}
	for _, id := range claudeKeys(m.ProjectMemories) {
		s, ok := m.ProjectMemories[id].(string)
		if !ok {
			r.drop(Drop{Location: file + " project_memories " + Clip(id, 128), Reason: "not a text"})
			continue
		}
		pm := base
		pm.Refs = append(append([]string{}, base.Refs...), Ref("claude", "project", id))
		if err := r.candidates(pm, proseStatements(s, true)); err != nil {
			return err
		}
	}
	for _, f := range m.MemoryFiles {
		s, _ := f.Content.(string)
		fm := base
		fm.Refs = append(append([]string{}, base.Refs...), Ref("claude", "memory_file", f.Path))
		fm.At, fm.RawTime, _ = ParseTime(f.UpdatedAt)
		sts := proseStatements(s, true)
		stem := strings.TrimSuffix(path.Base(f.Path), path.Ext(f.Path))
		for i := range sts {
			if sts[i].Heading == "" && stem != "" && stem != "." && stem != "/" {
				sts[i].Heading = stem
			}
		}
		if err := r.candidates(fm, sts); err != nil {
			return err
		}
	}
	return nil
}

func (r *claudeReader) project(file string, p claudeProject) error {
	s, _ := p.PromptTemplate.(string)
	t := p.UpdatedAt
	if t == nil {
		t = p.CreatedAt
	}
	at, raw, _ := ParseTime(t)
	for _, b := range proseParse(s).Blocks {
		if len(b.Text) > r.in.Limits.MaxTextBytes {
			r.drop(Drop{Location: fmt.Sprintf("%s project %s line %d", file, Clip(p.UUID, 128), b.Line), Reason: "a block over the size a memory may hold: left out"})
			continue
		}
		mem := Memory{Text: b.Text, Category: "project_instructions", Stated: true, At: at, RawTime: raw,
			Refs: []string{Ref("claude", "project", p.UUID)}}
		if err := r.emit(mem); err != nil {
			return err
		}
	}
	return nil
}

// claudeKeys is m's keys in order.
func claudeKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
