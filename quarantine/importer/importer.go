// Package importer reads the exports of other memory systems (mem0,
// OpenMemory, Letta, ChatGPT, Claude, Claude Code, Cognee, Basic Memory,
// PAM) into what the quarantine holds: one candidate claim per memory, in
// the PHC JSON binding, never in use until the owner adopts it.
//
// A [Source] knows one format: it recognises an export ([Source.Detect])
// and streams it ([Source.Read]), handing each [Memory] to the pipeline
// and reporting each thing it drops ([Drop]). The pipeline ([Run]) turns
// memories into binding documents ([Memory.Claim]) in batches of bounded
// size, so that an export of any size never sits in memory, and drops
// credentials found in a memory (reported by location, never stored).
//
// What a memory becomes is decided here, the same way for every source:
//   - assertion "reported" only when the source says the person stated it
//     ([Memory.Stated]), otherwise "inferred"; never "observed", never
//     confirmed;
//   - the producer is the importing owner; reported.app names the source
//     system, reported.agent its agent, and the evidence keeps the original
//     record's id and the conversation and message ids the source has;
//   - times are UTC, the source's raw value kept in the evidence when it
//     was not already UTC RFC 3339;
//   - a key from the source's mapping (or the --map file), or
//     imported.<source>.<category> — unmapped material is never dropped.
//
// Hostile input is refused whole, before anything is held: see [Limits]
// and [OpenZip].
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Source reads one memory system's export.
type Source interface {
	// Name is the source's name on the command line (mem0, chatgpt, …).
	Name() string
	// Detect reports whether an export whose file is named name, and
	// whose first bytes are head (at most 64 KiB), is this source's.
	Detect(name string, head []byte) bool
	// Read streams in: each memory to emit, in the source's order, and
	// each record it leaves out to drop. An error ends the import whole.
	Read(ctx context.Context, in *Input, emit func(Memory) error, drop func(Drop)) error
}

// Input is an export being read.
type Input struct {
	// Name is the export's file name, as the owner gave it.
	Name string
	// R reads the export from its start; Size is its length in bytes.
	R    io.ReaderAt
	Size int64
	// Limits bound what the export may hold.
	Limits Limits
}

// Reader is a reader of the whole export.
func (in *Input) Reader() io.Reader { return io.NewSectionReader(in.R, 0, in.Size) }

// Drop is a record of the source the import leaves out, and why, by
// location (never its content).
type Drop struct {
	Location string `json:"location"` // where in the export: a file, a record id, a JSON pointer
	Reason   string `json:"reason"`
}

var sources = map[string]Source{}

// Register makes s known by its name. It panics on a second source of the
// same name (a programming error).
func Register(s Source) {
	if _, dup := sources[s.Name()]; dup {
		panic("importer: two sources named " + s.Name())
	}
	sources[s.Name()] = s
}

// Names lists the known sources, sorted.
func Names() []string {
	out := make([]string, 0, len(sources))
	for n := range sources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ErrUnknownSource is the error of an import from a source not known, or
// of an export no source recognises.
var ErrUnknownSource = errors.New("unknown source")

// Lookup returns the source named name, or, with name "", the one that
// recognises the export in (the format is detected).
func Lookup(name string, in *Input) (Source, error) {
	if name != "" {
		s, ok := sources[name]
		if !ok {
			return nil, fmt.Errorf("%w %q: one of %s", ErrUnknownSource, name, strings.Join(Names(), ", "))
		}
		return s, nil
	}
	head := make([]byte, min(in.Size, 64<<10))
	if _, err := in.R.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var found []Source
	for _, n := range Names() {
		if s := sources[n]; s.Detect(in.Name, head) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("%w: no known source recognises this export; name one with --from (%s)", ErrUnknownSource, strings.Join(Names(), ", "))
	}
	names := make([]string, len(found))
	for i, s := range found {
		names[i] = s.Name()
	}
	return nil, fmt.Errorf("%w: this export could be %s; name one with --from", ErrUnknownSource, strings.Join(names, " or "))
}
