package importer

import (
	"bufio"
	"encoding/json"
	"io"
	"path"
	"strings"
	"time"
)

// zipHeadHas reports whether one of names has one of bases as its last
// element, or begins with (or holds a folder named by) one of prefixes
// ("projects/").
func zipHeadHas(names []string, bases []string, prefixes ...string) bool {
	for _, n := range names {
		b := path.Base(strings.TrimSuffix(n, "/"))
		for _, want := range bases {
			if strings.EqualFold(b, want) {
				return true
			}
		}
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) || strings.Contains(n, "/"+p) {
				return true
			}
		}
	}
	return false
}

// modified is when the archive says its file name was last changed (zero
// when it does not say, or says the MS-DOS epoch).
func (z *Zip) modified(name string) time.Time {
	for _, f := range z.r.File {
		if path.Clean(f.Name) == name {
			if t := f.Modified.UTC(); t.Year() > 1980 {
				return t
			}
			return time.Time{}
		}
	}
	return time.Time{}
}

// streamOneOrMany calls fn with each element of a JSON array read from r,
// or with the JSON object r holds when it is one object (a file holding a
// single record). Elements are streamed and checked as [Stream] does.
func streamOneOrMany(r io.Reader, lim Limits, fn func(i int, raw json.RawMessage) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		c, err := br.Peek(1)
		if err != nil {
			return refused("not JSON: %v", err)
		}
		if c[0] == ' ' || c[0] == '\t' || c[0] == '\n' || c[0] == '\r' {
			_, _ = br.ReadByte()
			continue
		}
		if c[0] != '{' {
			return Stream(br, "", lim, fn)
		}
		break
	}
	dec := json.NewDecoder(br)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if strings.Contains(err.Error(), "exceeded max depth") {
			return refused("JSON nested more than %d deep", lim.MaxDepth)
		}
		return refused("not JSON: %v", err)
	}
	if err := CheckDepth(raw, lim.MaxDepth); err != nil {
		return err
	}
	return fn(0, raw)
}
