package httpapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// wantRetry asserts that an answer is 429 rate_limited with a Retry-After
// of 1 to 60 seconds.
func wantRetry(t testing.TB, what string, status int, hdr http.Header, body map[string]any) {
	t.Helper()
	n, err := strconv.Atoi(hdr.Get("Retry-After"))
	if status != 429 || body["constraint"] != "rate_limited" || err != nil || n < 1 || n > 60 {
		t.Fatalf("%s = %d %v, Retry-After %q; want 429 rate_limited, Retry-After 1 to 60", what, status, body, hdr.Get("Retry-After"))
	}
}

// TestExchangeNoLockout: ID tokens forged to claim a recipient's subject
// slow down the connection that sends them (429 rate_limited with
// Retry-After once it has had ten refused in a minute), and never the
// recipient, whose valid token is exchanged from a connection of its own,
// whether the forger keeps its connection or reconnects for every token.
// That holds for forgeries the issuer signed too — a token it issued to
// another of its clients, an expired one — which anyone who has seen one
// may send. Once the minute has passed the forger's connection is heard
// again.
func TestExchangeNoLockout(t *testing.T) {
	e := newExchangeEnv(t)
	p := newProvider(t)
	e.trustID(p)
	const victim = "victim"
	forgeries := []struct {
		name  string
		forge func(now time.Time) string
	}{
		{"signed with a key the issuer never had", func(now time.Time) string {
			return p.sign(t, now, idToken{sub: victim, aud: []string{exchangeAudience}, rogue: true})
		}},
		{"issued to another client of the issuer", func(now time.Time) string {
			return p.sign(t, now, idToken{sub: victim, aud: []string{"another-app"}})
		}},
		{"expired", func(now time.Time) string {
			return p.sign(t, now, idToken{sub: victim, aud: []string{exchangeAudience}, expired: true})
		}},
		{"not signed", func(time.Time) string {
			return unsigned(map[string]any{"iss": p.srv.URL, "sub": victim, "aud": exchangeAudience})
		}},
	}
	for _, f := range forgeries {
		t.Run(f.name, func(t *testing.T) {
			e.t = t
			e.clock.Advance(2 * time.Minute) // a new window
			forger := e.connection(false)
			for i := range 10 {
				if status, body := forger.exchange(f.forge(e.clock.Now())); status != 401 || body["constraint"] != "unauthenticated" {
					t.Fatalf("forged token #%d = %d %v; want 401 unauthenticated", i+1, status, body)
				}
			}
			status, hdr, body := forger.exchangeHeader(f.forge(e.clock.Now()))
			wantRetry(t, "the eleventh forged token", status, hdr, body)
			// Its own connection waits even with a valid token.
			status, hdr, body = forger.exchangeHeader(p.sign(t, e.clock.Now(), idToken{sub: victim, aud: []string{exchangeAudience}}))
			wantRetry(t, "a valid token over the forger's connection", status, hdr, body)

			e.connection(false).mustExchange(p, victim)

			// Reconnecting for every token, each is refused as what it is.
			reconnecting := e.connection(true)
			for i := range 30 {
				if status, body := reconnecting.exchange(f.forge(e.clock.Now())); status != 401 || body["constraint"] != "unauthenticated" {
					t.Fatalf("forged token #%d over a new connection = %d %v; want 401 unauthenticated", i+1, status, body)
				}
			}
			e.connection(false).mustExchange(p, victim)

			e.clock.Advance(time.Minute)
			if status, body := forger.exchange(f.forge(e.clock.Now())); status != 401 || body["constraint"] != "unauthenticated" {
				t.Fatalf("a forged token a minute later = %d %v; want 401 unauthenticated", status, body)
			}
		})
	}
}
