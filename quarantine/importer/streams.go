package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// maxJSONLine is the longest record of a JSON-lines export; a longer line
// is refused.
const maxJSONLine = 16 << 20

// StreamMembers reads the JSON object at the top level of r and calls
// arrays[name] with each element of the member of that name, which must
// be an array (or null); the other members are skipped token by token,
// so that no member is ever held whole. Every element and every skipped
// member is checked against lim.MaxDepth.
func StreamMembers(r io.Reader, lim Limits, arrays map[string]func(i int, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return refused("not JSON: %v", err)
		}
		name, _ := tok.(string)
		fn, ok := arrays[name]
		if !ok {
			if err := skipValue(dec, lim.MaxDepth); err != nil {
				return err
			}
			continue
		}
		if err := streamArray(dec, name, lim, fn); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return refused("not JSON: %v", err)
	}
	return nil
}

// streamArray streams the array (or null) the decoder is at.
func streamArray(dec *json.Decoder, name string, lim Limits, fn func(i int, raw json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return refused("not JSON: %v", err)
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return refused("%q is not a JSON array", name)
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return refused("%s record %d is not JSON: %v", name, i, err)
		}
		if err := CheckDepth(raw, lim.MaxDepth); err != nil {
			return fmt.Errorf("%s record %d: %w", name, i, err)
		}
		if err := fn(i, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return refused("not JSON: %v", err)
	}
	return nil
}

// skipValue reads past the value the decoder is at, a token at a time.
func skipValue(dec *json.Decoder, maxDepth int) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return refused("not JSON: %v", err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			if depth++; depth > maxDepth {
				return refused("JSON nested more than %d deep", maxDepth)
			}
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// StreamJSONLines calls fn with each record of the JSON-lines document r
// (one JSON value a line; blank lines are skipped), each checked against
// lim.MaxDepth. A line that is not JSON, or longer than 16 MiB, refuses
// the export.
func StreamJSONLines(r io.Reader, lim Limits, fn func(i int, raw json.RawMessage) error) error {
	i := 0
	return eachLine(r, maxJSONLine, func(n int, line string, cut bool) error {
		if cut {
			return refused("line %d is longer than %d bytes", n, maxJSONLine)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return nil
		}
		if !json.Valid([]byte(line)) {
			return refused("line %d is not JSON", n)
		}
		if err := CheckDepth([]byte(line), lim.MaxDepth); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		i++
		return fn(i-1, json.RawMessage(line))
	})
}

// eachLine calls fn with each line of r (without its line ending), and
// its number from 1. A line longer than max is cut to max bytes, the rest
// skipped, and fn told so.
func eachLine(r io.Reader, max int, fn func(n int, line string, cut bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		cut, eof := false, false
		for {
			chunk, err := br.ReadSlice('\n')
			if len(buf)+len(chunk) > max {
				cut = true
				chunk = chunk[:max-min(len(buf), max)]
			}
			buf = append(buf, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			if errors.Is(err, ErrRefused) {
				return err
			}
			return refused("line %d cannot be read: %v", n, err)
		}
		line := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
		if !(eof && line == "" && !cut) {
			if err := fn(n, line, cut); err != nil {
				return err
			}
		}
		if eof {
			return nil
		}
	}
}

// Gunzip is r, gzip-compressed, decompressed: refused if it is not gzip,
// or once it yields more than max bytes.
func Gunzip(r io.Reader, max int64) (io.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, refused("not gzip-compressed: %v", err)
	}
	return &limitedEntry{r: zr, left: max, name: "the gzip-compressed stream"}, nil
}

// ZipHeadNames lists the entry names of the zip archive's local file
// headers found in head (the archive's first bytes): what [Source.Detect]
// can see of a zip export's content.
func ZipHeadNames(head []byte) []string {
	var names []string
	sig := []byte("PK\x03\x04")
	for i := 0; ; {
		j := bytes.Index(head[i:], sig)
		if j < 0 {
			return names
		}
		at := i + j
		if at+30 > len(head) {
			return names
		}
		n := int(binary.LittleEndian.Uint16(head[at+26:]))
		if at+30+n > len(head) {
			return names
		}
		names = append(names, path.Clean(string(head[at+30:at+30+n])))
		i = at + 30 + n
	}
}
