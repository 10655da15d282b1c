package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// letta reads a Letta agent file (.af, JSON), as Letta's "Export Agent"
// (GET /v1/agents/{id}/export) writes it. Its format was checked in
// letta-ai/letta at commit 56ba9c255 (the last before the repository was
// archived): letta/schemas/agent_file.py (AgentFileSchema, the current
// form: {"agents": [{"id", "name", "block_ids", "messages", …}],
// "groups", "blocks": [{"id", "label", "value", "description",
// "read_only", "limit", "metadata", …}], "files", "sources", "tools",
// "mcp_servers", "skills", "metadata", "created_at"}) and
// letta/serialize_schemas/pydantic_agent_schema.py (the earlier form, one
// agent: {"agent_type", "core_memory": [{"label", "value", "created_at",
// "updated_at", …}], "name", "messages", "tools", …, "version"}), with the
// example files under tests/test_agent_files/; and in agent-file's README
// (https://github.com/letta-ai/agent-file/blob/4d837ed6d8a2/README.md), which says that an agent file holds no archival memory
// ("We currently do not support Passages (the units of Archival Memory
// in Letta/MemGPT)"): there are none to read.
//
// What is read is the agent's core memory, its blocks (label → value):
// each line of a block's value (each sentence of a line of prose) is a
// memory, its category the block's label ("human": what the agent keeps
// of the person; other labels are the agent's own notes, kept so the
// owner can judge them). The "persona" block describes the agent, not the
// person, and is left out (reported). Blocks are written by the agent (or
// by whoever configured it), and the format does not say the person
// stated any of it: every memory is an inference, its agent the agent
// that has the block. The conversation (messages), tools and files of the
// agent are not memories and are not read. Evidence keeps the agent's and
// block's ids in the file and the line. A memory's time is its block's
// updated_at in the earlier form; the current form has no time for a
// block (its created_at is the export's), so the import's time stands.
type letta struct{}

func init() { Register(letta{}) }

func (letta) Name() string { return "letta" }

func (letta) Detect(name string, head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 || h[0] != '{' {
		return false
	}
	if strings.EqualFold(path.Ext(name), ".af") {
		return true
	}
	current := bytes.Contains(h, []byte(`"agents"`)) && (bytes.Contains(h, []byte(`"block_ids"`)) || bytes.Contains(h, []byte(`"memory_blocks"`)))
	earlier := bytes.Contains(h, []byte(`"core_memory"`)) && bytes.Contains(h, []byte(`"agent_type"`))
	return current || earlier
}

type lettaBlock struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	Value      string `json:"value"`
	IsTemplate bool   `json:"is_template"`
	CreatedAt  any    `json:"created_at"`
	UpdatedAt  any    `json:"updated_at"`
}

type lettaAgent struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	BlockIDs []string `json:"block_ids"`
}

func (s letta) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	if in.Size > in.Limits.MaxBytes {
		return refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
	}
	// first pass: the agents, and whose each block is (the current form),
	// or the one agent's name (the earlier)
	owners := map[string][]lettaAgent{}
	var single lettaAgent
	agents := 0
	err := StreamMembers(in.Reader(), in.Limits, map[string]func(int, json.RawMessage) error{
		"agents": func(i int, raw json.RawMessage) error {
			var a lettaAgent
			if err := Strict(raw, &a); err != nil {
				return err
			}
			if agents++; agents > omMaxNamed {
				return refused("the file has more than %d agents", omMaxNamed)
			}
			for _, id := range a.BlockIDs {
				if len(owners[id]) < 8 {
					owners[id] = append(owners[id], lettaAgent{ID: a.ID, Name: a.Name})
				}
			}
			return ctx.Err()
		},
	})
	if err != nil {
		return err
	}
	if single.Name, err = topLevelString(in.Reader(), in.Limits, "name"); err != nil {
		return err
	}
	blocks := 0
	each := func(member string) func(int, json.RawMessage) error {
		return func(i int, raw json.RawMessage) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var b lettaBlock
			if err := Strict(raw, &b); err != nil {
				return err
			}
			blocks++
			who := owners[b.ID]
			if member == "core_memory" {
				who = []lettaAgent{single}
			}
			where := member + "[" + strconv.Itoa(i) + "]"
			return s.block(b, where, who, emit, drop)
		}
	}
	if err := StreamMembers(in.Reader(), in.Limits, map[string]func(int, json.RawMessage) error{
		"blocks": each("blocks"), "core_memory": each("core_memory"),
	}); err != nil {
		return err
	}
	if blocks == 0 {
		drop(Drop{Location: in.Name, Reason: "no memory blocks"})
	}
	return nil
}

// block emits the statements of b, a block of the agents who.
func (letta) block(b lettaBlock, where string, who []lettaAgent, emit func(Memory) error, drop func(Drop)) error {
	label := strings.TrimSpace(b.Label)
	switch {
	case strings.EqualFold(label, "persona"):
		drop(Drop{Location: where + " (persona)", Reason: "the agent's persona: about the agent, not the person"})
		return nil
	case b.IsTemplate:
		drop(Drop{Location: where + " (" + Clip(label, 64) + ")", Reason: "a block template, not a memory"})
		return nil
	case strings.TrimSpace(b.Value) == "":
		drop(Drop{Location: where + " (" + Clip(label, 64) + ")", Reason: "empty"})
		return nil
	}
	var refs []string
	agent := ""
	for _, a := range who {
		if a.ID != "" {
			refs = append(refs, Ref("letta", "agent", a.ID))
		}
		if agent == "" {
			agent = a.Name
		}
	}
	if b.ID != "" {
		refs = append(refs, Ref("letta", "block", b.ID))
	}
	t := b.UpdatedAt
	if t == nil {
		t = b.CreatedAt
	}
	at, raw, _ := ParseTime(t)
	return eachStatement(b.Value, func(line int, text string) error {
		m := Memory{Text: text, Category: label, Agent: agent, At: at, RawTime: raw,
			Refs: append(append([]string(nil), refs...), Ref("letta", "line", strconv.Itoa(line)))}
		return emit(m)
	})
}

// topLevelString is the string member name of the JSON object r ("" if
// it has none, or it is not a string).
func topLevelString(r io.Reader, lim Limits, name string) (string, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", refused("not JSON: %v", err)
		}
		if tok == name {
			var v any
			if err := dec.Decode(&v); err != nil {
				return "", refused("not JSON: %v", err)
			}
			s, _ := v.(string)
			return s, nil
		}
		if err := skipValue(dec, lim.MaxDepth); err != nil {
			return "", err
		}
	}
	return "", nil
}

// eachStatement calls fn with each statement of text, a block's value or
// a note's line: each line that is not empty, without its list marker,
// split further into its sentences when it is prose.
func eachStatement(text string, fn func(line int, statement string) error) error {
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "\ufeff"))
		line = strings.TrimSpace(trimListMarker(line))
		if line == "" || strings.Trim(line, "#-=*_ ") == "" {
			continue
		}
		for _, s := range sentences(line) {
			if err := fn(n+1, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// trimListMarker is line without a leading "- ", "* ", "+ ", "• " or
// "1. ".
func trimListMarker(line string) string {
	for _, p := range []string{"- ", "* ", "+ ", "• "} {
		if strings.HasPrefix(line, p) {
			return line[len(p):]
		}
	}
	i := 0
	for i < len(line) && i < 4 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
		return line[i+2:]
	}
	return line
}

// sentences splits prose after ".", "!" or "?" followed by a space and an
// upper-case letter; a line with no such break is one sentence.
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line)-2; i++ {
		c := line[i]
		if (c != '.' && c != '!' && c != '?') || line[i+1] != ' ' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(line[i+2:])
		if !unicode.IsUpper(r) || isAbbreviation(line[start:i+1]) {
			continue
		}
		if s := strings.TrimSpace(line[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 2
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// isAbbreviation reports whether s ends with a title or initial (Dr.,
// Mr., J.) rather than a sentence.
func isAbbreviation(s string) bool {
	word := s[strings.LastIndexByte(s, ' ')+1:]
	switch strings.ToLower(word) {
	case "dr.", "mr.", "mrs.", "ms.", "st.", "prof.", "e.g.", "i.e.", "vs.", "etc.":
		return true
	}
	return utf8.RuneCountInString(word) == 2 // an initial: "J."
}
