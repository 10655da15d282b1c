package importer

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/quarantine"
)

// inputOf is an Input over b.
func inputOf(name string, b []byte) *Input {
	return &Input{Name: name, R: bytes.NewReader(b), Size: int64(len(b)), Limits: DefaultLimits}
}

// runAll imports b from src (name "" detects it) and returns the summary
// and the claim documents held.
func runAll(t *testing.T, src, name string, b []byte, m Map) (Summary, []map[string]any, error) {
	t.Helper()
	in := inputOf(name, b)
	s, err := Lookup(src, in)
	if err != nil {
		return Summary{}, nil, err
	}
	var docs []map[string]any
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sum, err := Run(context.Background(), s, in, m, now, 2, func(recs quarantine.Records) error {
		for _, c := range recs.Claims {
			var d map[string]any
			if err := json.Unmarshal(c.Versions[0], &d); err != nil {
				t.Fatal(err)
			}
			docs = append(docs, d)
		}
		return nil
	}, nil)
	return sum, docs, err
}

func TestMem0(t *testing.T) {
	raw, err := os.ReadFile("testdata/mem0/results.json")
	if err != nil {
		t.Fatal(err)
	}
	sum, docs, err := runAll(t, "", "export.json", raw, Map{"travel": {Key: "preferences.travel", Kind: "preference"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Source != "mem0" || sum.Seen != 4 || sum.Held != 2 || len(sum.Dropped) != 2 {
		t.Fatalf("summary = %+v; want mem0, 4 seen, 2 held, 2 dropped", sum)
	}
	for _, d := range sum.Dropped {
		if strings.Contains(d.Location+d.Reason, "sk-proj") {
			t.Errorf("a drop quotes the credential: %+v", d)
		}
	}
	first, second := docs[0], docs[1]
	tests := []struct{ name, got, want string }{
		{"stated → reported", first["assertion"].(string), "reported"},
		{"mapped key", first["key"].(string), "preferences.travel.5b1c3c0e-1f2a-4c7e-9a61-0a1d2e3f4a5b"},
		{"mapped kind", first["kind"].(string), "preference"},
		{"UTC time", first["recorded_at"].(string), "2025-03-04T18:11:12.123456Z"},
		{"inferred", second["assertion"].(string), "inferred"},
		{"unmapped key", second["key"].(string), "imported.mem0.food.6c2d4d1f-2a3b-4d8f-8b72-1b2e3f4a5b6c"},
		{"epoch float", second["recorded_at"].(string), "2025-03-04T10:00:00.5Z"},
		{"producer", first["producer"].(map[string]any)["authenticated"].(map[string]any)["kind"].(string), "owner"},
		{"reported app", second["producer"].(map[string]any)["reported"].(map[string]any)["app"].(string), "mem0"},
		{"reported agent", second["producer"].(map[string]any)["reported"].(map[string]any)["agent"].(string), "chef-bot"},
		{"unconfirmed", first["confirmation"].(map[string]any)["status"].(string), "unconfirmed"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	ev, _ := json.Marshal(second["evidence"])
	for _, want := range []string{"mem0:memory/6c2d4d1f", "mem0:user/sam", "mem0:agent/chef-bot", "mem0:state/paused", "mem0:time/1741082400.5"} {
		if !strings.Contains(string(ev), want) {
			t.Errorf("evidence %s lacks %s", ev, want)
		}
	}
}

func TestHostileExports(t *testing.T) {
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"deep nesting", []byte(`{"results": [{"id": "x", "memory": "m", "user_id": "u", "metadata": ` + deep + `}]}`), "nested more than"},
		{"not JSON", []byte(`{"results": [{"id": "x", "memory": "m", "user_id": "u"},`), "not JSON"},
		{"zip slip", zipOf(t, map[string]string{"../evil.json": "[]"}, nil), "outside the archive"},
		{"absolute path", zipOf(t, map[string]string{"/etc/passwd": "x"}, nil), "absolute path"},
		{"symlink", zipOf(t, map[string]string{"memories.json": "[]"}, map[string]string{"link": "/etc/passwd"}), "symbolic link"},
		{"zip bomb", zipOf(t, map[string]string{"memories.json": strings.Repeat(" ", 50<<20)}, nil), "zip bomb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := inputOf("export", tc.body)
			var err error
			if IsZip(tc.body) {
				_, err = OpenZip(in)
			} else {
				_, _, err = runAll(t, "mem0", "export.json", tc.body, nil)
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want a refusal saying %q", err, tc.want)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		in := inputOf("export.json", []byte(`[]`))
		in.Limits.MaxBytes = 1
		s, _ := Lookup("mem0", in)
		if _, err := Run(context.Background(), s, in, nil, time.Now(), 10, func(quarantine.Records) error { return nil }, nil); !errors.Is(err, ErrRefused) {
			t.Fatalf("err = %v; want a refusal", err)
		}
	})
	t.Run("nothing partial", func(t *testing.T) {
		body := []byte(`[{"id": "a", "memory": "one", "user_id": "u"}, {"id": "b", "memory": "two", "user_id": "u"}, {"id": "c", "memory": 3}]`)
		held := 0
		in := inputOf("x.json", body)
		s, _ := Lookup("mem0", in)
		_, err := Run(context.Background(), s, in, nil, time.Now(), 1, func(r quarantine.Records) error { held += len(r.Claims); return nil }, nil)
		if !errors.Is(err, ErrRefused) || held != 0 {
			t.Fatalf("err = %v, held %d; want a refusal before anything is held", err, held)
		}
	})
}

// zipOf is a zip archive of files, and of symlinks (name → target).
func zipOf(t *testing.T, files, links map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		h := &zip.FileHeader{Name: name, Method: zip.Store}
		h.SetMode(os.ModeSymlink | 0o777)
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(target)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCredentials(t *testing.T) {
	for _, s := range []string{"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAA", "ghp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AKIAABCDEFGHIJKLMNOP",
		"password: hunter22", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "-----BEGIN OPENSSH PRIVATE KEY-----",
		"ctxs_AAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if !HasCredential(s) {
			t.Errorf("HasCredential(%q) = false", s)
		}
	}
	for _, s := range []string{"Prefers tea", "My password manager is 1Password", "skiing in March"} {
		if HasCredential(s) {
			t.Errorf("HasCredential(%q) = true", s)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   any
		want string
		ok   bool
	}{
		{"2025-03-04T10:11:12Z", "2025-03-04T10:11:12Z", true},
		{"2025-03-04 10:11:12", "2025-03-04T10:11:12Z", true},
		{json.Number("1741082400"), "2025-03-04T10:00:00Z", true},
		{json.Number("1741082400123"), "2025-03-04T10:00:00.123Z", true},
		{"2025-03-04", "2025-03-04T00:00:00Z", true},
		{nil, "", false},
		{"yesterday", "", false},
	}
	for _, tc := range tests {
		got, _, ok := ParseTime(tc.in)
		if ok != tc.ok || (ok && got.Format(time.RFC3339Nano) != tc.want) {
			t.Errorf("ParseTime(%v) = %v, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzMem0: no export makes the mem0 reader panic, and every claim it
// yields is one version of valid JSON.
func FuzzMem0(f *testing.F) {
	raw, err := os.ReadFile("testdata/mem0/results.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`[{"id": 1}]`))
	f.Add([]byte(`{"memories": [{"text": "x", "created_at": 1e300}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := inputOf("x.json", b)
		_, _ = Run(context.Background(), mem0{}, in, nil, time.Now(), 3, func(r quarantine.Records) error {
			for _, c := range r.Claims {
				if len(c.Versions) != 1 || !json.Valid(c.Versions[0]) {
					t.Fatalf("claim %+v", c)
				}
			}
			return nil
		}, nil)
	})
}
