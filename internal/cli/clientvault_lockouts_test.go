package cli

import (
	"strconv"
	"strings"
	"testing"
)

// Lock-outs on the Client-Vault side (see lockouts_test.go): what one
// reader can make the custodian refuse another.

// TestVaultKeyReplayNoLockout: a reader that shows another reader's kid
// (the kid names K; it does not prove it) gets no binding, and the reader
// the kid is bound to keeps resolving with it.
func TestVaultKeyReplayNoLockout(t *testing.T) {
	t.Parallel()
	f := newCVFixture(t)
	h := f.h
	app, ref := f.passportReader()
	if !strings.HasPrefix(ref, "⟦PASSPORT_1:") {
		t.Fatalf("critical field read = %q; want a reference", ref)
	}
	k := f.boundKey("app", app)
	seen := f.clock.Now()
	if st, _, b := f.resolve(k, f.refs(seen, "PASSPORT_1")); st != 200 {
		t.Fatalf("resolve before the replay = %d %v", st, b)
	}

	thief := h.consumer("thief", "*", "read")
	f.showKey(thief, k) // the MCP request itself is answered; the kid is not bound
	out := h.phcOK("vault-keys")
	if !strings.Contains(out, "active") || strings.Contains(out, "blocked") || strings.Contains(out, "thief") {
		t.Fatalf("phc vault-keys after another reader showed the kid = %q; want it active, bound to app alone", out)
	}
	if st, _, b := f.resolve(k, f.refs(seen, "PASSPORT_1")); st != 200 {
		t.Fatalf("resolve after another reader showed the kid = %d %v; want 200", st, b)
	}
}

// TestResolveCapPerReader: the 100 values a UTC day are each reader's: a
// reader that has used its own is refused (429 rate_limited until
// midnight UTC) and another reader still resolves.
func TestResolveCapPerReader(t *testing.T) {
	t.Parallel()
	f := newCVFixtureAtNoon(t)
	h := f.h
	h.must(200, "PUT", "/phc/v1/settings", h.owner, map[string]any{"local_vaults": true}, nil)
	bind := func(name string) []byte {
		tok := f.approvedToken(name, "identity.passport_number", "travel")
		if ref := f.readPassport(tok); !strings.HasPrefix(ref, "⟦PASSPORT_1:") {
			t.Fatalf("%s read %q; want a reference", name, ref)
		}
		k := f.boundKey(name, tok)
		return k
	}
	greedy, modest := bind("greedy"), bind("modest")
	seen := f.clock.Now()
	for i := range 100 {
		if st, _, b := f.resolve(greedy, f.refs(seen, "PASSPORT_1")); st != 200 {
			t.Fatalf("greedy's resolve #%d = %d %v; want 200", i+1, st, b)
		}
	}
	status, retry, body := f.resolve(greedy, f.refs(seen, "PASSPORT_1"))
	if n, err := strconv.Atoi(retry); status != 429 || body["error"] != "rate_limited" || err != nil || n < 1 {
		t.Fatalf("greedy's 101st value = %d %v, Retry-After %q; want 429 rate_limited until midnight", status, body, retry)
	}
	if st, _, b := f.resolve(modest, f.refs(seen, "PASSPORT_1")); st != 200 {
		t.Fatalf("another reader's resolve once greedy used its 100 = %d %v; want 200", st, b)
	}
}
