package limits

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// CoalesceWindow is how long a window of a Coalescer lasts.
const CoalesceWindow = time.Minute

// maxCoalesceKeys bounds the keys a Coalescer tracks at once.
const maxCoalesceKeys = 1024

// Coalescer counts refusals per key (a caller, an operation and a
// constraint), so that their receipts grow with windows, not requests: the
// first refusal of a key in a window of CoalesceWindow gets a receipt of
// its own, the rest of that window are only counted, and their count comes
// back once, as a Window, when the window has closed — at the next refusal
// of any key after it, or at a Flush. Past maxCoalesceKeys open windows a
// refusal of a new key is counted in one window of its own (key ""), held
// by the first of them. The zero Coalescer is ready to use.
type Coalescer[T any] struct {
	mu   sync.Mutex
	m    map[string]*Window[T]
	next time.Time // the earliest end of an open window
}

// Window is a key's refusals of one window after its first: Count of
// them, between Start (the first's time) and End; Of is what the first
// refusal said of them all (the receipt to write the count in).
type Window[T any] struct {
	Key        string
	Start, End time.Time
	Count      int
	Of         T
}

// Note counts a refusal of key at now, of which of says what a count
// receipt says. own is true for the first of its window, which gets a
// receipt of its own; closed are the windows that closed by now with
// refusals counted in them, oldest first.
func (c *Coalescer[T]) Note(key string, now time.Time, of T) (own bool, closed []Window[T]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	closed = c.sweep(now, false)
	if c.m == nil {
		c.m = make(map[string]*Window[T])
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= maxCoalesceKeys {
		key = ""
	}
	if w, ok := c.m[key]; ok {
		w.Count++
		return false, closed
	}
	w := &Window[T]{Key: key, Start: now, End: now.Add(CoalesceWindow), Of: of}
	c.m[key] = w
	if c.next.IsZero() || w.End.Before(c.next) {
		c.next = w.End
	}
	return true, closed
}

// Flush ends every window now, open or not, and returns those with
// refusals counted in them (a lock or a stop: nothing counted is lost).
func (c *Coalescer[T]) Flush(now time.Time) []Window[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sweep(now, true)
}

// Pending reports whether any window has refusals counted in it.
func (c *Coalescer[T]) Pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.m {
		if w.Count > 0 {
			return true
		}
	}
	return false
}

// sweep forgets the windows closed by now (all of them with all) and
// returns those with refusals counted in them, oldest first. Callers hold
// c.mu.
func (c *Coalescer[T]) sweep(now time.Time, all bool) []Window[T] {
	if !all && (c.next.IsZero() || now.Before(c.next)) {
		return nil
	}
	var out []Window[T]
	c.next = time.Time{}
	for k, w := range c.m {
		if !all && now.Before(w.End) {
			if c.next.IsZero() || w.End.Before(c.next) {
				c.next = w.End
			}
			continue
		}
		if all && now.Before(w.End) {
			w.End = now
		}
		if w.Count > 0 {
			out = append(out, *w)
		}
		delete(c.m, k)
	}
	sortWindows(out)
	return out
}

// sortWindows orders ws by start, then key.
func sortWindows[T any](ws []Window[T]) {
	slices.SortFunc(ws, func(a, b Window[T]) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}
