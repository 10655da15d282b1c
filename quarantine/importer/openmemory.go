package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// openmemory reads an export of OpenMemory, mem0's self-hosted memory
// server for MCP clients. Its format was checked in mem0ai/mem0 at commit
// 540d23d610fc (the last before OpenMemory left that repository):
// openmemory/api/app/routers/backup.py (POST /api/v1/backup/export, the
// dashboard's Settings export, ui/components/form-view.tsx),
// openmemory/backup-scripts/export_openmemory.sh (the same export made
// from a running container), openmemory/api/app/models.py (MemoryState:
// active, paused, archived, deleted; MemoryStatusHistory) and
// openmemory/api/app/schemas.py (the memory list of GET /api/v1/memories/).
//
// It reads, whichever it is given:
//   - the export zip, memories_export_<user>.zip, holding memories.json and
//     memories.jsonl.gz (memories.json is read when present, being the
//     richer: it has the state history);
//   - memories.json alone: {"user", "apps": [{"id", "name", …}],
//     "categories": [{"id", "name", …}], "memories": [{"id", "user_id",
//     "app_id", "content", "metadata", "state", "created_at",
//     "updated_at", "archived_at", "deleted_at", "category_ids"}],
//     "memory_categories", "status_history": [{"id", "memory_id",
//     "changed_by", "old_state", "new_state", "changed_at"}],
//     "access_controls", "export_meta"};
//   - memories.jsonl.gz or memories.jsonl: one {"id", "content",
//     "metadata", "created_at", "updated_at", "state", "app",
//     "categories"} a line;
//   - the memory list the API pages out, {"items": [{"id", "content",
//     "created_at" (epoch seconds), "state", "app_id", "app_name",
//     "categories", "metadata_"}], "total", …}.
//
// Every memory is an inference: OpenMemory memories are written by the
// MCP client (the app) through mem0, and the export does not say that the
// person typed one (a memory typed in the dashboard is the app
// "openmemory", as is every memory OpenMemory itself imported). The app
// that wrote a memory is its agent and an evidence ref
// (openmemory:app/<name>); its first category picks its key.
//
// A paused, archived or deleted memory keeps its state (Memory.State) and
// the times it was archived or deleted. OpenMemory keeps no earlier texts
// of a memory in its export (mem0's own change history is not exported):
// the history it has is the state changes of status_history, each kept
// as an evidence ref openmemory:status/<old>-><new>@<changed_at>.
type openmemory struct{}

func init() { Register(openmemory{}) }

func (openmemory) Name() string { return "openmemory" }

// openmemoryMarks are members only an OpenMemory memories.json or memory
// list has, among the memory exports known here.
var openmemoryMarks = [][]byte{[]byte(`"category_ids"`), []byte(`"status_history"`), []byte(`"export_meta"`),
	[]byte(`"archived_at"`), []byte(`"deleted_at"`), []byte(`"app_name"`)}

func (openmemory) Detect(name string, head []byte) bool {
	if IsZip(head) {
		names := ZipHeadNames(head)
		if zipHeadHas(names, []string{"conversations.json"}) {
			return false
		}
		return zipHeadHas(names, []string{"memories.jsonl.gz"}) || (len(names) > 0 && path.Base(names[0]) == "memories.json")
	}
	if isGzip(head) {
		base := strings.ToLower(path.Base(name))
		return strings.HasPrefix(base, "memories") && strings.HasSuffix(base, ".jsonl.gz")
	}
	h := bytes.TrimSpace(head)
	if len(h) == 0 || h[0] != '{' || !bytes.Contains(h, []byte(`"content"`)) {
		return false
	}
	for _, m := range openmemoryMarks {
		if bytes.Contains(h, m) {
			return true
		}
	}
	// a memories.jsonl line
	return bytes.Contains(h, []byte(`"app"`)) && bytes.Contains(h, []byte(`"state"`)) && bytes.Contains(h, []byte(`"categories"`))
}

func isGzip(head []byte) bool { return bytes.HasPrefix(head, []byte{0x1f, 0x8b}) }

// omMemory is a memory of any of the export's shapes.
type omMemory struct {
	ID          string         `json:"id"`
	Content     string         `json:"content"`
	UserID      string         `json:"user_id"`
	AppID       string         `json:"app_id"`
	App         string         `json:"app"`
	AppName     string         `json:"app_name"`
	State       string         `json:"state"`
	CreatedAt   any            `json:"created_at"`
	UpdatedAt   any            `json:"updated_at"`
	ArchivedAt  any            `json:"archived_at"`
	DeletedAt   any            `json:"deleted_at"`
	CategoryIDs []string       `json:"category_ids"`
	Categories  []string       `json:"categories"`
	Metadata    map[string]any `json:"metadata"`
}

type omNamed struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type omStatus struct {
	MemoryID  string `json:"memory_id"`
	OldState  string `json:"old_state"`
	NewState  string `json:"new_state"`
	ChangedAt any    `json:"changed_at"`
}

// omMaxNamed and omMaxHistory bound what is held of an export besides the
// memory being read: its apps and categories, and its state changes.
const (
	omMaxNamed   = 100_000
	omMaxHistory = 1_000_000
)

// omIndex is what memories.json says besides its memories.
type omIndex struct {
	apps, categories map[string]string
	history          map[string][]string
	held             int
	over             bool
}

func (s openmemory) Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error {
	head := make([]byte, min(in.Size, 64<<10))
	if _, err := in.R.ReadAt(head, 0); err != nil && int64(len(head)) != in.Size {
		return err
	}
	opener := func() (io.ReadCloser, error) { return io.NopCloser(in.Reader()), nil }
	switch {
	case IsZip(head):
		z, err := OpenZip(in)
		if err != nil {
			return err
		}
		return s.readZip(ctx, z, in.Limits, emit, drop)
	case isGzip(head):
		r, err := Gunzip(in.Reader(), in.Limits.MaxEntryBytes)
		if err != nil {
			return err
		}
		return s.readLines(ctx, r, in.Limits, emit)
	case strings.HasSuffix(strings.ToLower(in.Name), ".jsonl") || isJSONLines(head):
		return s.readLines(ctx, in.Reader(), in.Limits, emit)
	}
	if h := bytes.TrimSpace(head); bytes.Contains(h, []byte(`"items"`)) && bytes.Contains(h, []byte(`"app_name"`)) {
		return Stream(in.Reader(), "items", in.Limits, func(i int, raw json.RawMessage) error {
			return s.emitRaw(ctx, raw, nil, emit)
		})
	}
	return s.readBackup(ctx, opener, in.Limits, emit, drop)
}

// isJSONLines reports whether head begins with a whole JSON object on its
// first line, followed by another.
func isJSONLines(head []byte) bool {
	first, rest, ok := bytes.Cut(bytes.TrimLeft(head, " \t\r\n"), []byte("\n"))
	return ok && json.Valid(first) && bytes.HasPrefix(bytes.TrimSpace(first), []byte("{")) &&
		bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte("{"))
}

func (s openmemory) readZip(ctx context.Context, z *Zip, lim Limits, emit func(Memory) error, drop func(Drop)) error {
	find := func(base string) string {
		for _, f := range z.Files() {
			if path.Base(f) == base {
				return f
			}
		}
		return ""
	}
	if name := find("memories.json"); name != "" {
		return s.readBackup(ctx, func() (io.ReadCloser, error) { return z.Open(name) }, lim, emit, drop)
	}
	for _, base := range []string{"memories.jsonl.gz", "memories.jsonl"} {
		name := find(base)
		if name == "" {
			continue
		}
		rc, err := z.Open(name)
		if err != nil {
			return err
		}
		defer rc.Close()
		var r io.Reader = rc
		if strings.HasSuffix(base, ".gz") {
			if r, err = Gunzip(rc, lim.MaxEntryBytes); err != nil {
				return err
			}
		}
		return s.readLines(ctx, r, lim, emit)
	}
	return refused("the archive has no memories.json nor memories.jsonl.gz")
}

func (s openmemory) readLines(ctx context.Context, r io.Reader, lim Limits, emit func(Memory) error) error {
	return StreamJSONLines(r, lim, func(i int, raw json.RawMessage) error {
		return s.emitRaw(ctx, raw, nil, emit)
	})
}

// readBackup reads memories.json twice: first what it says of apps,
// categories and state changes, then its memories.
func (s openmemory) readBackup(ctx context.Context, open func() (io.ReadCloser, error), lim Limits, emit func(Memory) error, drop func(Drop)) error {
	ix := &omIndex{apps: map[string]string{}, categories: map[string]string{}, history: map[string][]string{}}
	named := func(into map[string]string, what string) func(int, json.RawMessage) error {
		return func(i int, raw json.RawMessage) error {
			var n omNamed
			if err := Strict(raw, &n); err != nil {
				return err
			}
			if len(into) >= omMaxNamed {
				return refused("the export names more than %d %s", omMaxNamed, what)
			}
			into[n.ID] = n.Name
			return ctx.Err()
		}
	}
	first := map[string]func(int, json.RawMessage) error{
		"apps": named(ix.apps, "apps"), "categories": named(ix.categories, "categories"),
		"status_history": func(i int, raw json.RawMessage) error {
			var h omStatus
			if err := Strict(raw, &h); err != nil {
				return err
			}
			ix.add(h)
			return ctx.Err()
		},
	}
	if err := streamOpened(open, lim, first); err != nil {
		return err
	}
	if ix.over {
		drop(Drop{Location: "memories.json status_history", Reason: "state changes beyond the first million are not kept as evidence"})
	}
	seen := false
	err := streamOpened(open, lim, map[string]func(int, json.RawMessage) error{"memories": func(i int, raw json.RawMessage) error {
		seen = true
		return s.emitRaw(ctx, raw, ix, emit)
	}})
	if err == nil && !seen {
		drop(Drop{Location: "memories.json", Reason: "no memories"})
	}
	return err
}

func streamOpened(open func() (io.ReadCloser, error), lim Limits, arrays map[string]func(int, json.RawMessage) error) error {
	rc, err := open()
	if errors.Is(err, fs.ErrNotExist) {
		return refused("the export cannot be opened")
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	return StreamMembers(rc, lim, arrays)
}

// add keeps h as an evidence ref of its memory.
func (ix *omIndex) add(h omStatus) {
	if ix.held >= omMaxHistory {
		ix.over = true
		return
	}
	_, raw, _ := ParseTime(h.ChangedAt)
	if t, _, ok := ParseTime(h.ChangedAt); ok {
		raw = t.Format(time.RFC3339Nano)
	}
	ix.history[h.MemoryID] = append(ix.history[h.MemoryID], Ref("openmemory", "status", Clip(h.OldState, 16)+"->"+Clip(h.NewState, 16)+"@"+Clip(raw, 64)))
	ix.held++
}

func (s openmemory) emitRaw(ctx context.Context, raw json.RawMessage, ix *omIndex, emit func(Memory) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var m omMemory
	if err := Strict(raw, &m); err != nil {
		return err
	}
	return emit(m.memory(ix))
}

// memory is m as a Memory; ix, if not nil, names its app and categories
// and has its state changes.
func (m omMemory) memory(ix *omIndex) Memory {
	out := Memory{SourceID: m.ID, Text: m.Content, State: strings.ToLower(m.State)}
	if out.State == "active" {
		out.State = ""
	}
	app := m.App
	if app == "" {
		app = m.AppName
	}
	cats := m.Categories
	if ix != nil {
		if app == "" {
			app = ix.apps[m.AppID]
		}
		for _, id := range m.CategoryIDs {
			if name := ix.categories[id]; name != "" {
				cats = append(cats, name)
			}
		}
	}
	if len(cats) > 0 {
		out.Category = cats[0]
	}
	out.Agent = app
	if app != "" {
		out.Refs = append(out.Refs, Ref("openmemory", "app", app))
	} else if m.AppID != "" {
		out.Refs = append(out.Refs, Ref("openmemory", "app", m.AppID))
	}
	if m.UserID != "" {
		out.Refs = append(out.Refs, Ref("openmemory", "user", m.UserID))
	}
	for _, at := range []struct {
		what string
		v    any
	}{{"archived", m.ArchivedAt}, {"deleted", m.DeletedAt}} {
		if t, _, ok := ParseTime(at.v); ok {
			out.Refs = append(out.Refs, Ref("openmemory", at.what, t.Format(time.RFC3339Nano)))
		}
	}
	if ix != nil {
		out.Refs = append(out.Refs, ix.history[m.ID]...)
	}
	t := m.CreatedAt
	if t == nil {
		t = m.UpdatedAt
	}
	out.At, out.RawTime, _ = ParseTime(t)
	return out
}
