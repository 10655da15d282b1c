package custodian_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/phc-project/phc/custodian"
)

// snapshotVault is a vault with claims in every state the view knows:
// versions, personas, a dispute, a deletion, claims about an entity.
func snapshotVault(t *testing.T, ts *testService, n int) (ids []string) {
	t.Helper()
	ctx := t.Context()
	ts.mustPersona("work")
	ts.mustPersona("home")
	ent, err := ts.CreateEntity(ctx, ts.owner, input[custodian.EntityInput](ts, []byte(`{"type": "person", "name": "Ana"}`)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		personas := []string{"work"}
		if i%3 == 0 {
			personas = []string{"home", "work"}
		}
		w := ts.mustClaim(fmt.Sprintf("k%02d.item%d", i%7, i), fmt.Sprintf("v%d", i), personas...)
		ids = append(ids, w.Claim.ID)
	}
	if _, err := ts.Correct(ctx, ts.owner, ids[1], input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": "corrected"}))); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.DeleteClaim(ctx, ts.owner, ids[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.DisputeClaim(ctx, ts.owner, ids[3]); err != nil {
		t.Fatal(err)
	}
	pr := ts.mustPropose(ts.owner, proposal(t, "about.ana", "a friend", map[string]any{"subject": ent.Entity.ID}))
	ts.mustConfirm(pr.ProposalID)
	return ids
}

// reloadDigest locks and unlocks the vault (from the snapshot unless
// ignore) and returns the view it loaded.
func reloadDigest(t *testing.T, ts *testService, ignore bool) string {
	t.Helper()
	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatal(err)
	}
	ts.SetIgnoreSnapshot(ignore)
	defer ts.SetIgnoreSnapshot(false)
	ts.unlock()
	return ts.ViewDigest()
}

// TestSnapshotLoadsWhatTheMetasSay: a view loaded from the claim metas
// snapshot and the metas written since is the view loaded from every meta
// — whether the writes came before the snapshot, between its cut and its
// switch, or after it — and the snapshot empties the list of claims
// written since of what it holds.
func TestSnapshotLoadsWhatTheMetasSay(t *testing.T) {
	// Small chunks, and no snapshot but those the test writes.
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64))
	ctx := t.Context()
	ids := snapshotVault(t, ts, 30)

	// Writes between the cut and the switch: one to a claim written since
	// the last snapshot, one new claim, one persona change. (During this
	// snapshot, not one the journal started: after the unlock or the
	// erasure in snapshotVault; WriteSnapshotWith waits for those.)
	if err := ts.WriteSnapshotWith(func() {
		if _, err := ts.Correct(ctx, ts.owner, ids[4], input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": "during"}))); err != nil {
			t.Error(err)
		}
		ts.mustClaim("k99.during", "new", "home")
		if _, err := ts.SetPersonas(ctx, ts.owner, ids[5], input[custodian.PersonasInput](ts, []byte(`{"personas":["home"]}`))); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	gen, chunks, claims, dirty := ts.SnapshotStats()
	if gen == 0 || chunks < 2 || claims < 30 {
		t.Fatalf("snapshot gen %d, %d chunks, %d claims; want a snapshot of every claim in several chunks", gen, chunks, claims)
	}
	if dirty != 3 {
		t.Errorf("%d claims written since the snapshot; want the 3 written during it", dirty)
	}
	// Writes after the snapshot: a status change of a claim it holds and
	// a new one.
	if _, err := ts.DeleteClaim(ctx, ts.owner, ids[6]); err != nil {
		t.Fatal(err)
	}
	ts.mustClaim("a.first", "sorts before every other key", "work")

	fromSnapshot := reloadDigest(t, ts, false)
	fromMetas := reloadDigest(t, ts, true)
	if fromSnapshot != fromMetas {
		t.Errorf("the view from the snapshot differs from the view from the metas:\n%s\nwant\n%s", fromSnapshot, fromMetas)
	}
	if rep, err := ts.Check(ctx, ts.owner); err != nil || !rep.OK || len(rep.Claims) != 0 {
		t.Errorf("Check after a load from the metas = %+v, %v; want ok", rep, err)
	}
	if !strings.Contains(fromMetas, `"key":"a.first"`) || !strings.Contains(fromMetas, `"key":"k99.during"`) {
		t.Errorf("the claims written during and after the snapshot are missing from the view:\n%s", fromMetas)
	}
	// A second snapshot takes the place of the first and leaves none of
	// its chunks. (The unlock that read every meta found no snapshot it
	// could read and started one; WriteSnapshot writes after it.)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	gen2, chunks2, _, dirty2 := ts.SnapshotStats()
	if gen2 <= gen || dirty2 != 0 {
		t.Errorf("second snapshot gen %d with %d dirty; want a gen after %d and none dirty", gen2, dirty2, gen)
	}
	stored := storeKeys(t, ts, "claim_meta_snap")
	for _, k := range stored {
		if !strings.HasPrefix(k, fmt.Sprintf("%016x/", gen2)) {
			t.Errorf("chunk %s of an old snapshot left", k)
		}
	}
	if len(stored) != chunks2 {
		t.Errorf("%d chunks stored; want %d", len(stored), chunks2)
	}
	if got := reloadDigest(t, ts, false); got != fromMetas {
		t.Errorf("the view from the second snapshot differs from the view from the metas:\n%s\nwant\n%s", got, fromMetas)
	}
	if rep, err := ts.Check(ctx, ts.owner); err != nil || !rep.OK || len(rep.Claims) != 0 {
		t.Errorf("Check after a load from the snapshot = %+v, %v; want ok", rep, err)
	}

	// A snapshot that disagrees with the metas (here: a meta changed
	// behind the journal's back, so not listed as written since) is
	// found by Check.
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Update(func(tx custodian.Tx) error {
		raw, _, err := tx.Get("claim_meta", ids[7])
		if err != nil {
			return err
		}
		return tx.Put("claim_meta", ids[7], bytes.Replace(raw, []byte(`"status":"active"`), []byte(`"status":"deleted"`), 1))
	}); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	rep, err := ts.Check(ctx, ts.owner)
	if err != nil || rep.OK || len(rep.Claims) != 1 || !strings.Contains(rep.Claims[0], ids[7]) {
		t.Errorf("Check with a snapshot that disagrees = %+v, %v; want the claim %s reported", rep.Claims, err, ids[7])
	}
}

// TestSnapshotUnreadable: a snapshot that does not decode, or lacks a
// chunk, is passed over with a warning: the unlock reads every meta, and
// the next snapshot replaces it.
func TestSnapshotUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(tx custodian.Tx, key string) error
	}{
		{"garbage", func(tx custodian.Tx, key string) error { return tx.Put("claim_meta_snap", key, []byte{1, 200, 3}) }},
		{"other format", func(tx custodian.Tx, key string) error { return tx.Put("claim_meta_snap", key, []byte{9}) }},
		{"missing chunk", func(tx custodian.Tx, key string) error { return tx.Delete("claim_meta_snap", key) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var mu sync.Mutex
			ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64), func(c *custodian.Config) {
				c.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
			})
			snapshotVault(t, ts, 10)
			want := reloadDigest(t, ts, true)
			if err := ts.WriteSnapshot(); err != nil {
				t.Fatal(err)
			}
			gen, chunks, _, _ := ts.SnapshotStats()
			if err := ts.Lock(t.Context(), ts.owner); err != nil {
				t.Fatal(err)
			}
			if err := ts.store.Update(func(tx custodian.Tx) error {
				return tc.tamper(tx, fmt.Sprintf("%016x/%08x", gen, chunks-1))
			}); err != nil {
				t.Fatal(err)
			}
			ts.unlock()
			if got := ts.ViewDigest(); got != want {
				t.Errorf("view after a bad snapshot:\n%s\nwant\n%s", got, want)
			}
			mu.Lock()
			log := logs.String()
			mu.Unlock()
			if !strings.Contains(log, "claim metas snapshot unreadable") {
				t.Errorf("no warning for the unreadable snapshot in the log:\n%s", log)
			}
			if err := ts.WriteSnapshot(); err != nil {
				t.Fatal(err)
			}
			if got := reloadDigest(t, ts, false); got != want {
				t.Errorf("view from the snapshot that replaced the bad one:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestSnapshotByTheJournal: once enough claims were written since the last
// snapshot, the journal writes the next on its own.
func TestSnapshotByTheJournal(t *testing.T) {
	ts := newTestService(t, custodian.WithSnapshotTuning(5, 1<<30, 256), func(c *custodian.Config) { c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil)) })
	snapshotVault(t, ts, 12)
	// The unlock's commit started the first snapshot; once it is done, the
	// first group to find more than 5 claims written since starts the next.
	// Each claim waits for a snapshot it started to end: more than 5
	// written since the last one start the next, so the loop ends.
	for i := 0; ; i++ {
		if gen, _, _, _ := ts.SnapshotStats(); gen >= 2 {
			break
		}
		ts.mustClaim(fmt.Sprintf("more.k%d", i), i)
		g, c, n, d := ts.SnapshotStats()
		t.Logf("%d: gen %d chunks %d claims %d dirty %d", i, g, c, n, d)
		ts.await(func() bool { return !ts.SnapshotRunning() })
	}
	want := reloadDigest(t, ts, true)
	if got := reloadDigest(t, ts, false); got != want {
		t.Errorf("view from the journal's snapshot:\n%s\nwant\n%s", got, want)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// olderBuildWrites does to the locked store what a build that keeps no log
// of the metas written since does when it deletes claim id: it writes the
// meta and moves the revision on, and neither the log nor its revision.
func olderBuildWrites(t *testing.T, ts *testService, id string) {
	t.Helper()
	if err := ts.store.Update(func(tx custodian.Tx) error {
		raw, _, err := tx.Get("claim_meta", id)
		if err != nil {
			return err
		}
		if err := tx.Put("claim_meta", id, bytes.Replace(raw, []byte(`"status":"active"`), []byte(`"status":"deleted"`), 1)); err != nil {
			return err
		}
		rev, _, err := tx.Get(custodian.BucketMeta, custodian.MetaRevision)
		if err != nil {
			return err
		}
		return tx.Put(custodian.BucketMeta, custodian.MetaRevision, append(rev, '0'))
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotAfterAnOlderBuild: a store an older phc wrote to (its
// revision moved past the list of metas written since) is loaded from
// every meta, not from the snapshot that misses those writes.
func TestSnapshotAfterAnOlderBuild(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64), func(c *custodian.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	})
	ids := snapshotVault(t, ts, 8)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatal(err)
	}
	olderBuildWrites(t, ts, ids[0])
	fromSnapshotOrNot := reloadDigest(t, ts, false)
	want := reloadDigest(t, ts, true)
	if fromSnapshotOrNot != want {
		t.Errorf("view after an older build's write:\n%s\nwant\n%s", fromSnapshotOrNot, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "an older phc wrote to it") {
		t.Errorf("no warning that the snapshot was passed over:\n%s", logs.String())
	}
}

// TestSnapshotAfterErasure: erasing a claim makes a new snapshot due at
// once, so that no chunk, and no entry of the log of metas written since,
// keeps the erased claim's key.
func TestSnapshotAfterErasure(t *testing.T) {
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64))
	w := ts.mustClaim("secret.diagnosis.key", "x")
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	// A version written since: the log holds its meta too.
	if _, err := ts.Correct(t.Context(), ts.owner, w.Claim.ID, input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": "y"}))); err != nil {
		t.Fatal(err)
	}
	if n := len(storeKeys(t, ts, "claim_meta_log")); n != 1 {
		t.Fatalf("the log holds %d entries; want the correction's", n)
	}
	gen, _, _, _ := ts.SnapshotStats()
	holds := func() bool { return snapshotHolds(t, ts, "secret.diagnosis.key") }
	if !holds() {
		t.Fatal("the snapshot does not hold the claim's key before the erasure (the memory store keeps values in the clear)")
	}
	if _, err := ts.DeleteClaim(t.Context(), ts.owner, w.Claim.ID); err != nil {
		t.Fatal(err)
	}
	// The journal started the snapshot with the erasure's group.
	ts.await(func() bool { g, _, _, _ := ts.SnapshotStats(); return g > gen })
	ts.SnapshotSettled() // the switch stored, not only made current
	if holds() {
		t.Error("a snapshot chunk or the log of metas written since still holds the erased claim's key")
	}
}

// TestSnapshotAfterErasureInFlight: an erasure while a snapshot the
// journal started is between its cut and its switch (so that it holds the
// erased claim's key) has the next snapshot start with that one's switch
// (its own group), with no other write to start it, and the key leaves
// every chunk.
func TestSnapshotAfterErasureInFlight(t *testing.T) {
	// A snapshot is due once two claims are written since the last.
	ts := newTestService(t, custodian.WithSnapshotTuning(1, 1<<30, 64))
	w := ts.mustClaim("secret.diagnosis.key", "x")
	ts.await(ts.ErasuresSnapshotted) // the first snapshot, due at once
	ts.SnapshotSettled()
	gen, _, _, _ := ts.SnapshotStats()
	cut, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ts.SetSnapshotHook(func() { once.Do(func() { close(cut); <-release }) })
	t.Cleanup(func() { ts.SetSnapshotHook(nil) })
	ts.mustClaim("other.key", "y")
	ts.mustClaim("other.key2", "z") // the journal starts a snapshot
	<-cut
	if _, err := ts.DeleteClaim(t.Context(), ts.owner, w.Claim.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	ts.await(func() bool { g, _, _, _ := ts.SnapshotStats(); return g > gen })
	ts.SnapshotSettled() // the snapshot from before the erasure has ended
	if !ts.ErasureSnapshotOnItsWay() {
		t.Fatal("the snapshot cut before the erasure became current, and no other is being written: the erased key stays until the next write")
	}
	ts.await(ts.ErasuresSnapshotted)
	ts.SnapshotSettled()
	if snapshotHolds(t, ts, "secret.diagnosis.key") {
		t.Error("a snapshot chunk or the log of metas written since still holds the erased claim's key")
	}
}

// snapshotHolds reports whether a snapshot chunk or the log of metas
// written since holds s (the memory store keeps values in the clear).
func snapshotHolds(t *testing.T, ts *testService, s string) bool {
	t.Helper()
	found := false
	for _, bucket := range []string{"claim_meta_snap", "claim_meta_log"} {
		eachStored(t, ts, bucket, func(_ string, v []byte) {
			found = found || bytes.Contains(v, []byte(s))
		})
	}
	return found
}

// TestSnapshotAfterErasureAndReload: when the snapshot an erasure made due
// never becomes current (the vault locks between its cut and its switch, as
// a crash would stop it), the next unlock writes one at once, and the
// erased claim's key leaves the snapshot.
func TestSnapshotAfterErasureAndReload(t *testing.T) {
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64))
	ctx := t.Context()
	w := ts.mustClaim("secret.diagnosis.key", "x")
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	gen, _, _, _ := ts.SnapshotStats()
	release := make(chan struct{})
	var once sync.Once
	ts.SetSnapshotHook(func() { once.Do(func() { <-release }) })
	t.Cleanup(func() { ts.SetSnapshotHook(nil) })
	if _, err := ts.DeleteClaim(ctx, ts.owner, w.Claim.ID); err != nil {
		t.Fatal(err)
	}
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	close(release) // the erasure's snapshot gives up: the vault it was for is locked
	if !snapshotHolds(t, ts, "secret.diagnosis.key") {
		t.Fatal("the snapshot from before the erasure no longer holds the key; the test needs it to")
	}
	ts.unlock()
	// The unlock's snapshot, its switch stored, not only made current.
	ts.await(func() bool { g, _, _, _ := ts.SnapshotStats(); return g > gen })
	ts.SnapshotSettled()
	if snapshotHolds(t, ts, "secret.diagnosis.key") {
		t.Error("after the unlock's snapshot, a chunk or the log still holds the erased claim's key")
	}
}

// TestSnapshotDirtyWithoutCopy: a claim listed as written since the
// snapshot without a copy of its meta (as an earlier build listed them) is
// read from the metas.
func TestSnapshotDirtyWithoutCopy(t *testing.T) {
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64))
	ids := snapshotVault(t, ts, 6)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.DisputeClaim(t.Context(), ts.owner, ids[4]); err != nil {
		t.Fatal(err)
	}
	want := reloadDigest(t, ts, true)
	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Update(func(tx custodian.Tx) error {
		return tx.Put("claim_meta_dirty", ids[4], []byte("1"))
	}); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if got := ts.ViewDigest(); got != want || !strings.Contains(got, "disputed_at") {
		t.Errorf("view with a listed claim without its copy:\n%s\nwant\n%s", got, want)
	}
}

// asOlderBuildLeftIt rewrites the locked store's snapshot bookkeeping into
// the form builds before the log kept: a copy of each meta written since
// the snapshot under its claim id (the log's last entry for it), their
// record of the snapshot and their revision marker. It returns the record.
func asOlderBuildLeftIt(t *testing.T, ts *testService) (record []byte) {
	t.Helper()
	if err := ts.store.Update(func(tx custodian.Tx) error {
		var keys []string
		latest := map[string][]byte{}
		if err := tx.ForEach("claim_meta_log", func(k string, v []byte) error {
			keys = append(keys, k)
			id, meta, _ := bytes.Cut(v, []byte{'\n'})
			latest[string(id)] = bytes.Clone(meta)
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.Delete("claim_meta_log", k); err != nil {
				return err
			}
		}
		for id, meta := range latest {
			if err := tx.Put("claim_meta_dirty", id, meta); err != nil {
				return err
			}
		}
		rec, found, err := tx.Get(custodian.BucketMeta, "claim_meta_snapshot_log")
		if err != nil || !found {
			return fmt.Errorf("no snapshot record (%v)", err)
		}
		record = bytes.Clone(rec)
		rev, _, err := tx.Get(custodian.BucketMeta, custodian.MetaRevision)
		if err != nil {
			return err
		}
		return errors.Join(
			tx.Put(custodian.BucketMeta, "claim_meta_snapshot", rec),
			tx.Put(custodian.BucketMeta, "claim_meta_dirty_revision", rev),
			tx.Delete(custodian.BucketMeta, "claim_meta_snapshot_log"),
			tx.Delete(custodian.BucketMeta, "claim_meta_log_revision"))
	}); err != nil {
		t.Fatal(err)
	}
	return record
}

// metaValue reads bucket meta's key (nil: absent).
func metaValue(t *testing.T, ts *testService, key string) []byte {
	t.Helper()
	var v []byte
	if err := ts.store.View(func(tx custodian.Tx) error {
		raw, found, err := tx.Get(custodian.BucketMeta, key)
		if found {
			v = bytes.Clone(raw)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// storeKeys lists the keys of a bucket.
func storeKeys(t *testing.T, ts *testService, bucket string) []string {
	t.Helper()
	var keys []string
	eachStored(t, ts, bucket, func(k string, _ []byte) { keys = append(keys, k) })
	return keys
}

// eachStored calls fn for each key and value of a bucket of ts's store.
func eachStored(t *testing.T, ts *testService, bucket string, fn func(k string, v []byte)) {
	t.Helper()
	if err := ts.store.View(func(tx custodian.Tx) error {
		return tx.ForEach(bucket, func(k string, v []byte) error {
			fn(k, v)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotFromAnOlderBuild: a store whose snapshot and metas written
// since an older build kept (a copy per claim id) loads from them, with
// this build's writes after them, and this build's first snapshot removes
// what the older build kept.
func TestSnapshotFromAnOlderBuild(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64), func(c *custodian.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	})
	ctx := t.Context()
	ids := snapshotVault(t, ts, 12)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	// Written since: a claim twice (its last meta counts), a deletion, a
	// new claim.
	for _, v := range []string{"first", "second"} {
		if _, err := ts.Correct(ctx, ts.owner, ids[4], input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": v}))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.DeleteClaim(ctx, ts.owner, ids[5]); err != nil {
		t.Fatal(err)
	}
	ts.mustClaim("k50.since", "new", "home")
	want := ts.ViewDigest()
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	record := asOlderBuildLeftIt(t, ts)
	if n := len(storeKeys(t, ts, "claim_meta_dirty")); n != 3 {
		t.Fatalf("%d claims in the older build's list; want 3", n)
	}
	// And a record of this build's from before the older build wrote:
	// stale, passed over.
	if err := ts.store.Update(func(tx custodian.Tx) error {
		return tx.Put(custodian.BucketMeta, "claim_meta_snapshot_log", []byte(`{"gen":99,"chunks":1,"claims":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if got := ts.ViewDigest(); got != want {
		t.Errorf("view from the older build's snapshot:\n%s\nwant\n%s", got, want)
	}
	// The unlock's commit made the older build's record this build's and
	// dropped its marker: an older build opening the store now reads every
	// meta, whatever it writes.
	if got := metaValue(t, ts, "claim_meta_snapshot_log"); !bytes.Equal(got, record) {
		t.Errorf("this build's snapshot record after the unlock = %s; want the older build's %s", got, record)
	}
	for _, k := range []string{"claim_meta_snapshot", "claim_meta_dirty_revision"} {
		if metaValue(t, ts, k) != nil {
			t.Errorf("the older build's %s is still there after the unlock", k)
		}
	}
	if _, _, _, dirty := ts.SnapshotStats(); dirty != 3 {
		t.Errorf("%d metas written since the snapshot; want the older build's 3", dirty)
	}
	// This build's writes go to the log, after the older build's list.
	if _, err := ts.Correct(ctx, ts.owner, ids[4], input[custodian.CorrectionInput](ts, mustJSON(t, map[string]any{"value": "third"}))); err != nil {
		t.Fatal(err)
	}
	want = ts.ViewDigest()
	if got := reloadDigest(t, ts, false); got != want {
		t.Errorf("view from the older build's snapshot, its list and this build's log:\n%s\nwant\n%s", got, want)
	}
	mu.Lock()
	if strings.Contains(logs.String(), "passed over") || strings.Contains(logs.String(), "unreadable") {
		t.Errorf("the older build's snapshot was not used:\n%s", logs.String())
	}
	mu.Unlock()
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	if keys := storeKeys(t, ts, "claim_meta_dirty"); len(keys) != 0 {
		t.Errorf("the older build's list holds %d claims after a snapshot; want none", len(keys))
	}
	if keys := storeKeys(t, ts, "claim_meta_log"); len(keys) != 0 {
		t.Errorf("the log holds %v after a snapshot; want nothing", keys)
	}
	for _, k := range storeKeys(t, ts, custodian.BucketMeta) {
		if k == "claim_meta_snapshot" || k == "claim_meta_dirty_revision" {
			t.Errorf("the older build's %s is still there after a snapshot", k)
		}
	}
	if got := reloadDigest(t, ts, false); got != want {
		t.Errorf("view from this build's snapshot:\n%s\nwant\n%s", got, want)
	}
}

// TestSnapshotPassedOverStaysPassedOver: once the unlock passed over a
// snapshot an older build made stale, this build's writes do not make it
// look current again: reloaded before a new snapshot replaced it (as after
// a crash), the view is still the metas'.
func TestSnapshotPassedOverStaysPassedOver(t *testing.T) {
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64))
	ctx := t.Context()
	ids := snapshotVault(t, ts, 8)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	ts.mustClaim("k60.logged", "in the log")
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	olderBuildWrites(t, ts, ids[0])
	// The snapshot the unlock starts waits until the vault is locked
	// again, and then gives up: no new snapshot replaces the stale one.
	release := make(chan struct{})
	var once sync.Once
	ts.SetSnapshotHook(func() { once.Do(func() { <-release }) })
	ts.unlock()
	ts.mustClaim("k61.after", "written after the passed-over unlock")
	want := ts.ViewDigest()
	if err := ts.Lock(ctx, ts.owner); err != nil {
		t.Fatal(err)
	}
	close(release)
	ts.unlock()
	if got := ts.ViewDigest(); got != want {
		t.Errorf("view reloaded before a new snapshot:\n%s\nwant\n%s", got, want)
	}
	ts.await(func() bool { gen, _, _, _ := ts.SnapshotStats(); return gen != 0 }) // the unlock's snapshot
	ts.SetSnapshotHook(nil)
	if got := reloadDigest(t, ts, false); got != want {
		t.Errorf("view from the new snapshot:\n%s\nwant\n%s", got, want)
	}
}

// TestSnapshotLogUnreadable: an entry of the log of metas written since
// that does not parse makes the unlock read every meta, with a warning,
// and drop the log, rather than fail.
func TestSnapshotLogUnreadable(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	ts := newTestService(t, custodian.WithSnapshotTuning(1<<30, 1, 64), func(c *custodian.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	})
	snapshotVault(t, ts, 6)
	if err := ts.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	ts.mustClaim("k70.logged", "in the log")
	want := ts.ViewDigest()
	if err := ts.Lock(t.Context(), ts.owner); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Update(func(tx custodian.Tx) error {
		return tx.Put("claim_meta_log", "ffffffffffffffff", []byte("no claim id"))
	}); err != nil {
		t.Fatal(err)
	}
	ts.unlock()
	if got := ts.ViewDigest(); got != want {
		t.Errorf("view with an unreadable log entry:\n%s\nwant\n%s", got, want)
	}
	mu.Lock()
	if !strings.Contains(logs.String(), "unreadable entry") {
		t.Errorf("no warning for the unreadable log entry:\n%s", logs.String())
	}
	mu.Unlock()
	for _, k := range storeKeys(t, ts, "claim_meta_log") {
		if k == "ffffffffffffffff" {
			t.Error("the unreadable entry is still in the log after the unlock")
		}
	}
}
