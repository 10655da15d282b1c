package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// pam reads a Portable AI Memory (PAM) export: memory-store.json, the
// interchange file of the PAM specification. Its format was checked in
// portable-ai-memory/portable-ai-memory at commit d634ce85f2ec: the
// specification
// (https://github.com/portable-ai-memory/portable-ai-memory/blob/d634ce85f2ec/spec.md;
// §2 the files, §7 the statuses, §11 provenance and its extraction
// methods), schemas/portable-ai-memory.schema.json and
// examples/example-memory-store.json. The file is
//
//	{"schema": "portable-ai-memory", "schema_version", "owner",
//	 "memories": [{"id", "type", "custom_type", "status", "content",
//	   "content_hash", "summary", "tags", "confidence",
//	   "temporal": {"created_at", "updated_at", "valid_from",
//	     "valid_until", "superseded_by"},
//	   "provenance": {"platform", "platform_user_id", "conversation_ref",
//	     "message_ref", "extraction_method", "extracted_at", "extractor"},
//	   "access", "embedding_ref", "metadata"}],
//	 "relations", "conversations_index", "integrity", …}
//
// A memory is reported (stated by the person) only when its extraction
// method is explicit_user_input; llm_inference, api_export,
// browser_extraction and manual ("entered by user or operator") are
// inferences. Its type is its category (a custom type's custom_type);
// fact, preference and goal are also its claim kind (a relationship
// claim needs entities, so a relationship memory is a fact). A status
// other than active (superseded, deprecated, retracted, archived) is
// kept as its state, with the memory superseding it. The platform that
// kept it is its agent, and evidence keeps the platform, the platform's
// user, conversation and message ids, the extraction method and tags.
// The relations between memories, the conversations and the embeddings
// are not memories and are not read.
type pam struct{}

func init() { Register(pam{}) }

func (pam) Name() string { return "pam" }

func (pam) Detect(name string, head []byte) bool {
	h := bytes.TrimSpace(head)
	return len(h) > 0 && h[0] == '{' && bytes.Contains(h, []byte(`"schema"`)) && bytes.Contains(h, []byte(`"portable-ai-memory"`))
}

type pamMemory struct {
	ID         string   `json:"id"`
	Type       string   `json:"type"`
	CustomType *string  `json:"custom_type"`
	Status     string   `json:"status"`
	Content    string   `json:"content"`
	Tags       []string `json:"tags"`
	Temporal   struct {
		CreatedAt    any     `json:"created_at"`
		UpdatedAt    any     `json:"updated_at"`
		ValidUntil   *string `json:"valid_until"`
		SupersededBy *string `json:"superseded_by"`
	} `json:"temporal"`
	Provenance struct {
		Platform         string  `json:"platform"`
		PlatformUserID   *string `json:"platform_user_id"`
		ConversationRef  *string `json:"conversation_ref"`
		MessageRef       *string `json:"message_ref"`
		ExtractionMethod *string `json:"extraction_method"`
	} `json:"provenance"`
}

func (pam) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	if in.Size > in.Limits.MaxBytes {
		return refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
	}
	schema, err := topLevelString(in.Reader(), in.Limits, "schema")
	if err != nil {
		return err
	}
	if schema != "portable-ai-memory" {
		return refused("not a PAM memory store (its schema is %q)", Clip(schema, 64))
	}
	return StreamMembers(in.Reader(), in.Limits, map[string]func(int, json.RawMessage) error{"memories": func(i int, raw json.RawMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var m pamMemory
		if err := Strict(raw, &m); err != nil {
			return err
		}
		return emit(m.memory())
	}})
}

// memory is m as a Memory.
func (m pamMemory) memory() Memory {
	p := m.Provenance
	method := deref(p.ExtractionMethod)
	out := Memory{SourceID: m.ID, Text: m.Content, Category: m.Type, Agent: p.Platform,
		Stated: method == "explicit_user_input", State: strings.ToLower(m.Status)}
	if m.Type == "custom" && deref(m.CustomType) != "" {
		out.Category = deref(m.CustomType)
	}
	switch m.Type {
	case "fact", "preference", "goal":
		out.Kind = m.Type
	}
	if out.State == "active" {
		out.State = ""
	}
	for _, r := range []struct{ what, id string }{{"platform", p.Platform}, {"user", deref(p.PlatformUserID)},
		{"conversation", deref(p.ConversationRef)}, {"message", deref(p.MessageRef)}, {"extraction", method},
		{"superseded_by", deref(m.Temporal.SupersededBy)}, {"valid_until", deref(m.Temporal.ValidUntil)}} {
		if r.id != "" {
			out.Refs = append(out.Refs, Ref("pam", r.what, r.id))
		}
	}
	for _, tag := range m.Tags {
		out.Refs = append(out.Refs, Ref("pam", "tag", tag))
	}
	t := m.Temporal.CreatedAt
	if t == nil {
		t = m.Temporal.UpdatedAt
	}
	out.At, out.RawTime, _ = ParseTime(t)
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
