package storetest

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phc-project/phc/custodian"
)

// RunDurable runs the persistence part of the contract against stores that
// keep their data across Close: every committed write survives a close and
// reopen, and nothing of a rolled-back Update does. open returns a new, empty
// store; reopen closes old and returns a store over the same data. The suite
// closes the last store of each subtest.
func RunDurable(t *testing.T, open func(t *testing.T) custodian.Store, reopen func(t *testing.T, old custodian.Store) custodian.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s custodian.Store, reopen func(custodian.Store) custodian.Store)
	}{
		{"EmptyReopens", testEmptyReopens},
		{"CommittedKept", testCommittedKept},
		{"RollbackNotKept", testRollbackNotKept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			reopenClosing := func(old custodian.Store) custodian.Store {
				t.Helper()
				s := reopen(t, old)
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			t.Cleanup(func() { _ = s.Close() }) // may be the second Close
			tt.fn(t, s, reopenClosing)
		})
	}
}

// snapshot is the whole content of some buckets: bucket → key → value.
type snapshot map[string]map[string][]byte

func readSnapshot(t *testing.T, s custodian.Store, buckets ...string) snapshot {
	t.Helper()
	got := snapshot{}
	err := s.View(func(tx custodian.Tx) error {
		for _, b := range buckets {
			got[b] = map[string][]byte{}
			err := tx.ForEach(b, func(k string, v []byte) error {
				got[b][k] = v
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View(ForEach) = %v", err)
	}
	return got
}

// checkSnapshot compares the buckets of want with the store's, summarising
// large values in failure messages.
func checkSnapshot(t *testing.T, s custodian.Store, want snapshot) {
	t.Helper()
	got := readSnapshot(t, s, slices.Sorted(maps.Keys(want))...)
	for _, b := range slices.Sorted(maps.Keys(want)) {
		wantKeys, gotKeys := slices.Sorted(maps.Keys(want[b])), slices.Sorted(maps.Keys(got[b]))
		if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
			t.Errorf("keys of bucket %q (-want +got):\n%s", b, diff)
			continue
		}
		for _, k := range wantKeys {
			if !bytes.Equal(want[b][k], got[b][k]) {
				t.Errorf("%s/%s = %s; want %s", b, k, summary(got[b][k]), summary(want[b][k]))
			}
		}
	}
}

func testEmptyReopens(t *testing.T, s custodian.Store, reopen func(custodian.Store) custodian.Store) {
	s = reopen(s)
	checkSnapshot(t, s, snapshot{"b": {}})
	put(t, s, "b", "k", []byte("v"))
	s = reopen(s)
	checkSnapshot(t, s, snapshot{"b": {"k": []byte("v")}})
}

func testCommittedKept(t *testing.T, s custodian.Store, reopen func(custodian.Store) custodian.Store) {
	big := randomBytes(1<<20, 2)
	want := snapshot{
		"claims":  {"clm_1": []byte("one"), "clm_2": []byte("two, v2"), "clm_big": big, "clm_empty": {}},
		"grants":  {"grt_1": []byte{0, 1, 2, 0xff}},
		"deleted": {},
	}
	updates := []func(tx custodian.Tx) error{
		func(tx custodian.Tx) error {
			return errors.Join(
				tx.Put("claims", "clm_1", []byte("one")),
				tx.Put("claims", "clm_2", []byte("two")),
				tx.Put("deleted", "gone", []byte("soon gone")),
			)
		},
		func(tx custodian.Tx) error {
			return errors.Join(
				tx.Put("claims", "clm_big", big),
				tx.Put("claims", "clm_empty", nil),
				tx.Put("grants", "grt_1", []byte{0, 1, 2, 0xff}),
			)
		},
		func(tx custodian.Tx) error {
			return errors.Join(
				tx.Put("claims", "clm_2", []byte("two, v2")),
				tx.Delete("deleted", "gone"),
			)
		},
	}
	for i, u := range updates {
		if err := s.Update(u); err != nil {
			t.Fatalf("Update #%d = %v", i, err)
		}
	}
	checkSnapshot(t, s, want)
	s = reopen(s)
	checkSnapshot(t, s, want)

	// The reopened store takes writes, and keeps them too.
	put(t, s, "claims", "clm_3", []byte("three"))
	want["claims"]["clm_3"] = []byte("three")
	s = reopen(s)
	checkSnapshot(t, s, want)
}

func testRollbackNotKept(t *testing.T, s custodian.Store, reopen func(custodian.Store) custodian.Store) {
	putAll(t, s, "claims", map[string]string{"clm_1": "one", "clm_2": "two"})
	boom := newTestError("rollback")
	err := s.Update(func(tx custodian.Tx) error {
		if err := errors.Join(
			tx.Put("claims", "clm_1", []byte("changed")),
			tx.Put("claims", "clm_3", []byte("three")),
			tx.Delete("claims", "clm_2"),
			tx.Put("fresh", "x", []byte("new")),
		); err != nil {
			t.Errorf("writes = %v", err)
		}
		return boom
	})
	checkUnchanged(t, "Update", err, boom)
	s = reopen(s)
	checkSnapshot(t, s, snapshot{
		"claims": {"clm_1": []byte("one"), "clm_2": []byte("two")},
		"fresh":  {},
	})
}
