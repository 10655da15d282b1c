package limits

import (
	"fmt"
	"testing"
	"time"
)

// TestFailuresBounded: a limiter remembers at most its cap of keys,
// forgetting the one that failed least recently; a flood of new keys never
// makes another key wait, and a key's own failures still do.
func TestFailuresBounded(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := NewFailuresCap(3, time.Minute, 100)
	for range 3 {
		f.Note("mallory", now)
	}
	if w := f.Wait("mallory", now); w != time.Minute {
		t.Fatalf("wait(mallory) after 3 failures = %v; want %v", w, time.Minute)
	}
	for i := range 10_000 {
		k := fmt.Sprintf("k%d", i)
		f.Note(k, now)
		f.Note(k, now)
		if f.tracked() > 100 {
			t.Fatalf("after %d keys, %d tracked; want at most 100", i+1, f.tracked())
		}
	}
	if w := f.Wait("alice", now); w != 0 {
		t.Fatalf("wait(alice) after a flood of other keys = %v; want 0", w)
	}
	// mallory, least recently failed, was forgotten first.
	if w := f.Wait("mallory", now); w != 0 {
		t.Fatalf("wait(mallory) after 10,000 newer keys = %v; want 0 (forgotten)", w)
	}
	// A key's failures are kept to the limit, however many it notes.
	for i := range 1000 {
		f.Note("bob", now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(f.m["bob"].Value.(*failureKey).times); n != 3 {
		t.Fatalf("bob keeps %d failures; want 3", n)
	}
	if w := f.Wait("bob", now.Add(time.Second)); w != time.Minute-(time.Second-997*time.Millisecond) {
		t.Fatalf("wait(bob) = %v; want the window from his third-newest failure", w)
	}
	if w := f.Wait("bob", now.Add(2*time.Minute)); w != 0 || f.m["bob"] != nil {
		t.Fatalf("wait(bob) after the window = %v, still tracked %v; want 0, forgotten", w, f.m["bob"] != nil)
	}
}
