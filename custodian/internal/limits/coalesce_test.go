package limits

import (
	"testing"
	"time"
)

// TestCoalescer: the first refusal of a key in a window is its own, the
// rest are counted and come back once the window has closed — at the next
// refusal of any key, or at a Flush, which also ends the open windows.
func TestCoalescer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type note struct {
		key    string
		at     time.Duration // after t0
		own    bool
		closed map[string]int // key → count of the windows it closes
	}
	tests := []struct {
		name  string
		notes []note
		flush map[string]int // what a Flush at the last note returns
	}{
		{"one refusal", []note{{"a", 0, true, nil}}, map[string]int{}},
		{"a minute's refusals counted", []note{
			{"a", 0, true, nil}, {"a", time.Second, false, nil}, {"a", 59 * time.Second, false, nil},
			{"a", time.Minute, true, map[string]int{"a": 2}},
		}, map[string]int{}},
		{"keys apart", []note{
			{"a", 0, true, nil}, {"b", 0, true, nil}, {"a", time.Second, false, nil},
			{"b", 2 * time.Second, false, nil}, {"b", 3 * time.Second, false, nil},
		}, map[string]int{"a": 1, "b": 2}},
		{"another key closes a window", []note{
			{"a", 0, true, nil}, {"a", time.Second, false, nil},
			{"b", 2 * time.Minute, true, map[string]int{"a": 1}},
		}, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Coalescer[string]
			for i, n := range tt.notes {
				own, closed := c.Note(n.key, t0.Add(n.at), "of "+n.key)
				got := map[string]int{}
				for _, w := range closed {
					got[w.Key] = w.Count
					if w.Of != "of "+w.Key || !w.End.Equal(w.Start.Add(CoalesceWindow)) {
						t.Fatalf("note %d: window %+v", i, w)
					}
				}
				if own != n.own || len(got) != len(n.closed) {
					t.Fatalf("note %d = %v, %v; want %v, %v", i, own, got, n.own, n.closed)
				}
				for k, v := range n.closed {
					if got[k] != v {
						t.Fatalf("note %d closed %v; want %v", i, got, n.closed)
					}
				}
			}
			wantPending := len(tt.flush) > 0
			if c.Pending() != wantPending {
				t.Fatalf("Pending = %v; want %v", c.Pending(), wantPending)
			}
			ws := c.Flush(t0.Add(tt.notes[len(tt.notes)-1].at))
			if len(ws) != len(tt.flush) {
				t.Fatalf("Flush = %+v; want %v", ws, tt.flush)
			}
			for _, w := range ws {
				if tt.flush[w.Key] != w.Count {
					t.Fatalf("Flush = %+v; want %v", ws, tt.flush)
				}
			}
			if c.Pending() {
				t.Fatal("Pending after Flush")
			}
		})
	}
}

// TestCoalescerBounded: past maxCoalesceKeys open windows, new keys share
// one window, so the receipts stay bounded however many keys a caller
// makes up.
func TestCoalescerBounded(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var c Coalescer[int]
	own := 0
	for i := range maxCoalesceKeys + 500 {
		if o, _ := c.Note(string(rune('a'+i%26))+time.Duration(i).String(), t0, i); o {
			own++
		}
	}
	if own != maxCoalesceKeys+1 {
		t.Fatalf("%d own receipts; want %d", own, maxCoalesceKeys+1)
	}
	ws := c.Flush(t0)
	if len(ws) != 1 || ws[0].Key != "" || ws[0].Count != 499 {
		t.Fatalf("Flush = %+v; want the shared window, 499 counted", ws)
	}
}
