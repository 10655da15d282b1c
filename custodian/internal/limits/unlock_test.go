package limits

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testDigest is a digest for the tests: keys starting "bad" are malformed.
func testDigest(k string) ([32]byte, error) {
	if strings.HasPrefix(k, "bad") {
		return [32]byte{}, errors.New("malformed")
	}
	return sha256.Sum256([]byte(k)), nil
}

// TestUnlock: an attempt is classed by its Secret Key before any
// derivation, and failures count where they can slow only their sender:
// a wrong key per host, a derivation per connection, unproven derivations
// together only while a hint lets the owner's go ahead. In no state do the
// attacker's failures refuse the owner's attempt from another connection.
func TestUnlock(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	attacker := Source{addr: "127.0.0.1:40000"}
	reconnecting := func(i int) Source { return Source{addr: "127.0.0.1:" + strconv.Itoa(41000+i)} }
	owner := Source{addr: "127.0.0.1:50000"}
	type step struct {
		src    Source
		key    string
		fail   bool // the derivation finds the credentials wrong
		derive bool
		wait   bool
	}
	cases := []struct {
		name   string
		hint   string
		proved bool // an unlock with "right" has succeeded
		steps  func() []step
	}{
		{name: "proved: wrong keys refused without deriving, per host", proved: true, steps: func() []step {
			var s []step
			for i := range 5 {
				s = append(s, step{src: reconnecting(i), key: "wrong"})
			}
			return append(s,
				step{src: reconnecting(5), key: "bad-malformed", wait: true},
				step{src: owner, key: "wrong", wait: true},   // the host is slowed …
				step{src: owner, key: "right", derive: true}) // … never the key's holder
		}},
		{name: "proved: wrong passwords with the key, per connection", proved: true, steps: func() []step {
			var s []step
			for range 5 {
				s = append(s, step{src: attacker, key: "right", derive: true, fail: true})
			}
			return append(s, step{src: attacker, key: "right", wait: true}, step{src: owner, key: "right", derive: true})
		}},
		{name: "hint: other keys derived, five failures in all", hint: "right", steps: func() []step {
			var s []step
			for i := range 5 {
				s = append(s, step{src: reconnecting(i), key: "wrong", derive: true, fail: true})
			}
			return append(s, step{src: reconnecting(5), key: "wrong", wait: true}, step{src: owner, key: "right", derive: true})
		}},
		{name: "hint: malformed keys refused without deriving", hint: "right", steps: func() []step {
			return []step{{src: attacker, key: "bad"}, {src: owner, key: "right", derive: true}}
		}},
		{name: "no key known: every attempt derived, per connection", steps: func() []step {
			var s []step
			for range 5 {
				s = append(s, step{src: attacker, key: "wrong", derive: true, fail: true})
			}
			s = append(s, step{src: attacker, key: "right", wait: true})
			for i := range 10 { // a process that reconnects is bounded by the derivations
				s = append(s, step{src: reconnecting(i), key: "wrong", derive: true, fail: true})
			}
			return append(s, step{src: owner, key: "right", derive: true})
		}},
		{name: "in process", steps: func() []step {
			var s []step
			for range 5 {
				s = append(s, step{key: "wrong", derive: true, fail: true})
			}
			return append(s, step{key: "right", wait: true})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := NewUnlock(5, time.Minute, testDigest, c.hint)
			if c.proved {
				a, derive, wait := u.Begin(owner, "right", now)
				if !derive || wait != 0 {
					t.Fatalf("first unlock: derive %v, wait %v", derive, wait)
				}
				a.Succeeded()
			}
			for i, s := range c.steps() {
				a, derive, wait := u.Begin(s.src, s.key, now)
				if derive != s.derive || (wait > 0) != s.wait {
					t.Fatalf("step %d (%s from %s): derive %v, wait %v; want derive %v, wait %v", i, s.key, s.src.Conn(), derive, wait, s.derive, s.wait)
				}
				if s.wait && wait > time.Minute {
					t.Errorf("step %d: wait %v; want at most the window", i, wait)
				}
				if derive && s.fail {
					a.Failed(now)
				}
			}
			// A minute on, the window is empty again.
			if _, derive, wait := u.Begin(attacker, "right", now.Add(time.Minute)); !derive || wait != 0 {
				t.Errorf("a minute on: derive %v, wait %v; want a derivation", derive, wait)
			}
		})
	}
}

// TestSecrets: wrong secrets slow the connection that sends them, under
// the name (10 a window) and under any names (100), and no other.
func TestSecrets(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := NewSecrets(10, time.Minute)
	attacker, app := Source{addr: "127.0.0.1:40000"}, Source{addr: "127.0.0.1:50000"}
	for range 10 {
		s.Note(attacker, "app", now)
	}
	if w := s.Wait(attacker, "app", now); w != time.Minute {
		t.Errorf("Wait(attacker, app) after 10 wrong = %v; want a minute", w)
	}
	if w := s.Wait(app, "app", now); w != 0 {
		t.Errorf("Wait(app, app) after another's 10 wrong = %v; want 0", w)
	}
	if w := s.Wait(attacker, "other", now); w != 0 {
		t.Errorf("Wait(attacker, other) = %v; want 0 (another name)", w)
	}
	for i := range 90 {
		s.Note(attacker, strings.Repeat("x", i+1), now)
	}
	if w := s.Wait(attacker, "other", now); w != time.Minute {
		t.Errorf("Wait(attacker, other) after 100 wrong under any names = %v; want a minute", w)
	}
	if w := s.Wait(app, "other", now); w != 0 {
		t.Errorf("Wait(app, other) = %v; want 0", w)
	}
}

// TestSource: a request's source is its connection, and its host; an
// in-process call's is "local"; the context carries it.
func TestSource(t *testing.T) {
	for _, c := range []struct {
		ctx        context.Context
		conn, host string
	}{
		{context.Background(), "local", "local"},
		{WithSource(context.Background(), "127.0.0.1:4242"), "conn 127.0.0.1:4242", "host 127.0.0.1"},
		{WithSource(context.Background(), "[::1]:4242"), "conn [::1]:4242", "host ::1"},
		{WithSource(context.Background(), "@"), "conn @", "host @"},
	} {
		s := SourceOf(c.ctx)
		if s.Conn() != c.conn || s.Host() != c.host {
			t.Errorf("SourceOf(%v) = %q, %q; want %q, %q", c.ctx, s.Conn(), s.Host(), c.conn, c.host)
		}
	}
}
