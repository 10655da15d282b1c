package storetest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

// Run runs the contract suite against the stores open returns. open must
// return a new, empty store each time it is called.
func Run(t *testing.T, open func(t *testing.T) custodian.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, custodian.Store)
	}{
		{"GetMissing", testGetMissing},
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"BucketsIndependent", testBucketsIndependent},
		{"EmptyNamesRefused", testEmptyNamesRefused},
		{"UpdateRollback", testUpdateRollback},
		{"UpdateSeesOwnWrites", testUpdateSeesOwnWrites},
		{"ViewReadOnly", testViewReadOnly},
		{"ViewErrorUnchanged", testViewErrorUnchanged},
		{"ViewIsolation", testViewIsolation},
		{"ForEachOrder", testForEachOrder},
		{"ForEachValueBelongsToFn", testForEachValueBelongsToFn},
		{"ForEachStops", testForEachStops},
		{"ForEachPrefix", testForEachPrefix},
		{"ForEachFrom", testForEachFrom},
		{"ForEachMissingBucket", testForEachMissingBucket},
		{"Delete", testDelete},
		{"GetReturnsCopy", testGetReturnsCopy},
		{"PutDoesNotRetain", testPutDoesNotRetain},
		{"Close", testClose},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, openClosing(t, open))
		})
	}
}

// openClosing opens a store and closes it when t ends.
func openClosing(t *testing.T, open func(t *testing.T) custodian.Store) custodian.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() { _ = s.Close() }) // may be the second Close
	return s
}

// testError is an error type the suite returns from closures, to check that
// stores return such errors unchanged (by identity, errors.Is and errors.As).
type testError struct{ msg string }

func (e *testError) Error() string { return e.msg }

func newTestError(msg string) *testError { return &testError{msg: "storetest: " + msg} }

// checkUnchanged reports an error if got is not exactly want.
func checkUnchanged(t *testing.T, call string, got error, want *testError) {
	t.Helper()
	var te *testError
	if !errors.As(got, &te) || te != want || !errors.Is(got, want) {
		t.Errorf("%s = %v; want the closure's error %v unchanged", call, got, want)
	}
}

func put(t *testing.T, s custodian.Store, bucket, key string, value []byte) {
	t.Helper()
	err := s.Update(func(tx custodian.Tx) error { return tx.Put(bucket, key, value) })
	if err != nil {
		t.Fatalf("Update(Put(%q, %q)) = %v", bucket, key, err)
	}
}

func putAll(t *testing.T, s custodian.Store, bucket string, kv map[string]string) {
	t.Helper()
	err := s.Update(func(tx custodian.Tx) error {
		for k, v := range kv {
			if err := tx.Put(bucket, k, []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update(Put %d keys into %q) = %v", len(kv), bucket, err)
	}
}

// get reads one value in its own View.
func get(t *testing.T, s custodian.Store, bucket, key string) (value []byte, ok bool) {
	t.Helper()
	err := s.View(func(tx custodian.Tx) error {
		var err error
		value, ok, err = tx.Get(bucket, key)
		return err
	})
	if err != nil {
		t.Fatalf("View(Get(%q, %q)) = %v", bucket, key, err)
	}
	return value, ok
}

// contents returns every key and value of bucket, read in one View.
func contents(t *testing.T, s custodian.Store, bucket string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := s.View(func(tx custodian.Tx) error {
		return tx.ForEach(bucket, func(k string, v []byte) error {
			got[k] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatalf("View(ForEach(%q)) = %v", bucket, err)
	}
	return got
}

func checkContents(t *testing.T, s custodian.Store, bucket string, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, contents(t, s, bucket)); diff != "" {
		t.Errorf("contents of bucket %q (-want +got):\n%s", bucket, diff)
	}
}

// summary describes a value briefly, for failure messages about large values.
func summary(v []byte) string {
	if len(v) <= 32 {
		return strconv.Quote(string(v))
	}
	return fmt.Sprintf("%d bytes sha256:%x", len(v), sha256.Sum256(v))
}

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	var s [32]byte
	s[0] = byte(seed)
	r := rand.NewChaCha8(s)
	b := make([]byte, n)
	r.Read(b)
	return b
}

func scribble(b []byte) {
	for i := range b {
		b[i] = 0xAA
	}
}

func testGetMissing(t *testing.T, s custodian.Store) {
	put(t, s, "present", "k", []byte("v"))
	put(t, s, "present", "gone", []byte("v"))
	err := s.Update(func(tx custodian.Tx) error { return tx.Delete("present", "gone") })
	if err != nil {
		t.Fatalf("Update(Delete) = %v", err)
	}
	tests := []struct{ name, bucket, key string }{
		{"missing bucket", "absent", "k"},
		{"missing key", "present", "nokey"},
		{"deleted key", "present", "gone"},
		{"key of another bucket", "present", "absent"},
		{"empty bucket name", "", "k"},
		{"empty key", "present", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(tx custodian.Tx) error {
				v, ok, err := tx.Get(tt.bucket, tt.key)
				if v != nil || ok || err != nil {
					t.Errorf("Get(%q, %q) = %q, %v, %v; want nil, false, nil", tt.bucket, tt.key, v, ok, err)
				}
				return nil
			}
			if err := s.View(check); err != nil {
				t.Errorf("View = %v", err)
			}
			if err := s.Update(check); err != nil {
				t.Errorf("Update = %v", err)
			}
		})
	}
}

func testRoundTrip(t *testing.T, s custodian.Store) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name  string
		value []byte
	}{
		{"text", []byte("hello, world")},
		{"empty", []byte{}},
		{"nil", nil},
		{"every byte", all},
		{"zeros", make([]byte, 4096)},
		{"json", []byte(`{"key":"identity.full_name","value":"\u0000 é"}`)},
		{"1 MiB", randomBytes(1<<20, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "k-" + strings.ReplaceAll(tt.name, " ", "-")
			err := s.Update(func(tx custodian.Tx) error {
				if err := tx.Put("values", key, tt.value); err != nil {
					return err
				}
				v, ok, err := tx.Get("values", key)
				if !ok || err != nil || !bytes.Equal(v, tt.value) {
					t.Errorf("in Update: Get = %s, %v, %v; want %s, true, nil", summary(v), ok, err, summary(tt.value))
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			v, ok := get(t, s, "values", key)
			if !ok || !bytes.Equal(v, tt.value) {
				t.Errorf("in View: Get = %s, %v; want %s, true", summary(v), ok, summary(tt.value))
			}
		})
	}
}

func testOverwrite(t *testing.T, s custodian.Store) {
	put(t, s, "b", "k", []byte("first"))
	put(t, s, "b", "k", []byte("second, longer than the first"))
	if v, _ := get(t, s, "b", "k"); string(v) != "second, longer than the first" {
		t.Errorf("after two Updates: Get = %q; want the second value", v)
	}
	err := s.Update(func(tx custodian.Tx) error {
		for _, v := range []string{"third", "fourth"} {
			if err := tx.Put("b", "k", []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	checkContents(t, s, "b", map[string]string{"k": "fourth"})
}

func testBucketsIndependent(t *testing.T, s custodian.Store) {
	putAll(t, s, "one", map[string]string{"k": "one's", "only-one": "x"})
	putAll(t, s, "two", map[string]string{"k": "two's"})
	checkContents(t, s, "one", map[string]string{"k": "one's", "only-one": "x"})
	checkContents(t, s, "two", map[string]string{"k": "two's"})
	if _, ok := get(t, s, "two", "only-one"); ok {
		t.Errorf("Get(two, only-one) found a key of bucket one")
	}
}

func testEmptyNamesRefused(t *testing.T, s custodian.Store) {
	tests := []struct{ name, bucket, key string }{
		{"empty bucket", "", "k"},
		{"empty key", "b", ""},
		{"both empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Update(func(tx custodian.Tx) error {
				if err := tx.Put(tt.bucket, tt.key, []byte("v")); err == nil {
					t.Errorf("Put(%q, %q) = nil; want an error", tt.bucket, tt.key)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			if v, ok := get(t, s, tt.bucket, tt.key); ok {
				t.Errorf("after refused Put: Get(%q, %q) = %q, true; want not found", tt.bucket, tt.key, v)
			}
			checkContents(t, s, tt.bucket, map[string]string{})
		})
	}
}

func testUpdateRollback(t *testing.T, s custodian.Store) {
	kept := map[string]string{"a": "1", "b": "2"}
	putAll(t, s, "kept", kept)
	tests := []struct {
		name  string
		write func(tx custodian.Tx) error
	}{
		{"overwrite", func(tx custodian.Tx) error { return tx.Put("kept", "a", []byte("changed")) }},
		{"add", func(tx custodian.Tx) error { return tx.Put("kept", "c", []byte("new")) }},
		{"delete", func(tx custodian.Tx) error { return tx.Delete("kept", "b") }},
		{"new bucket", func(tx custodian.Tx) error { return tx.Put("fresh", "x", []byte("new")) }},
		{"all at once", func(tx custodian.Tx) error {
			return errors.Join(
				tx.Put("kept", "a", []byte("changed")),
				tx.Put("kept", "c", []byte("new")),
				tx.Delete("kept", "b"),
				tx.Put("fresh", "x", []byte("new")),
			)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			boom := newTestError("rollback " + tt.name)
			err := s.Update(func(tx custodian.Tx) error {
				if err := tt.write(tx); err != nil {
					t.Errorf("write = %v", err)
				}
				return boom
			})
			checkUnchanged(t, "Update", err, boom)
			checkContents(t, s, "kept", kept)
			checkContents(t, s, "fresh", map[string]string{})
		})
	}
}

func testUpdateSeesOwnWrites(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"old": "o", "doomed": "d"})
	err := s.Update(func(tx custodian.Tx) error {
		if err := tx.Put("b", "new", []byte("n")); err != nil {
			return err
		}
		if err := tx.Delete("b", "doomed"); err != nil {
			return err
		}
		if v, ok, err := tx.Get("b", "new"); string(v) != "n" || !ok || err != nil {
			t.Errorf("Get(b, new) after Put = %q, %v, %v; want \"n\", true, nil", v, ok, err)
		}
		if v, ok, err := tx.Get("b", "doomed"); ok || err != nil {
			t.Errorf("Get(b, doomed) after Delete = %q, %v, %v; want nil, false, nil", v, ok, err)
		}
		got := map[string]string{}
		err := tx.ForEach("b", func(k string, v []byte) error {
			got[k] = string(v)
			return nil
		})
		if diff := cmp.Diff(map[string]string{"old": "o", "new": "n"}, got); err != nil || diff != "" {
			t.Errorf("ForEach in the Update = %v, contents (-want +got):\n%s", err, diff)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
}

func testViewReadOnly(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"k": "v"})
	err := s.View(func(tx custodian.Tx) error {
		if err := tx.Put("b", "k", []byte("changed")); err == nil {
			t.Errorf("Put(b, k) in View = nil; want an error")
		}
		if err := tx.Put("b", "new", []byte("new")); err == nil {
			t.Errorf("Put(b, new) in View = nil; want an error")
		}
		if err := tx.Put("new", "k", []byte("new")); err == nil {
			t.Errorf("Put(new, k) in View = nil; want an error")
		}
		if err := tx.Delete("b", "k"); err == nil {
			t.Errorf("Delete(b, k) in View = nil; want an error")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View = %v", err)
	}
	checkContents(t, s, "b", map[string]string{"k": "v"})
	checkContents(t, s, "new", map[string]string{})
}

func testViewErrorUnchanged(t *testing.T, s custodian.Store) {
	put(t, s, "b", "k", []byte("v"))
	boom := newTestError("view failed")
	err := s.View(func(tx custodian.Tx) error {
		if _, _, err := tx.Get("b", "k"); err != nil {
			t.Errorf("Get = %v", err)
		}
		return boom
	})
	checkUnchanged(t, "View", err, boom)
}

// testViewIsolation holds an Update open after its writes and checks that a
// View started meanwhile sees none of them, whether the Update then commits
// or rolls back.
func testViewIsolation(t *testing.T, s custodian.Store) {
	tests := []struct {
		name   string
		result *testError // nil: commit
		want   string     // the value of every key after the Update
	}{
		{"commit", nil, "1"},
		{"rollback", newTestError("rollback"), "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]string{"a": "0", "b": "0", "c": "0"}
			putAll(t, s, "iso", before)
			written, release := make(chan struct{}), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- s.Update(func(tx custodian.Tx) error {
					for _, k := range []string{"a", "b", "c"} {
						if err := tx.Put("iso", k, []byte("1")); err != nil {
							return err
						}
					}
					if err := tx.Put("iso", "d", []byte("1")); err != nil {
						return err
					}
					close(written)
					<-release
					if tt.result != nil {
						return tt.result
					}
					return nil
				})
			}()
			select {
			case <-written:
			case err := <-done:
				t.Fatalf("Update before its writes were done = %v", err)
			}
			checkContents(t, s, "iso", before)
			close(release)
			err := <-done
			if tt.result == nil && err != nil {
				t.Fatalf("Update = %v", err)
			}
			if tt.result != nil {
				checkUnchanged(t, "Update", err, tt.result)
			}
			want := map[string]string{"a": tt.want, "b": tt.want, "c": tt.want}
			if tt.result == nil {
				want["d"] = "1"
			}
			checkContents(t, s, "iso", want)
			err = s.Update(func(tx custodian.Tx) error { return tx.Delete("iso", "d") })
			if err != nil {
				t.Fatalf("Update(Delete) = %v", err)
			}
		})
	}
}

// orderKeys are keys whose ascending byte order differs from insertion order,
// from a naive numeric order and from a Unicode-aware one.
var orderKeys = []string{"b", "a", "ab", "a\x00", "A", "\x00", "\xff", "10", "9", "é", "z", "aa", "a\xff", "Z"}

func testForEachOrder(t *testing.T, s custodian.Store) {
	kv := map[string]string{}
	err := s.Update(func(tx custodian.Tx) error {
		for i, k := range orderKeys {
			kv[k] = "v" + strconv.Itoa(i)
			if err := tx.Put("order", k, []byte(kv[k])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	want := slices.Sorted(maps.Keys(kv))
	for _, name := range []string{"View", "Update"} {
		run := s.View
		if name == "Update" {
			run = s.Update
		}
		var got []string
		err := run(func(tx custodian.Tx) error {
			return tx.ForEach("order", func(k string, v []byte) error {
				got = append(got, k)
				if string(v) != kv[k] {
					t.Errorf("ForEach: value of %q = %q; want %q", k, v, kv[k])
				}
				return nil
			})
		})
		if err != nil {
			t.Fatalf("%s(ForEach) = %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: ForEach key order (-want +got):\n%s", name, diff)
		}
	}
}

func testForEachValueBelongsToFn(t *testing.T, s custodian.Store) {
	kv := map[string]string{"a": "alpha", "b": "bravo", "c": "charlie"}
	putAll(t, s, "b", kv)
	kept := map[string][]byte{}
	err := s.View(func(tx custodian.Tx) error {
		return tx.ForEach("b", func(k string, v []byte) error {
			kept[k] = v
			return nil
		})
	})
	if err != nil {
		t.Fatalf("View(ForEach) = %v", err)
	}
	for _, run := range []func(func(custodian.Tx) error) error{s.View, s.Update} {
		err := run(func(tx custodian.Tx) error {
			return tx.ForEach("b", func(k string, v []byte) error {
				scribble(v)
				_ = append(v[:0], "overwritten"...)
				return nil
			})
		})
		if err != nil {
			t.Fatalf("ForEach scribbling = %v", err)
		}
	}
	checkContents(t, s, "b", kv)
	// Values kept from an earlier transaction still hold their data.
	for k, v := range kept {
		if string(v) != kv[k] {
			t.Errorf("value of %q kept after its View = %q; want %q", k, v, kv[k])
		}
	}
}

func testForEachStops(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"1": "", "2": "", "3": "", "4": "", "5": ""})
	boom := newTestError("stop")
	var seen []string
	var err error
	verr := s.View(func(tx custodian.Tx) error {
		err = tx.ForEach("b", func(k string, _ []byte) error {
			seen = append(seen, k)
			if len(seen) == 3 {
				return boom
			}
			return nil
		})
		return nil
	})
	if verr != nil {
		t.Fatalf("View = %v", verr)
	}
	checkUnchanged(t, "ForEach", err, boom)
	if diff := cmp.Diff([]string{"1", "2", "3"}, seen); diff != "" {
		t.Errorf("keys visited before the error (-want +got):\n%s", diff)
	}
}

// testForEachPrefix: a Tx that is a custodian.Prefixer visits exactly the
// keys with the prefix, in order, committed and staged alike, deleted ones
// not at all.
func testForEachPrefix(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"a": "0", "a/1": "1", "a/3": "3", "a/9": "gone", "a0": "x", "ab/1": "x", "b/1": "x", "/a/1": "x"})
	collect := func(tx custodian.Tx, prefix string) []string {
		p, ok := tx.(custodian.Prefixer)
		if !ok {
			t.Skip("the store's Tx is not a custodian.Prefixer")
		}
		var got []string
		if err := p.ForEachPrefix("b", prefix, func(k string, v []byte) error {
			got = append(got, k+"="+string(v))
			return nil
		}); err != nil {
			t.Fatalf("ForEachPrefix(%q) = %v", prefix, err)
		}
		return got
	}
	if err := s.View(func(tx custodian.Tx) error {
		if diff := cmp.Diff([]string{"a/1=1", "a/3=3", "a/9=gone"}, collect(tx, "a/")); diff != "" {
			t.Errorf("committed keys under a/ (-want +got):\n%s", diff)
		}
		if got := collect(tx, "zz/"); len(got) != 0 {
			t.Errorf("keys under zz/ = %q; want none", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx custodian.Tx) error {
		for k, v := range map[string]string{"a/2": "2", "a/4": "4"} {
			if err := tx.Put("b", k, []byte(v)); err != nil {
				return err
			}
		}
		if err := tx.Delete("b", "a/9"); err != nil {
			return err
		}
		if diff := cmp.Diff([]string{"a/1=1", "a/2=2", "a/3=3", "a/4=4"}, collect(tx, "a/")); diff != "" {
			t.Errorf("keys under a/ with staged writes (-want +got):\n%s", diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(tx custodian.Tx) error {
		if diff := cmp.Diff([]string{"a/1=1", "a/2=2", "a/3=3", "a/4=4"}, collect(tx, "a/")); diff != "" {
			t.Errorf("keys under a/ after the commit (-want +got):\n%s", diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// testForEachFrom: a Tx that is a custodian.Seeker visits exactly the keys
// at or after from, in order, committed and staged alike, deleted ones not
// at all, and stops when fn says so.
func testForEachFrom(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"a": "0", "a/1": "1", "a/3": "3", "a/9": "gone", "b": "b", "c/1": "c"})
	stop := newTestError("stop")
	collect := func(tx custodian.Tx, from string, most int) []string {
		sk, ok := tx.(custodian.Seeker)
		if !ok {
			t.Skip("the store's Tx is not a custodian.Seeker")
		}
		var got []string
		err := sk.ForEachFrom("b", from, func(k string, v []byte) error {
			if len(got) == most {
				return stop
			}
			got = append(got, k+"="+string(v))
			return nil
		})
		if err != nil && err != stop {
			t.Fatalf("ForEachFrom(%q) = %v", from, err)
		}
		return got
	}
	if err := s.View(func(tx custodian.Tx) error {
		for _, tc := range []struct {
			from string
			most int
			want []string
		}{
			{"", 100, []string{"a=0", "a/1=1", "a/3=3", "a/9=gone", "b=b", "c/1=c"}},
			{"a/", 100, []string{"a/1=1", "a/3=3", "a/9=gone", "b=b", "c/1=c"}},
			{"a/3", 2, []string{"a/3=3", "a/9=gone"}},
			{"a/4", 100, []string{"a/9=gone", "b=b", "c/1=c"}},
			{"c/1\x00", 100, nil},
			{"zz", 100, nil},
		} {
			if diff := cmp.Diff(tc.want, collect(tx, tc.from, tc.most)); diff != "" {
				t.Errorf("committed keys from %q, at most %d (-want +got):\n%s", tc.from, tc.most, diff)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx custodian.Tx) error {
		for k, v := range map[string]string{"a/2": "2", "a/4": "4", "bb": "x"} {
			if err := tx.Put("b", k, []byte(v)); err != nil {
				return err
			}
		}
		if err := tx.Delete("b", "a/9"); err != nil {
			return err
		}
		if diff := cmp.Diff([]string{"a/3=3", "a/4=4", "b=b", "bb=x"}, collect(tx, "a/3", 4)); diff != "" {
			t.Errorf("keys from a/3 with staged writes (-want +got):\n%s", diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(tx custodian.Tx) error {
		if diff := cmp.Diff([]string{"a/2=2", "a/3=3", "a/4=4", "b=b", "bb=x", "c/1=c"}, collect(tx, "a/2", 100)); diff != "" {
			t.Errorf("keys from a/2 after the commit (-want +got):\n%s", diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func testForEachMissingBucket(t *testing.T, s custodian.Store) {
	put(t, s, "other", "k", []byte("v"))
	for _, bucket := range []string{"absent", ""} {
		err := s.View(func(tx custodian.Tx) error {
			return tx.ForEach(bucket, func(k string, _ []byte) error {
				t.Errorf("ForEach(%q) visited key %q; want none", bucket, k)
				return nil
			})
		})
		if err != nil {
			t.Errorf("ForEach(%q) = %v; want nil", bucket, err)
		}
	}
}

func testDelete(t *testing.T, s custodian.Store) {
	putAll(t, s, "b", map[string]string{"doomed": "d", "stays": "s"})
	tests := []struct{ name, bucket, key string }{
		{"existing key", "b", "doomed"},
		{"missing key", "b", "absent"},
		{"key deleted before", "b", "doomed"},
		{"missing bucket", "absent", "k"},
		{"empty key", "b", ""},
		{"empty bucket", "", "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Update(func(tx custodian.Tx) error { return tx.Delete(tt.bucket, tt.key) })
			if err != nil {
				t.Errorf("Update(Delete(%q, %q)) = %v; want nil", tt.bucket, tt.key, err)
			}
			checkContents(t, s, "b", map[string]string{"stays": "s"})
		})
	}
	err := s.Update(func(tx custodian.Tx) error {
		if err := tx.Put("b", "doomed", []byte("again")); err != nil {
			return err
		}
		return tx.Delete("b", "doomed")
	})
	if err != nil {
		t.Fatalf("Update(Put, Delete) = %v", err)
	}
	checkContents(t, s, "b", map[string]string{"stays": "s"})
}

func testGetReturnsCopy(t *testing.T, s custodian.Store) {
	const orig = "original value"
	put(t, s, "b", "k", []byte(orig))
	for _, run := range []func(func(custodian.Tx) error) error{s.View, s.Update} {
		var kept []byte
		err := run(func(tx custodian.Tx) error {
			v, _, err := tx.Get("b", "k")
			if err != nil {
				return err
			}
			scribble(v)
			if v, _, _ := tx.Get("b", "k"); string(v) != orig {
				t.Errorf("Get after scribbling an earlier result = %q; want %q", v, orig)
			}
			kept, _, err = tx.Get("b", "k")
			return err
		})
		if err != nil {
			t.Fatalf("transaction = %v", err)
		}
		if string(kept) != orig {
			t.Errorf("value kept after its transaction = %q; want %q", kept, orig)
		}
		scribble(kept)
		if v, _ := get(t, s, "b", "k"); string(v) != orig {
			t.Errorf("Get in a later View = %q; want %q", v, orig)
		}
	}
}

func testPutDoesNotRetain(t *testing.T, s custodian.Store) {
	const orig = "original value"
	buf := []byte(orig)
	err := s.Update(func(tx custodian.Tx) error {
		if err := tx.Put("b", "k", buf); err != nil {
			return err
		}
		scribble(buf)
		if v, _, err := tx.Get("b", "k"); string(v) != orig || err != nil {
			t.Errorf("Get in the same Update after scribbling the Put slice = %q, %v; want %q", v, err, orig)
		}
		buf = append(buf[:0], "rewritten"...)
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	scribble(buf)
	if v, _ := get(t, s, "b", "k"); string(v) != orig {
		t.Errorf("Get after the Update = %q; want %q", v, orig)
	}
}

func testClose(t *testing.T, s custodian.Store) {
	put(t, s, "b", "k", []byte("v"))
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := s.View(func(custodian.Tx) error { return nil }); err == nil {
		t.Errorf("View after Close = nil; want an error")
	}
	if err := s.Update(func(tx custodian.Tx) error { return tx.Put("b", "k2", []byte("v")) }); err == nil {
		t.Errorf("Update after Close = nil; want an error")
	}
}

// testConcurrent runs writers that move amounts between accounts, keeping the
// total constant, alongside readers that check the total: a reader that saw
// part of an Update would see another total. Each writer also logs every
// Update under its own key, and all of them must be kept.
func testConcurrent(t *testing.T, s custodian.Store) {
	const (
		accounts   = 5
		start      = 100
		writers    = 25
		readers    = 25
		writes     = 8  // Updates per writer
		reads      = 20 // Views per reader
		wantTotal  = accounts * start
		logBucket  = "log"
		bankBucket = "bank"
	)
	initial := map[string]string{}
	for i := range accounts {
		initial["acct"+strconv.Itoa(i)] = strconv.Itoa(start)
	}
	putAll(t, s, bankBucket, initial)

	// total reads every account with Get and with ForEach.
	total := func(tx custodian.Tx) (viaGet, viaForEach int, err error) {
		for i := range accounts {
			v, _, err := tx.Get(bankBucket, "acct"+strconv.Itoa(i))
			if err != nil {
				return 0, 0, err
			}
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return 0, 0, err
			}
			viaGet += n
		}
		err = tx.ForEach(bankBucket, func(_ string, v []byte) error {
			n, err := strconv.Atoi(string(v))
			viaForEach += n
			return err
		})
		return viaGet, viaForEach, err
	}

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range writes {
				err := s.Update(func(tx custodian.Tx) error {
					from, to := "acct"+strconv.Itoa(r.IntN(accounts)), "acct"+strconv.Itoa(r.IntN(accounts))
					amount := r.IntN(20)
					fv, _, err := tx.Get(bankBucket, from)
					if err != nil {
						return err
					}
					f, _ := strconv.Atoi(string(fv))
					if err := tx.Put(bankBucket, from, []byte(strconv.Itoa(f-amount))); err != nil {
						return err
					}
					tv, _, err := tx.Get(bankBucket, to) // after the Put: from may equal to
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(string(tv))
					if err := tx.Put(bankBucket, to, []byte(strconv.Itoa(n+amount))); err != nil {
						return err
					}
					return tx.Put(logBucket, fmt.Sprintf("w%02d-%02d", w, i), []byte("x"))
				})
				if err != nil {
					t.Errorf("writer %d: Update = %v", w, err)
					return
				}
			}
		})
	}
	for rd := range readers {
		wg.Go(func() {
			for range reads {
				err := s.View(func(tx custodian.Tx) error {
					g, f, err := total(tx)
					if err != nil {
						return err
					}
					if g != wantTotal || f != wantTotal {
						t.Errorf("reader %d: total via Get = %d, via ForEach = %d; want %d", rd, g, f, wantTotal)
					}
					return nil
				})
				if err != nil {
					t.Errorf("reader %d: View = %v", rd, err)
					return
				}
			}
		})
	}
	wg.Wait()

	if got := len(contents(t, s, logBucket)); got != writers*writes {
		t.Errorf("after the writers: %d log keys; want %d", got, writers*writes)
	}
	err := s.View(func(tx custodian.Tx) error {
		g, f, err := total(tx)
		if err == nil && (g != wantTotal || f != wantTotal) {
			t.Errorf("after the writers: total via Get = %d, via ForEach = %d; want %d", g, f, wantTotal)
		}
		return err
	})
	if err != nil {
		t.Fatalf("View = %v", err)
	}
}
