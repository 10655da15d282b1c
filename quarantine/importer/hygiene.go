package importer

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// Limits bound what an export may hold. An export over any of them is
// refused whole, with an error wrapping [ErrRefused] that says which.
type Limits struct {
	MaxBytes      int64 // the export's size
	MaxEntries    int   // entries of a zip export
	MaxEntryBytes int64 // an entry's uncompressed size
	MaxRatio      int64 // an entry's uncompressed size over its compressed size
	MaxDepth      int   // nesting of a JSON record
	MaxTextBytes  int   // one memory's text
}

// DefaultLimits are the limits of an import: 1 GiB, 100,000 zip entries
// of at most 1 GiB each, compressed at most 200:1, JSON records nested at
// most 64 deep, memories of at most 64 KiB.
var DefaultLimits = Limits{MaxBytes: 1 << 30, MaxEntries: 100_000, MaxEntryBytes: 1 << 30, MaxRatio: 200,
	MaxDepth: 64, MaxTextBytes: 64 << 10}

// ErrRefused is wrapped by every refusal of a hostile or malformed export.
var ErrRefused = errors.New("export refused")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// IsZip reports whether head begins a zip archive.
func IsZip(head []byte) bool { return bytes.HasPrefix(head, []byte("PK\x03\x04")) }

// Zip is a zip export whose entries were checked: no path escapes the
// archive (zip-slip), none is absolute or a symlink, and the entry count,
// sizes and compression ratios are within the limits.
type Zip struct {
	r   *zip.Reader
	lim Limits
}

// OpenZip checks the zip export in and returns it.
func OpenZip(in *Input) (*Zip, error) {
	if in.Size > in.Limits.MaxBytes {
		return nil, refused("the export is %d bytes, over the limit of %d", in.Size, in.Limits.MaxBytes)
	}
	r, err := zip.NewReader(in.R, in.Size)
	if err != nil {
		return nil, refused("not a readable zip archive")
	}
	if len(r.File) > in.Limits.MaxEntries {
		return nil, refused("the archive has %d entries, over the limit of %d", len(r.File), in.Limits.MaxEntries)
	}
	for _, f := range r.File {
		name := f.Name
		clean := path.Clean(name)
		switch {
		case strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':'):
			return nil, refused("entry %q has an absolute path", name)
		case clean == ".." || strings.HasPrefix(clean, "../"):
			return nil, refused("entry %q points outside the archive", name)
		case f.Mode()&fs.ModeSymlink != 0:
			return nil, refused("entry %q is a symbolic link", name)
		case f.UncompressedSize64 > uint64(in.Limits.MaxEntryBytes):
			return nil, refused("entry %q is %d bytes, over the limit of %d", name, f.UncompressedSize64, in.Limits.MaxEntryBytes)
		case f.CompressedSize64 > 0 && f.UncompressedSize64/f.CompressedSize64 > uint64(in.Limits.MaxRatio):
			return nil, refused("entry %q expands %d times, over the limit of %d (a zip bomb?)", name, f.UncompressedSize64/f.CompressedSize64, in.Limits.MaxRatio)
		}
	}
	return &Zip{r: r, lim: in.Limits}, nil
}

// Files lists the archive's regular files, in the archive's order.
func (z *Zip) Files() []string {
	var out []string
	for _, f := range z.r.File {
		if !f.FileInfo().IsDir() {
			out = append(out, path.Clean(f.Name))
		}
	}
	return out
}

// Open opens the file name of the archive; what it reads is bounded by
// the entry's declared size, whatever the compressed stream holds.
func (z *Zip) Open(name string) (io.ReadCloser, error) {
	for _, f := range z.r.File {
		if path.Clean(f.Name) == name {
			rc, err := f.Open()
			if err != nil {
				return nil, refused("entry %q cannot be read", name)
			}
			return struct {
				io.Reader
				io.Closer
			}{&limitedEntry{r: rc, left: int64(f.UncompressedSize64), name: name}, rc}, nil
		}
	}
	return nil, fs.ErrNotExist
}

// Each calls fn with each file of the archive that pick picks, in the
// archive's order, and returns how many it picked.
func (z *Zip) Each(pick func(name string) bool, fn func(name string, r io.Reader) error) (int, error) {
	n := 0
	for _, name := range z.Files() {
		if !pick(name) {
			continue
		}
		n++
		f, err := z.Open(name)
		if err != nil {
			return n, err
		}
		err = fn(name, f)
		f.Close()
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// limitedEntry fails once an entry yields more than it declared.
type limitedEntry struct {
	r    io.Reader
	left int64
	name string
}

func (l *limitedEntry) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, refused("entry %q holds more than it declares", l.name)
	}
	return n, err
}

// Stream reads a JSON document from r and calls fn with each element of
// the array at the top level, or, when member is not "", of the array in
// the top-level object's member of that name (other members are skipped).
// Each element is checked against lim.MaxDepth before fn sees it; the
// document is never held whole.
func Stream(r io.Reader, member string, lim Limits, fn func(i int, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.UseNumber()
	if member != "" {
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for {
			tok, err := dec.Token()
			if err != nil {
				return refused("not JSON: %v", err)
			}
			if tok == json.Delim('}') {
				return refused("the export has no %q", member)
			}
			if tok == member {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return refused("not JSON: %v", err)
			}
			if err := CheckDepth(skip, lim.MaxDepth); err != nil {
				return err
			}
		}
	}
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if strings.Contains(err.Error(), "exceeded max depth") {
				return refused("record %d: JSON nested more than %d deep", i, lim.MaxDepth)
			}
			return refused("record %d is not JSON: %v", i, err)
		}
		if err := CheckDepth(raw, lim.MaxDepth); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if err := fn(i, raw); err != nil {
			return err
		}
	}
	return nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return refused("not JSON: %v", err)
	}
	if tok != d {
		return refused("the export is not a JSON %s", map[json.Delim]string{'[': "array", '{': "object"}[d])
	}
	return nil
}

// CheckDepth refuses a JSON text nested deeper than max.
func CheckDepth(raw []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			if depth++; depth > max {
				return refused("JSON nested more than %d deep", max)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// Strict decodes a record into v: unknown members are allowed (a source's
// format grows), but not a wrong type.
func Strict(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return refused("a record is malformed: %v", err)
	}
	return nil
}

// credential matches what looks like a secret: API keys and tokens of the
// usual providers, bearer tokens, JWTs, private keys, and "password: …"
// style assignments.
var credential = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\bsk-(?:ant-|proj-)?[a-z0-9_-]{20,}`,
	`\bgh[pousr]_[a-z0-9]{30,}`,
	`\bgithub_pat_[a-z0-9_]{30,}`,
	`\bAKIA[0-9A-Z]{16}\b`,
	`\bxox[abprs]-[a-z0-9-]{10,}`,
	`\bAIza[0-9a-z_-]{35}`,
	`\bglpat-[a-z0-9_-]{20,}`,
	`\bctxs?_[a-z0-9_-]{20,}`,
	`\bbearer\s+[a-z0-9._~+/-]{20,}=*`,
	`\beyJ[a-z0-9_-]{10,}\.eyJ[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}`,
	`-----BEGIN [A-Z ]*PRIVATE KEY-----`,
	`\b(?:password|passwd|pwd|api[_-]?key|secret|access[_-]?token|auth[_-]?token)\s*[:=]\s*\S{6,}`,
}, "|"))

// HasCredential reports whether text holds what looks like a credential.
func HasCredential(text string) bool { return credential.MatchString(text) }
