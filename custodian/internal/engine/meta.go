package engine

import (
	"encoding/binary"
	"errors"
	"time"
	"unique"
	"unsafe"
)

// Meta is the mutable part of a claim: its head version, status and
// persona associations. Content lives in immutable versions.
type Meta struct {
	ID        string   `json:"id"`
	Head      int      `json:"head"`
	Status    string   `json:"status"`
	Personas  []string `json:"personas"`
	CreatedAt string   `json:"created_at,omitempty"`
	// Origin is the bundle an adopted claim came from (bnd_…), so that a
	// summary of the same bundle adopted later may derive from it.
	Origin string `json:"origin,omitempty"`
	// DisputedAt is when the owner disputed the current version (nil: not
	// disputed). The head is then served with confirmation.status
	// "disputed"; the owner's next version, or withdrawing the dispute,
	// clears it.
	DisputedAt *time.Time `json:"disputed_at,omitempty"`

	// What the indexes sort and filter by, copied from the head version
	// (see the core's fill) so that the unlock reads the metas alone, and the view
	// needs no claim's content to find it. A store from before them has
	// none (HeadRev 0): the unlock reads the head and writes them.
	Key     string `json:"key,omitempty"`
	Subject string `json:"subject,omitempty"`
	Tier    string `json:"tier,omitempty"`
	Kind    string `json:"kind,omitempty"`
	HeadRev uint64 `json:"head_revision,omitempty"`
}

// InternMeta makes m's repeated strings share one copy each (see
// snapDecoder.meta, which interns the same fields).
func InternMeta(m *Meta) {
	internScalars(m)
	for i, p := range m.Personas {
		m.Personas[i] = Intern(p)
	}
}

// internScalars interns m's repeated strings but its personas, whose list
// a new record may share with the one it replaces (see NewRecord).
func internScalars(m *Meta) {
	m.Status, m.Subject, m.Tier, m.Kind = Intern(m.Status), Intern(m.Subject), Intern(m.Tier), Intern(m.Kind)
	m.Origin = Intern(m.Origin) // the bundle, archive or import adopted from: one for many claims
}

// Intern returns the canonical copy of s: the view holds a few distinct
// kinds, tiers, statuses, subjects and producers many times over.
func Intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// The claim metas snapshot's binary form: a chunk is SnapFormat, then
// metas one after another (AppendMeta).

// SnapFormat is the first byte of a chunk.
const SnapFormat = 1

// snapArena is the size of the blocks a ChunkDecoder copies strings into.
const snapArena = 64 << 10

// AppendMeta appends m's binary form: its fields in order, strings and
// lists length-prefixed, numbers as uvarints.
func AppendMeta(b []byte, m *Meta) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(m.ID)
	b = binary.AppendUvarint(b, uint64(m.Head))
	str(m.Status)
	b = binary.AppendUvarint(b, uint64(len(m.Personas)))
	for _, p := range m.Personas {
		str(p)
	}
	str(m.CreatedAt)
	str(m.Origin)
	if m.DisputedAt == nil {
		str("")
	} else {
		t, err := m.DisputedAt.MarshalBinary()
		if err != nil { // a time past year 9999 or with a fractional-minute zone: not made here
			t = nil
		}
		str(string(t))
	}
	str(m.Key)
	str(m.Subject)
	str(m.Tier)
	str(m.Kind)
	return binary.AppendUvarint(b, m.HeadRev)
}

// snapDecoder reads the metas of a chunk. The strings the view holds many
// times over (statuses, subjects, tiers, kinds, personas) are interned
// through a memo of its own, so that each costs one map lookup.
type snapDecoder struct {
	b     []byte
	err   error
	memo  map[string]string
	arena []byte // the block str copies into, with room after its length
}

var errSnapTruncated = errors.New("truncated")

func (d *snapDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errSnapTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *snapDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *snapDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errSnapTruncated)
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// str returns the next string, copied into the decoder's arena (see ChunkDecoder).
func (d *snapDecoder) str() string {
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(d.arena)-len(d.arena) {
		d.arena = make([]byte, 0, max(snapArena, len(b)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...) // within its capacity: never moves
	return unsafe.String(&d.arena[start], len(b))
}

func (d *snapDecoder) interned() string {
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	if s, ok := d.memo[string(b)]; ok {
		return s
	}
	s := Intern(string(b))
	d.memo[s] = s
	return s
}

// meta decodes the next meta into m.
func (d *snapDecoder) meta(m *Meta) {
	m.ID = d.str()
	m.Head = int(d.uvarint())
	m.Status = d.interned()
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each persona takes a byte at least
		d.fail(errSnapTruncated)
		return
	}
	m.Personas = make([]string, n) // empty, not nil: as the JSON metas have it
	for i := range m.Personas {
		m.Personas[i] = d.interned()
	}
	m.CreatedAt = d.str()
	m.Origin = d.interned()
	if t := d.bytes(); len(t) > 0 {
		at := new(time.Time)
		if err := at.UnmarshalBinary(t); err != nil {
			d.fail(err)
			return
		}
		m.DisputedAt = at
	}
	m.Key = d.str()
	m.Subject = d.interned()
	m.Tier = d.interned()
	m.Kind = d.interned()
	m.HeadRev = d.uvarint()
	if d.err == nil && (m.ID == "" || m.Head < 1 || m.HeadRev == 0) {
		d.fail(errors.New("a meta without its id, head or revision"))
	}
}

// ChunkDecoder reads the metas of one chunk. Its strings (ids, keys,
// times; the others are interned through memo) are copied into shared
// blocks of 64 KiB rather than allocated one by one.
type ChunkDecoder struct{ d snapDecoder }

// NewChunkDecoder starts decoding chunk, interning through memo (shared
// by the chunks of one load, on one goroutine).
func NewChunkDecoder(chunk []byte, memo map[string]string) (*ChunkDecoder, error) {
	if len(chunk) == 0 || chunk[0] != SnapFormat {
		return nil, errors.New("not a chunk of this version")
	}
	return &ChunkDecoder{snapDecoder{b: chunk[1:], memo: memo}}, nil
}

// More reports whether a meta is left.
func (d *ChunkDecoder) More() bool { return len(d.d.b) > 0 }

// Next decodes the next meta into m.
func (d *ChunkDecoder) Next(m *Meta) error {
	d.d.meta(m)
	return d.d.err
}

// Mark and Rewind drop the strings of the metas decoded after Mark (one
// the caller skips).
func (d *ChunkDecoder) Mark() int { return len(d.d.arena) }

// Rewind: see Mark.
func (d *ChunkDecoder) Rewind(mark int) { d.d.arena = d.d.arena[:mark] }
