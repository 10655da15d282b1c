package importer

import (
	"errors"
	"strings"
	"testing"
)

// md is the extension of a note.
const md = ".md"

func TestBasicMemory(t *testing.T) {
	coffee := msFixture(t, "basic-memory/notes/coffee-brewing"+md)
	kb := zipOf(t, map[string]string{
		"notes/coffee-brewing" + md: string(coffee),
		"people/robin" + md:         string(msFixture(t, "basic-memory/people/robin"+md)),
		"ideas" + md:                string(msFixture(t, "basic-memory/ideas"+md)),
		"assets/cup.png":            "\x89PNG",
		".obsidian/app.json":        "{}",
	}, nil)
	const at = "2025-02-11T08:15:00Z"
	coffeeWants := []msWant{
		{value: "Coffee Brewing: Likes light roasts from Ethiopia #coffee (tasted at a café in Leeds)", key: "imported.basic-memory.preference.",
			assertion: "reported", at: at, evidence: []string{"basic-memory:tag/coffee", "basic-memory:note/notes/coffee-brewing",
				"basic-memory:line/15", "basic-memory:time/2025-02-11T09:15:00+01:00"}},
		{value: "Coffee Brewing: Brews with a V60 every morning", key: "imported.basic-memory.method.", assertion: "reported", at: at},
		{value: "Coffee Brewing: Keeps the grinder on the counter #gear", key: "imported.basic-memory.note.", evidence: []string{"basic-memory:tag/gear"}},
		{value: "Coffee Brewing pairs_well_with Dark Chocolate", key: "imported.basic-memory.relations.", assertion: "reported"},
		{value: "Coffee Brewing learned from Barista Course (2024)", key: "imported.basic-memory.relations.", at: at},
	}
	tests := []struct {
		name, file       string
		body             []byte
		seen, held, drop int
		wants            []msWant
	}{
		{"one note", "coffee-brewing" + md, coffee, 6, 5, 1, coffeeWants},
		{"a knowledge base", "kb.zip", kb, 7, 6, 3, append(coffeeWants, msWant{value: "robin: Works as a nurse", key: "imported.basic-memory.role.",
			assertion: "reported", at: "2026-01-02T03:04:05Z", evidence: []string{"basic-memory:file/people/robin" + md, "basic-memory:line/3"},
			not: []string{"basic-memory:note/", "basic-memory:time/"}})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum, docs, err := runAll(t, "", tc.file, tc.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Source != "basic-memory" || sum.Seen != tc.seen || sum.Held != tc.held || len(sum.Dropped) != tc.drop {
				t.Fatalf("summary = %+v; want basic-memory, %d seen, %d held, %d dropped", sum, tc.seen, tc.held, tc.drop)
			}
			for _, d := range sum.Dropped {
				if strings.Contains(d.Location+d.Reason, "abcdef") {
					t.Errorf("a drop quotes the credential: %+v", d)
				}
			}
			msCheck(t, docs, tc.wants)
			for _, d := range docs {
				v := d["value"].(string)
				for _, not := range []string{"filters", "transcript", "inside a code", "quoted", "Not A Relation", "Bare Link", "Kettles", "prose"} {
					if strings.Contains(v, not) {
						t.Errorf("held %q, which is not an observation or relation", v)
					}
				}
			}
		})
	}
}

func TestBasicMemoryHostile(t *testing.T) {
	note := string(msFixture(t, "basic-memory/people/robin"+md))
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"zip slip", zipOf(t, map[string]string{"../robin" + md: note}, nil), "outside the archive"},
		{"absolute path", zipOf(t, map[string]string{"/notes/robin" + md: note}, nil), "absolute path"},
		{"symlink", zipOf(t, map[string]string{"robin" + md: note}, map[string]string{"notes/link" + md: "/etc/passwd"}), "symbolic link"},
		{"zip bomb", zipOf(t, map[string]string{"big" + md: strings.Repeat("- [a] b\n", 4<<20)}, nil), "zip bomb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held := 0
			_, err := Run(t.Context(), basicMemory{}, inputOf("kb.zip", tc.body), nil, msNow(), 1,
				func(r quarantineRecords) error { held += len(r.Claims); return nil }, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || held != 0 {
				t.Fatalf("err = %v, held %d; want a refusal saying %q, nothing held", err, held, tc.want)
			}
		})
	}
	t.Run("a line over the limit", func(t *testing.T) {
		in := inputOf("n"+md, []byte("- [fact] "+strings.Repeat("x", 100)+"\n- [fact] short\n"))
		in.Limits.MaxTextBytes = 64
		sum, err := Run(t.Context(), basicMemory{}, in, nil, msNow(), 1, func(quarantineRecords) error { return nil }, nil)
		if err != nil || sum.Held != 1 || len(sum.Dropped) != 1 {
			t.Fatalf("summary %+v, err %v; want the long line dropped, the short held", sum, err)
		}
	})
}

func TestBasicMemoryDetect(t *testing.T) {
	for _, tc := range []struct {
		file, body string
		want       bool
	}{
		{"coffee" + md, "---\ntitle: C\npermalink: c\n---\n", true},
		{"notes" + md, "# Notes\n- [idea] Something\n", true},
		{"notes" + md, "# Notes\n- depends_on [[Other]]\n", true},
		{"CLAUDE" + md, "# Project\n- [rule] Use tabs\n", false},
		{"readme" + md, "# Readme\nJust prose, [a link](http://x).\n", false},
		{"notes.txt", "- [idea] Something\n", false},
	} {
		if got := (basicMemory{}).Detect(tc.file, []byte(tc.body)); got != tc.want {
			t.Errorf("Detect(%s, %q) = %v, want %v", tc.file, tc.body, got, tc.want)
		}
	}
}

// FuzzBasicMemory: no note makes the Basic Memory reader panic.
func FuzzBasicMemory(f *testing.F) {
	f.Add(msFixture(f, "basic-memory/notes/coffee-brewing"+md))
	f.Add(msFixture(f, "basic-memory/ideas"+md))
	f.Add([]byte("- [x] a\n- [(] b\n- t [[\n- \"q\" [[T]] (c) d\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		msFuzzRun(t, basicMemory{}, "n"+md, b)
	})
}
