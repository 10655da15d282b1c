package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"
)

// chatgpt reads the ChatGPT data export (Settings › Data controls › Export
// data): a zip holding conversations.json (newer exports split it into
// conversations-000.json, conversations-001.json, …), chat.html, user.json,
// message_feedback.json, model_comparisons.json, shared_conversations.json
// and media files; or conversations.json alone. conversations.json is an
// array of conversations
//
//	{"id"/"conversation_id", "title", "create_time", "update_time" (Unix
//	 seconds, float), "current_node", "mapping": {node id: {"id",
//	 "parent", "children": [...], "message": null | {"id", "author":
//	 {"role": user|assistant|system|tool, "name"}, "create_time",
//	 "content": {"content_type", "parts": [...], "text"?, …},
//	 "metadata": {...}, "recipient": "all"|"bio"|…}}}}
//
// The mapping is a tree: an edited message or a regenerated answer leaves
// a branch, and only the path from current_node up to the root is the
// conversation as it stands. Only that path is read; abandoned branches
// are not memories. On it:
//   - a user message's text (string parts of "text" and
//     "multimodal_text") is a memory the person stated, unless it is
//     hidden (metadata.is_visually_hidden_from_conversation);
//   - custom instructions ride in each conversation as a hidden message of
//     content_type "user_editable_context" whose
//     metadata.user_context_message_data holds about_user_message ("what
//     should ChatGPT know about you") and about_model_message ("how should
//     it respond"); content.user_profile / user_instructions hold the same
//     text wrapped in OpenAI's preamble. Each distinct text is one stated
//     memory of category custom_instructions, the first time it is seen;
//   - an assistant message to recipient "bio" is ChatGPT's memory tool
//     writing a memory: an inferred memory of category memory;
//   - a "model_editable_context" message's content.model_set_context is
//     the memory ChatGPT put into the conversation ("1. [2025-02-01].
//     …"), and an assistant answer printing the person's memory on request
//     is a prose dump: both are split into candidates, one per statement;
//   - other assistant, system and tool messages are not memories.
//
// user.json (id, email, chatgpt_plus_user, phone_number) and the other
// files hold no memories; custom instructions are found nowhere else.
//
// Checked against: the format notes of mitkury/chatgpt-export-parser
// (https://github.com/mitkury/chatgpt-export-parser/blob/main/docs/chatgpt-data-export-format.md:
// files of the zip, conversation and
// node fields, current_node, branches, is_user_system_message and
// user_context_message_data); public fixtures and parsers of real exports
// (user_editable_context with user_profile/user_instructions, recipient
// "bio" answered by a tool message "Model set context updated.",
// model_editable_context/model_set_context, create_time null on hidden
// messages); OpenAI's help article 7260999 (the export is a zip of chat
// history and account data).
type chatgpt struct{}

func init() { Register(chatgpt{}) }

func (chatgpt) Name() string { return "chatgpt" }

// chatgptFiles are the zip entries only a ChatGPT export has.
var chatgptFiles = []string{"chat.html", "user.json", "message_feedback.json", "model_comparisons.json",
	"shared_conversations.json", "user_settings.json"}

// conversationsFile matches conversations.json and its numbered parts.
var conversationsFile = regexp.MustCompile(`^conversations(?:-\d{1,6})?\.json$`)

func (chatgpt) Detect(name string, head []byte) bool {
	if IsZip(head) {
		names := ZipHeadNames(head)
		if zipHeadHas(names, chatgptFiles) {
			return true
		}
		// conversations.json alone in view: ChatGPT's unless Claude's
		// files or records show.
		return zipHeadHas(names, []string{"conversations.json"}) && !claudeZip(names) &&
			!bytes.Contains(head, []byte(`"chat_messages"`))
	}
	h := bytes.TrimSpace(head)
	return len(h) > 0 && h[0] == '[' && bytes.Contains(h, []byte(`"mapping"`)) &&
		(bytes.Contains(h, []byte(`"current_node"`)) || bytes.Contains(h, []byte(`"author"`)))
}

type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	CreateTime     any                `json:"create_time"`
	CurrentNode    string             `json:"current_node"`
	Mapping        map[string]gptNode `json:"mapping"`
}

type gptNode struct {
	Parent  string      `json:"parent"`
	Message *gptMessage `json:"message"`
}

type gptMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
	} `json:"author"`
	CreateTime any `json:"create_time"`
	Content    struct {
		ContentType      string `json:"content_type"`
		Parts            []any  `json:"parts"`
		Text             any    `json:"text"`
		UserProfile      any    `json:"user_profile"`
		UserInstructions any    `json:"user_instructions"`
		ModelSetContext  any    `json:"model_set_context"`
	} `json:"content"`
	Metadata struct {
		Hidden      any            `json:"is_visually_hidden_from_conversation"`
		UserContext map[string]any `json:"user_context_message_data"`
		ModelSlug   any            `json:"model_slug"`
	} `json:"metadata"`
	Recipient string `json:"recipient"`
}

func (s chatgpt) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	r := &gptReader{ctx: ctx, in: in, emit: emit, drop: drop, seen: map[string]bool{}}
	head := make([]byte, min(in.Size, 4))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	if !IsZip(head) {
		r.file = in.Name
		return r.stream(in.Reader())
	}
	z, err := OpenZip(in)
	if err != nil {
		return err
	}
	found, err := z.Each(func(name string) bool { return conversationsFile.MatchString(path.Base(name)) }, func(name string, f io.Reader) error {
		r.file = name
		return r.stream(f)
	})
	if err != nil {
		return err
	}
	if found == 0 {
		return refused("the archive has no conversations.json: not a ChatGPT export")
	}
	return nil
}

// gptReader reads the conversations of one export.
type gptReader struct {
	ctx  context.Context
	in   *Input
	emit func(Memory) error
	drop func(Drop)
	file string
	seen map[string]bool // texts of memories ChatGPT repeats in each conversation
}

func (r *gptReader) stream(rd io.Reader) error {
	return Stream(rd, "", r.in.Limits, func(i int, raw json.RawMessage) error {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		var c gptConversation
		if err := Strict(raw, &c); err != nil {
			return fmt.Errorf("%s conversation %d: %w", r.file, i, err)
		}
		if c.ID == "" {
			c.ID = c.ConversationID
		}
		if c.ID == "" {
			c.ID = fmt.Sprint(i)
		}
		return r.conversation(c)
	})
}

// path is the conversation as it stands: the messages from the root down
// to current_node (or, without one, to the latest message).
func (c gptConversation) path() []*gptMessage {
	id := c.CurrentNode
	if _, ok := c.Mapping[id]; !ok {
		id = ""
		var latest time.Time
		for k, n := range c.Mapping {
			if n.Message == nil {
				continue
			}
			t, _, _ := ParseTime(n.Message.CreateTime)
			if id == "" || t.After(latest) || (t.Equal(latest) && k > id) {
				latest, id = t, k
			}
		}
	}
	var out []*gptMessage
	seen := map[string]bool{}
	for id != "" && !seen[id] {
		seen[id] = true
		n, ok := c.Mapping[id]
		if !ok {
			break
		}
		if n.Message != nil {
			out = append(out, n.Message)
		}
		id = n.Parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (r *gptReader) conversation(c gptConversation) error {
	lastUser := ""
	for _, m := range c.path() {
		var err error
		role := strings.ToLower(m.Author.Role)
		switch {
		case m.Metadata.UserContext != nil || m.Content.ContentType == "user_editable_context":
			err = r.customInstructions(c, m)
		case m.Content.ContentType == "model_editable_context":
			text, _ := m.Content.ModelSetContext.(string)
			err = r.dump(c, m, proseStatements(text, false))
		case role == "user":
			if m.Metadata.Hidden == true {
				continue
			}
			lastUser = gptText(m)
			err = r.userMessage(c, m, lastUser)
		case role == "assistant" && m.Recipient == "bio":
			err = r.once(r.memory(c, m, gptText(m), "memory"))
		case role == "assistant" && (m.Recipient == "" || m.Recipient == "all"):
			err = r.dump(c, m, memoryDump(lastUser, gptText(m)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// gptText is a message's text: its string parts, or its text.
func gptText(m *gptMessage) string {
	var parts []string
	for _, p := range m.Content.Parts {
		if s, ok := p.(string); ok && strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		if s, ok := m.Content.Text.(string); ok {
			return s
		}
	}
	return strings.Join(parts, "\n")
}

func (r *gptReader) where(c gptConversation, m *gptMessage) string {
	return fmt.Sprintf("%s conversation %s message %s", r.file, Clip(c.ID, 128), Clip(m.ID, 128))
}

// memory is the memory text of message m of c says, of category cat.
func (r *gptReader) memory(c gptConversation, m *gptMessage, text, cat string) Memory {
	out := Memory{Text: strings.TrimSpace(text), Category: cat, Refs: []string{Ref("chatgpt", "conversation", c.ID)}}
	if m.ID != "" {
		out.Refs = append(out.Refs, Ref("chatgpt", "message", m.ID))
	}
	var ok bool
	if out.At, out.RawTime, ok = ParseTime(m.CreateTime); !ok {
		out.At, out.RawTime, _ = ParseTime(c.CreateTime)
	}
	if slug, _ := m.Metadata.ModelSlug.(string); slug != "" {
		out.Agent = slug
	} else if m.Author.Role == "assistant" {
		out.Agent = "ChatGPT"
	}
	return out
}

func (r *gptReader) userMessage(c gptConversation, m *gptMessage, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		r.drop(Drop{Location: r.where(c, m), Reason: "a message with no text (an attachment only)"})
		return nil
	case len(text) > r.in.Limits.MaxTextBytes:
		r.drop(Drop{Location: r.where(c, m), Reason: fmt.Sprintf("a message of %d bytes, over the %d a memory may hold: left out", len(text), r.in.Limits.MaxTextBytes)})
		return nil
	}
	mem := r.memory(c, m, text, "")
	mem.SourceID, mem.Stated = m.ID, true
	return r.emit(mem)
}

// once emits mem unless a memory of its category and text was emitted
// before in this export.
func (r *gptReader) once(mem Memory) error {
	k := mem.Category + "\x00" + mem.Text
	if mem.Text == "" || r.seen[k] {
		return nil
	}
	if len(mem.Text) > r.in.Limits.MaxTextBytes {
		r.drop(Drop{Location: mem.Refs[len(mem.Refs)-1], Reason: fmt.Sprintf("a statement of %d bytes, over the %d a memory may hold: left out", len(mem.Text), r.in.Limits.MaxTextBytes)})
		return nil
	}
	r.seen[k] = true
	return r.emit(mem)
}

// fencedProfile is the person's text inside the preamble of
// user_profile/user_instructions.
var fencedProfile = regexp.MustCompile("(?s)```(.*?)```")

func (r *gptReader) customInstructions(c gptConversation, m *gptMessage) error {
	texts := []struct {
		text any
		kind string
	}{{m.Metadata.UserContext["about_user_message"], "fact"}, {m.Metadata.UserContext["about_model_message"], "preference"}}
	if m.Metadata.UserContext == nil {
		texts[0].text, texts[1].text = m.Content.UserProfile, m.Content.UserInstructions
		for i := range texts {
			s, _ := texts[i].text.(string)
			if f := fencedProfile.FindAllStringSubmatch(s, -1); len(f) > 0 {
				texts[i].text = f[len(f)-1][1]
			}
		}
	}
	for _, t := range texts {
		s, _ := t.text.(string)
		if strings.TrimSpace(s) == "" || len(s) > r.in.Limits.MaxTextBytes {
			continue
		}
		mem := r.memory(c, m, s, "custom_instructions")
		mem.Stated, mem.Kind, mem.Agent = true, t.kind, ""
		if err := r.once(mem); err != nil {
			return err
		}
	}
	return nil
}

// dump emits the statements of a prose dump in message m as candidates.
func (r *gptReader) dump(c gptConversation, m *gptMessage, sts []proseStatement) error {
	for i, st := range sts {
		mem := r.memory(c, m, st.Text, "memory")
		if st.Heading != "" {
			mem.Category = slug(st.Heading)
		}
		if !st.At.IsZero() {
			mem.At, mem.RawTime = st.At, st.RawTime
		}
		mem.Candidate = true
		if mem.Agent == "" {
			mem.Agent = "ChatGPT"
		}
		if m.ID != "" {
			mem.SourceID = fmt.Sprintf("%s-%d", m.ID, i+1)
		}
		if err := r.once(mem); err != nil {
			return err
		}
	}
	return nil
}
