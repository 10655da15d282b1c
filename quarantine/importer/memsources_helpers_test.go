package importer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// msFixture reads testdata/<name>.
func msFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// msGzip is b gzip-compressed.
func msGzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// msDoc is the claim document of docs whose value is value (nil if none).
func msDoc(docs []map[string]any, value string) map[string]any {
	for _, d := range docs {
		if d["value"] == value {
			return d
		}
	}
	return nil
}

// msEvidence is d's evidence refs, as one string.
func msEvidence(d map[string]any) string {
	var refs []string
	ev, _ := d["evidence"].([]any)
	for _, e := range ev {
		if m, ok := e.(map[string]any); ok {
			refs = append(refs, m["ref"].(string))
		}
	}
	return strings.Join(refs, " ")
}

// msAgent is d's reported agent.
func msAgent(d map[string]any) string {
	r, _ := d["producer"].(map[string]any)["reported"].(map[string]any)
	s, _ := r["agent"].(string)
	return s
}

// msWant is what a claim held from a fixture must be.
type msWant struct {
	value, key, assertion, at, agent string   // a key ending in "." is a prefix
	evidence                         []string // refs it must have
	not                              []string // nor these
}

// msCheck checks docs against wants.
func msCheck(t *testing.T, docs []map[string]any, wants []msWant) {
	t.Helper()
	for _, w := range wants {
		d := msDoc(docs, w.value)
		if d == nil {
			t.Errorf("no claim of %q among %d", w.value, len(docs))
			continue
		}
		for _, c := range []struct{ what, got, want string }{
			{"key", d["key"].(string), w.key}, {"assertion", d["assertion"].(string), w.assertion},
			{"recorded_at", d["recorded_at"].(string), w.at}, {"agent", msAgent(d), w.agent},
			{"confirmation", d["confirmation"].(map[string]any)["status"].(string), "unconfirmed"},
		} {
			if c.want != "" && c.got != c.want && !(strings.HasSuffix(c.want, ".") && strings.HasPrefix(c.got, c.want)) {
				t.Errorf("%q: %s = %q, want %q", w.value, c.what, c.got, c.want)
			}
		}
		ev := msEvidence(d)
		for _, e := range w.evidence {
			if !strings.Contains(ev, e) {
				t.Errorf("%q: evidence %s lacks %s", w.value, ev, e)
			}
		}
		for _, e := range w.not {
			if strings.Contains(ev, e) {
				t.Errorf("%q: evidence %s has %s", w.value, ev, e)
			}
		}
	}
}

// msFuzzRun runs src over b and fails on a claim that is not one version
// of valid JSON.
func msFuzzRun(t *testing.T, src Source, name string, b []byte) {
	in := inputOf(name, b)
	in.Limits.MaxEntryBytes = 1 << 20
	_, _ = Run(t.Context(), src, in, nil, msNow(), 3, func(r quarantine.Records) error {
		for _, c := range r.Claims {
			if len(c.Versions) != 1 || !json.Valid(c.Versions[0]) {
				t.Fatalf("claim %+v", c)
			}
		}
		return nil
	}, nil)
}

func msNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

type quarantineRecords = quarantine.Records
