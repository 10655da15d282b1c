package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phc-project/phc/internal/vault"
)

// The tests of this file are about lock-outs: what one local process can
// make the custodian refuse to another. Each sends the attacker's
// requests and the victim's over real sockets of their own, as two
// processes do (see connection).

// connection is a view of h whose requests go over connections of their
// own: kept alive (one process's client) or, with fresh, a new one for
// every request (a process that reconnects each time). Never stop it.
func connection(h *harness, fresh bool) *harness {
	v := *h
	v.http = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxConnsPerHost: 1, DisableKeepAlives: fresh}}
	h.t.Cleanup(v.http.CloseIdleConnections)
	return &v
}

// wantRetry asserts that resp answered 429 rate_limited with a Retry-After
// of 1 to max seconds.
func wantRetry(t testing.TB, what string, status int, hdr http.Header, body []byte, max int) {
	t.Helper()
	n, err := strconv.Atoi(hdr.Get("Retry-After"))
	if status != 429 || !strings.Contains(string(body), `"rate_limited"`) || err != nil || n < 1 || n > max {
		t.Fatalf("%s = %d %s, Retry-After %q; want 429 rate_limited, Retry-After 1 to %d", what, status, body, hdr.Get("Retry-After"), max)
	}
}

// post sends body as JSON and returns the status, the headers and the
// body of the answer.
func (h *harness) post(path string, body any) (int, http.Header, []byte) {
	h.t.Helper()
	req, err := http.NewRequest("POST", h.base+path, strings.NewReader(string(jsonOf(h.t, body))))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// startLocked starts a daemon on the vault of dir without a password: it
// serves locked. The harness has no owner session.
func startLocked(t *testing.T, dir string) *harness {
	t.Helper()
	env, _, _ := testEnv(t, map[string]string{})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := startDaemon(context.Background(), env, log, dir, "127.0.0.1:0", 0, "")
	if err != nil {
		t.Fatalf("startDaemon: %v", err)
	}
	h := &harness{t: t, dir: dir, d: d, base: "http://" + d.addr, http: &http.Client{Timeout: time.Minute}}
	t.Cleanup(h.stop)
	return h
}

// TestUnlockNoLockout: wrong unlocks — without the Secret Key, as any
// local process makes them, or with it and a wrong password — slow down
// whoever sends them (429 rate_limited with Retry-After), and never the
// owner, whose right password and Secret Key unlock at once from a
// connection of their own. Whether the daemon has unlocked before (it
// knows the Secret Key), starts locked beside DIR/secret.key, or knows
// nothing of the key, the owner is not refused.
func TestUnlockNoLockout(t *testing.T) {
	t.Parallel()
	wrongKey := func(string) map[string]string {
		return map[string]string{"password": testPassword, "secret_key": wrongSecretKey(t)}
	}
	wrongPassword := func(sk string) map[string]string {
		return map[string]string{"password": "not the password", "secret_key": sk}
	}
	cases := []struct {
		name string
		// start returns a daemon, locked, and the vault's Secret Key.
		start func(t *testing.T) (*harness, string)
		// attack sends the wrong unlocks: fresh for a new connection
		// each time.
		body  func(sk string) map[string]string
		fresh bool
	}{
		{name: "wrong Secret Key after an unlock, reconnecting", start: unlockedThenLocked, body: wrongKey, fresh: true},
		{name: "wrong password with the Secret Key", start: unlockedThenLocked, body: wrongPassword},
		{name: "wrong Secret Key, started locked beside secret.key, reconnecting", start: lockedBesideKey, body: wrongKey, fresh: true},
		// Knowing no key, every attempt may be the owner's: only the
		// attacker's own connection is slowed.
		{name: "wrong Secret Key, started locked knowing no key", start: lockedKnowingNoKey, body: wrongKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, sk := c.start(t)
			attacker := connection(h, c.fresh)
			for i := range 5 {
				if status, _, raw := attacker.post("/context/unlock", c.body(sk)); status != 401 {
					t.Fatalf("wrong unlock #%d = %d %s; want 401", i+1, status, raw)
				}
			}
			status, hdr, raw := attacker.post("/context/unlock", c.body(sk))
			wantRetry(t, "the sixth wrong unlock", status, hdr, raw, 60)
			var out struct {
				Token string `json:"token"`
			}
			status, _, raw = connection(h, false).post("/context/unlock", map[string]string{"password": testPassword, "secret_key": sk})
			if status != 200 || json.Unmarshal(raw, &out) != nil || out.Token == "" {
				t.Fatalf("the owner's unlock while another process fails = %d %s; want 200 with a token", status, raw)
			}
		})
	}
}

// unlockedThenLocked starts a daemon unlocked, then locks it.
func unlockedThenLocked(t *testing.T) (*harness, string) {
	h := startHarness(t, "")
	h.must(200, "POST", "/context/lock", h.owner, nil, nil)
	return h, secretKeyOf(t, h.dir)
}

// lockedBesideKey starts a daemon locked on a vault whose Secret Key is
// beside it (DIR/secret.key, as phc init leaves it).
func lockedBesideKey(t *testing.T) (*harness, string) {
	h := startHarness(t, "")
	h.stop()
	return startLocked(t, h.dir), secretKeyOf(t, h.dir)
}

// lockedKnowingNoKey starts a daemon locked on a vault whose Secret Key
// is kept elsewhere.
func lockedKnowingNoKey(t *testing.T) (*harness, string) {
	h := startHarness(t, "")
	h.stop()
	sk := secretKeyOf(t, h.dir)
	if err := os.Remove(filepath.Join(h.dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	return startLocked(t, h.dir), sk
}

func secretKeyOf(t *testing.T, dir string) string {
	t.Helper()
	sk, err := vault.ReadSecretKeyFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// TestMintNoLockout: wrong secrets sent under an app's name slow down the
// connection that sends them (429 rate_limited with Retry-After), and
// never the app, whose right secret mints a token from a connection of its
// own; once the minute has passed the sender may try again.
func TestMintNoLockout(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	h := startHarnessClock(t, "", testPassword, clock)
	const secret = "secret-of-victim-0123456789"
	h.must(201, "POST", "/phc/v1/consumers", h.owner, map[string]string{"name": "victim", "secret": secret}, nil)
	mint := func(s string) map[string]any {
		return map[string]any{"consumer": "victim", "secret": s, "scope": "*", "mode": "read"}
	}
	attacker := connection(h, false)
	for i := range 10 {
		if status, _, raw := attacker.post("/context/tokens/service", mint("guess-"+strconv.Itoa(i)+"-0123456789")); status != 401 {
			t.Fatalf("wrong secret #%d = %d %s; want 401", i+1, status, raw)
		}
	}
	status, hdr, raw := attacker.post("/context/tokens/service", mint("guess-10-0123456789"))
	wantRetry(t, "the eleventh wrong secret", status, hdr, raw, 60)
	// Registering the name again with a guessed secret counts the same way.
	status, hdr, raw = attacker.post("/context/consumers/register", map[string]string{"name": "victim", "secret": "guess-11-0123456789"})
	wantRetry(t, "a registration guessing the secret", status, hdr, raw, 60)

	app := connection(h, false)
	if status, _, raw := app.post("/context/tokens/service", mint(secret)); status != 201 {
		t.Fatalf("the app's own mint while another process guesses = %d %s; want 201", status, raw)
	}
	clock.offset.Add(int64(time.Minute))
	if status, _, raw := attacker.post("/context/tokens/service", mint("guess-12-0123456789")); status != 401 {
		t.Fatalf("a wrong secret a minute later = %d %s; want 401", status, raw)
	}
}
