package clientvault

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHeaderRoundTrip(t *testing.T) {
	k := bytes.Repeat([]byte{1}, 32)
	h := Header(k)
	if want := "v=1, kid=:" + Kid(k) + ":"; h != want {
		t.Fatalf("Header = %q; want %q (the protocol's form)", h, want)
	}
	kid, err := ParseHeader([]string{h})
	if err != nil || kid != Kid(k) {
		t.Fatalf("ParseHeader(%q) = %q, %v; want %q", h, kid, err, Kid(k))
	}
	if len(Bearer(k)) != 43 {
		t.Fatalf("Bearer is %d characters; want 43", len(Bearer(k)))
	}
}

func TestParseHeader(t *testing.T) {
	kid := Kid([]byte("k"))
	tests := []struct {
		name   string
		values []string
		ok     bool
	}{
		{"the protocol's form", []string{"v=1, kid=:" + kid + ":"}, true},
		{"members in another order, unknown ones ignored", []string{"x=?1, kid=:" + kid + ":, v=1"}, true},
		{"split over two header lines", []string{"v=1", "kid=:" + kid + ":"}, true},
		{"another version", []string{"v=2, kid=:" + kid + ":"}, false},
		{"a kid that is not 32 bytes", []string{"v=1, kid=:AAAA:"}, false},
		{"a kid as a string", []string{`v=1, kid="` + kid + `"`}, false},
		{"no kid", []string{"v=1"}, false},
		{"not a dictionary", []string{"v=1, kid=:" + kid}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHeader(tt.values)
			if (err == nil) != tt.ok || (tt.ok && got != kid) {
				t.Fatalf("ParseHeader(%q) = %q, %v; want ok=%v", tt.values, got, err, tt.ok)
			}
		})
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	k, created, err := LoadKey(dir, "http://127.0.0.1:7200", "default")
	if err != nil || !created || len(k) != 32 {
		t.Fatalf("LoadKey = %d bytes, %v, %v", len(k), created, err)
	}
	fi, err := os.Stat(KeyPath(dir, "http://127.0.0.1:7200", "default"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	again, created, err := LoadKey(dir, "http://127.0.0.1:7200", "default")
	if err != nil || created || !bytes.Equal(again, k) {
		t.Fatal("LoadKey did not read back the same key")
	}
	other, _, _ := LoadKey(dir, "http://127.0.0.1:7200", "work")
	elsewhere, _, _ := LoadKey(dir, "https://phc.example", "default")
	if bytes.Equal(other, k) || bytes.Equal(elsewhere, k) {
		t.Fatal("two profiles or two origins share a key")
	}
}

func TestReplace(t *testing.T) {
	var call any
	json.Unmarshal([]byte(`{"file_path": "/tmp/form.txt", "content": "Passport: ⟦PASSPORT_1:X1•••89⟧, mail ⟦EMAIL_2:ma•••@example.com⟧, pin ⟦PIN_1⟧ ⟦PASSPORT_1:X1•••89⟧", "n": 3}`), &call)
	if got, want := Keys(call), []string{"EMAIL_2", "PASSPORT_1", "PIN_1"}; !cmp.Equal(got, want) {
		t.Fatalf("Keys = %v; want %v", got, want)
	}
	values := map[string]string{"PASSPORT_1": "X1234589", "EMAIL_2": "maria@example.com", "PIN_1": "1234"}
	out, bad := Replace(call, values)
	if bad != "" {
		t.Fatalf("Replace refused %s", bad)
	}
	want := map[string]any{"file_path": "/tmp/form.txt", "content": "Passport: X1234589, mail maria@example.com, pin 1234 X1234589", "n": float64(3)}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Fatalf("Replace (-want +got):\n%s", diff)
	}
	// A display that does not match the value names another value.
	values["PASSPORT_1"] = "Y9876543"
	if out, bad := Replace(call, values); bad != "PASSPORT_1" || !cmp.Equal(out, call) {
		t.Fatalf("Replace with a mismatched display = %v, %q; want the call unchanged and PASSPORT_1", out, bad)
	}
}

func TestSeenNeverMovesLater(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 10, 16, 8, 58, 12, 0, time.UTC)
	s, err := Seen(dir, "http://127.0.0.1:7200", "default", []string{"EMAIL_1"}, t0)
	if err != nil || !s["EMAIL_1"].Equal(t0) {
		t.Fatalf("Seen = %v, %v", s, err)
	}
	s, err = Seen(dir, "http://127.0.0.1:7200", "default", []string{"EMAIL_1", "EMAIL_2"}, t0.Add(time.Hour))
	if err != nil || !s["EMAIL_1"].Equal(t0) || !s["EMAIL_2"].Equal(t0.Add(time.Hour)) {
		t.Fatalf("Seen later = %v, %v; the first sighting must stay", s, err)
	}
}
