package custodian_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/schema"
)

// These tests are in package custodian_test, not custodian, because they use
// internal/store, which imports custodian (an in-package test importing it
// would be an import cycle). export_test.go exports the few internals they
// need.

// t0 is when every fake clock starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a custodian.Clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

var errInjected = errors.New("injected store failure")

// testStore is a store.Memory that records the buckets written (so a test can
// dump every stored byte), and whose Update can be made to fail or to pause
// before it commits.
type testStore struct {
	*store.Memory
	fail  atomic.Bool
	pause atomic.Pointer[func()] // called inside Update after fn, before the commit

	mu      sync.Mutex
	buckets map[string]bool
}

func newTestStore() *testStore {
	return &testStore{Memory: store.NewMemory(), buckets: map[string]bool{}}
}

func (s *testStore) Update(fn func(custodian.Tx) error) error {
	return s.Memory.Update(func(tx custodian.Tx) error {
		if err := fn(recordingTx{tx, s}); err != nil {
			return err
		}
		if p := s.pause.Load(); p != nil {
			(*p)()
		}
		if s.fail.Load() {
			return errInjected
		}
		return nil
	})
}

type recordingTx struct {
	custodian.Tx
	s *testStore
}

func (tx recordingTx) Put(bucket, key string, value []byte) error {
	tx.s.mu.Lock()
	tx.s.buckets[bucket] = true
	tx.s.mu.Unlock()
	return tx.Tx.Put(bucket, key, value)
}

// dump returns every bucket, key and value in the store, as "bucket/key=value"
// lines.
func (s *testStore) dump(t *testing.T) []byte {
	t.Helper()
	s.mu.Lock()
	buckets := make([]string, 0, len(s.buckets))
	for b := range s.buckets {
		buckets = append(buckets, b)
	}
	s.mu.Unlock()
	sort.Strings(buckets)
	var out bytes.Buffer
	err := s.View(func(tx custodian.Tx) error {
		for _, b := range buckets {
			if err := tx.ForEach(b, func(k string, v []byte) error {
				out.WriteString(b + "/" + k + "=")
				out.Write(v)
				out.WriteByte('\n')
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("dump store: %v", err)
	}
	return out.Bytes()
}

// storedRevision reads the revision the store records.
func (s *testStore) storedRevision(t *testing.T) uint64 {
	t.Helper()
	var rev uint64
	err := s.View(func(tx custodian.Tx) error {
		raw, ok, err := tx.Get(custodian.BucketMeta, custodian.MetaRevision)
		if err != nil || !ok {
			return err
		}
		return json.Unmarshal(raw, &rev)
	})
	if err != nil {
		t.Fatalf("read stored revision: %v", err)
	}
	return rev
}

const testPassword = "correct horse battery staple"

// testService is an unlocked Service over a memory store, a real vault in
// t.TempDir() and a fake clock, with the owner's session.
type testService struct {
	*custodian.Service
	t         testing.TB
	store     *testStore
	vault     *vault.Vault
	clock     *fakeClock
	secretKey string

	ownerToken string
	owner      custodian.Principal

	// evGen counts the service's events (see custodian.SetEventHook);
	// evCond signals each, for await.
	evMu   sync.Mutex
	evCond *sync.Cond
	evGen  uint64
}

// newLockedTestService builds the service without unlocking it. The vault
// uses the test key-derivation cost (see TestMain), so unlocks are cheap.
// IdleLock defaults to never, so that advancing the fake clock does not lock.
func newLockedTestService(t testing.TB, opts ...func(*custodian.Config)) *testService {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	sk, err := vault.Create(dir, []byte(testPassword))
	if err != nil {
		t.Fatalf("vault.Create: %v", err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatalf("vault.Open: %v", err)
	}
	val, err := schema.New()
	if err != nil {
		t.Fatalf("schema.New: %v", err)
	}
	ts := &testService{t: t, store: newTestStore(), vault: v, clock: &fakeClock{now: t0}, secretKey: sk}
	ts.evCond = sync.NewCond(&ts.evMu)
	g := cayley.OpenMemory()
	t.Cleanup(func() { g.Close() })
	// A claim cache of one byte keeps no head resident once it is
	// committed: every test reads claims back from the store, as a vault
	// larger than its cache does.
	cfg := custodian.Config{Store: ts.store, Graph: g, Vault: v, Schema: val, Clock: ts.clock, IdleLock: -1, ClaimCacheBytes: 1}
	custodian.SetEventHook(&cfg, ts.event)
	for _, o := range opts {
		o(&cfg)
	}
	s, err := custodian.New(cfg)
	if err != nil {
		t.Fatalf("custodian.New: %v", err)
	}
	ts.Service = s
	t.Cleanup(func() { s.Close() })
	return ts
}

// newTestService builds the service and unlocks it.
func newTestService(t testing.TB, opts ...func(*custodian.Config)) *testService {
	t.Helper()
	ts := newLockedTestService(t, opts...)
	ts.unlock()
	return ts
}

// unlock unlocks with the right credentials and authenticates the owner.
func (ts *testService) unlock() {
	ts.t.Helper()
	token, err := ts.Unlock(ts.t.Context(), []byte(testPassword), ts.secretKey)
	if err != nil {
		ts.t.Fatalf("Unlock = %v", err)
	}
	// The roll the unlock starts must not run later, against a clock the
	// test has moved, and roll what the test means to roll itself.
	ts.WaitUnlockRoll()
	p, err := ts.Authenticate(ts.t.Context(), token)
	if err != nil {
		ts.t.Fatalf("Authenticate(owner token) = %v", err)
	}
	if !p.IsOwner() {
		ts.t.Fatalf("Authenticate(owner token) = %+v; want the owner", p)
	}
	ts.ownerToken, ts.owner = token, p
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func (ts *testService) mustPersona(id string) uint64 {
	ts.t.Helper()
	_, rev, err := ts.CreatePersona(ts.t.Context(), ts.owner, input[custodian.PersonaInput](ts, mustJSON(ts.t, map[string]any{"id": id, "name": "Persona " + id})))
	if err != nil {
		ts.t.Fatalf("CreatePersona(%s) = %v", id, err)
	}
	return rev
}

func secretOf(name string) string { return "secret-of-" + name + "-0123456789" }

func (ts *testService) mustConsumer(name string) {
	ts.t.Helper()
	_, err := ts.AddConsumer(ts.t.Context(), ts.owner, input[custodian.ConsumerInput](ts, mustJSON(ts.t, custodian.ConsumerInput{Name: name, Secret: secretOf(name)})))
	if err != nil {
		ts.t.Fatalf("AddConsumer(%s) = %v", name, err)
	}
}

// mustToken mints a service token for consumer name, valid for 30 days.
func (ts *testService) mustToken(name, scope, mode string) string {
	ts.t.Helper()
	return ts.mustTokenFor(name, scope, mode, "")
}

// mustTokenFor mints a token bound to purpose ("" for none).
func (ts *testService) mustTokenFor(name, scope, mode, purpose string) string {
	ts.t.Helper()
	issued, err := ts.MintServiceToken(ts.t.Context(), input[custodian.TokenRequest](ts, mustJSON(ts.t, map[string]any{
		"consumer": name, "secret": secretOf(name), "scope": scope, "mode": mode, "ttl": "720h", "purpose": purpose})))
	if err != nil {
		ts.t.Fatalf("MintServiceToken(%s, %q, %q) = %v", name, scope, mode, err)
	}
	return issued.Token
}

// mustPrincipal mints a token for consumer name and authenticates with it.
func (ts *testService) mustPrincipal(name, scope, mode string) custodian.Principal {
	ts.t.Helper()
	return ts.mustPrincipalFor(name, scope, mode, "")
}

// mustPrincipalFor is mustPrincipal with a token bound to purpose.
func (ts *testService) mustPrincipalFor(name, scope, mode, purpose string) custodian.Principal {
	ts.t.Helper()
	token := ts.mustTokenFor(name, scope, mode, purpose)
	p, err := ts.Authenticate(ts.t.Context(), token)
	if err != nil {
		ts.t.Fatalf("Authenticate(%s token) = %v", name, err)
	}
	if p.Kind() != custodian.PrincipalConsumer || p.Consumer != name {
		ts.t.Fatalf("Authenticate(%s token) = %+v; want consumer %s", name, p, name)
	}
	return p
}

// grantSpec is a grant for consumer recipient; zero Expires means in 30 days.
type grantSpec struct {
	recipient string
	purpose   string
	ops       []string
	keys      []string
	personas  []string
	claims    []string
	expires   time.Time
	route     string
	usage     string
	category  string // purpose_category
}

func (ts *testService) grantDoc(g grantSpec) []byte {
	sel := map[string]any{}
	if g.keys != nil {
		sel["keys"] = g.keys
	}
	if g.personas != nil {
		sel["personas"] = g.personas
	}
	if g.claims != nil {
		sel["claims"] = g.claims
	}
	if g.expires.IsZero() {
		g.expires = ts.clock.Now().Add(30 * 24 * time.Hour)
	}
	if g.purpose == "" {
		g.purpose = "assist"
	}
	doc := map[string]any{
		"recipient":  map[string]any{"kind": "consumer", "id": g.recipient},
		"purpose":    g.purpose,
		"operations": g.ops,
		"selectors":  sel,
		"expires_at": g.expires.Format(time.RFC3339Nano),
	}
	if g.route != "" {
		doc["route"] = g.route
	}
	if g.category != "" {
		doc["purpose_category"] = g.category
	}
	if g.usage != "" {
		doc["usage"] = g.usage
	}
	return mustJSON(ts.t, doc)
}

func (ts *testService) mustGrant(g grantSpec) custodian.GrantCreated {
	ts.t.Helper()
	out, err := ts.CreateGrant(ts.t.Context(), ts.owner, input[custodian.GrantInput](ts, ts.grantDoc(g)))
	if err != nil {
		ts.t.Fatalf("CreateGrant(%+v) = %v", g, err)
	}
	return out
}

// proposal is a minimal proposal document; extra members are merged in.
func proposal(t testing.TB, key string, value any, extra ...map[string]any) []byte {
	t.Helper()
	doc := map[string]any{"key": key, "value": value, "kind": "fact", "assertion": "reported"}
	for _, e := range extra {
		for k, v := range e {
			doc[k] = v
		}
	}
	return mustJSON(t, doc)
}

func (ts *testService) mustPropose(p custodian.Principal, doc []byte) custodian.Proposed {
	ts.t.Helper()
	out, err := ts.Propose(ts.t.Context(), p, input[custodian.ProposalInput](ts, doc))
	if err != nil {
		ts.t.Fatalf("Propose(%s) = %v", doc, err)
	}
	return out
}

func (ts *testService) mustConfirm(id string, personas ...string) custodian.Written {
	ts.t.Helper()
	if personas == nil {
		personas = []string{}
	}
	out, err := ts.Confirm(ts.t.Context(), ts.owner, id, input[custodian.ConfirmInput](ts, mustJSON(ts.t, custodian.ConfirmInput{Personas: personas})))
	if err != nil {
		ts.t.Fatalf("Confirm(%s, %v) = %v", id, personas, err)
	}
	return out
}

// mustClaim proposes (as the owner) and confirms key = value into personas.
func (ts *testService) mustClaim(key string, value any, personas ...string) custodian.Written {
	ts.t.Helper()
	pr := ts.mustPropose(ts.owner, proposal(ts.t, key, value))
	return ts.mustConfirm(pr.ProposalID, personas...)
}

// contextKeys returns the keys p receives for q, sorted, or the error.
func (ts *testService) contextKeys(p custodian.Principal, q custodian.ContextQuery) ([]string, error) {
	res, err := ts.Context(ts.t.Context(), p, q)
	if err != nil {
		return nil, err
	}
	keys := []string{}
	for _, c := range res.Claims {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return keys, nil
}

// receipts returns every receipt, oldest first.
func (ts *testService) receipts() []custodian.Receipt {
	ts.t.Helper()
	rs, err := ts.Receipts(ts.t.Context(), ts.owner, 1000)
	if err != nil {
		ts.t.Fatalf("Receipts = %v", err)
	}
	slices.Reverse(rs)
	return rs
}

func (ts *testService) revision() uint64 {
	ts.t.Helper()
	return ts.Status(ts.t.Context(), ts.owner).Revision
}

// wantKind fails t unless err is an *Error of kind want.
func wantKind(t *testing.T, what string, err error, want custodian.Kind) {
	t.Helper()
	if err == nil {
		t.Errorf("%s = nil error; want %s", what, want)
		return
	}
	if _, ok := errors.AsType[*custodian.Error](err); !ok {
		t.Errorf("%s = %v (%T); want a *custodian.Error of kind %s", what, err, err, want)
		return
	}
	if got := custodian.KindOf(err); got != want {
		t.Errorf("%s = %v (kind %s); want kind %s", what, err, got, want)
	}
}

// snapshotSettled waits until no claim metas snapshot is being written:
// the one the unlock starts queues a journal job of its own when done, which
// a test that counts queued jobs must not meet.
func (ts *testService) snapshotSettled() {
	for {
		ts.await(func() bool { return !ts.SnapshotRunning() })
		// The snapshot is current once its switch is applied, but its
		// goroutine holds the snapshot lock until the switch's group is
		// stored: a store pause or failure set before then would catch
		// that group instead of the test's.
		ts.SnapshotSettled()
		if !ts.SnapshotRunning() {
			return
		}
	}
}

// event records that something happened in the service that a test may
// be waiting for.
func (ts *testService) event() {
	ts.evMu.Lock()
	ts.evGen++
	ts.evMu.Unlock()
	ts.evCond.Broadcast()
}

// await returns once cond holds, checking it again after each of the
// service's events (a job queued, the vault locked, a snapshot ended, a
// read waiting for a commit, an idle look). cond runs without ts.evMu
// held, so it may call into the service. No deadline: the test's own
// timeout is the limit.
func (ts *testService) await(cond func() bool) {
	for {
		ts.evMu.Lock()
		gen := ts.evGen
		ts.evMu.Unlock()
		if cond() {
			return
		}
		ts.evMu.Lock()
		for ts.evGen == gen {
			ts.evCond.Wait()
		}
		ts.evMu.Unlock()
	}
}
