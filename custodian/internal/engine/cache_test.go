package engine

import (
	"errors"
	"fmt"
	"testing"
)

type version struct {
	n   int
	val string
}

type rec struct {
	Resident[version]
	id      string
	head    int
	evicted int
}

func (r *rec) Res() *Resident[version] { return &r.Resident }
func (r *rec) Ident() (string, int)    { return r.id, r.head }
func (r *rec) Evicted()                { r.evicted++ }

// newTestCache is a cache of budget bytes where every version weighs 10
// and reads count in *reads; a read of a version in bad fails.
func newTestCache(budget int64, reads *int, bad map[string]bool) *Cache[version, *rec] {
	read := func(id string, vs ...int) ([]*version, error) {
		*reads++
		out := make([]*version, len(vs))
		for i, v := range vs {
			key := fmt.Sprintf("%s@%d", id, v)
			if bad[key] {
				return nil, errors.New("unreadable " + key)
			}
			out[i] = &version{n: v, val: key}
		}
		return out, nil
	}
	return NewCache[version, *rec](budget, read, func(*version) int64 { return 10 }, func(v *version) int { return v.n })
}

// TestCacheKeepsWhatIsNotDurable: the cache evicts to its budget, oldest
// first, but never a head whose group is not durable yet (the store may
// not have it), and gives a head read since its last pass a second chance.
func TestCacheKeepsWhatIsNotDurable(t *testing.T) {
	var reads int
	cc := newTestCache(30, &reads, nil)
	admit := func(id string, group uint64) *rec {
		r := &rec{id: id, head: 1}
		r.Group = group
		r.Hold(&version{n: 1, val: id}, nil)
		cc.Admit(r, r.Loaded())
		return r
	}
	recs := []*rec{admit("c0", 1), admit("c1", 2), admit("c2", 3), admit("c3", 4)} // over the budget
	for i, r := range recs {
		if r.Loaded() == nil || r.evicted != 0 {
			t.Fatalf("record %d evicted before its group is durable", i)
		}
	}
	cc.SetDurable(2)
	recs[0].Touch() // read: a second chance
	admit("c4", 1)
	if recs[1].Loaded() != nil || recs[1].evicted != 1 {
		t.Errorf("the oldest durable unread head stayed resident")
	}
	if recs[0].Loaded() == nil {
		t.Errorf("a head read since the last pass was evicted before an unread one")
	}
	if recs[2].Loaded() == nil || recs[3].Loaded() == nil {
		t.Errorf("a head of a group not yet durable was evicted")
	}
	before := reads
	c, err := cc.Head(recs[1])
	if err != nil || c.val != "c1@1" || reads != before+1 {
		t.Errorf("Head of an evicted record = %v, %v after %d reads; want it read back once", c, err, reads-before)
	}
}

// TestCacheReadErrors: a version the store cannot give back is an error
// from Head, Version and Versions, never an empty version.
func TestCacheReadErrors(t *testing.T) {
	var reads int
	cc := newTestCache(1<<20, &reads, map[string]bool{"c@1": true, "c@3": true})
	r := &rec{id: "c", head: 3}
	if c, err := cc.Head(r); err == nil || c != nil {
		t.Errorf("Head = %v, %v; want an error", c, err)
	}
	if c, err := cc.Version(r, 1); err == nil || c != nil {
		t.Errorf("Version(1) = %v, %v; want an error", c, err)
	}
	if c, err := cc.Version(r, 2); err != nil || c.val != "c@2" {
		t.Errorf("Version(2) = %v, %v", c, err)
	}
	if cs, err := cc.Versions(r); err == nil || cs != nil {
		t.Errorf("Versions = %v, %v; want an error", cs, err)
	}
	var none *Cache[version, *rec]
	if _, err := none.Head(r); err == nil {
		t.Errorf("Head without a store = nil error")
	}
}

// TestCacheScan: a scan reads every version of a record in one read and
// leaves the cache as it was — a head it read is not kept, and a resident
// head is served from memory.
func TestCacheScan(t *testing.T) {
	var reads int
	cc := newTestCache(100, &reads, nil)
	cold := &rec{id: "c0", head: 3}
	vs, err := cc.Scan(cold)
	if err != nil || len(vs) != 3 || vs[0].val != "c0@1" || vs[2].val != "c0@3" || reads != 1 {
		t.Fatalf("Scan of a cold record = %v, %v after %d reads; want its 3 versions in one read", vs, err, reads)
	}
	if cold.Loaded() != nil || cc.bytes != 0 {
		t.Errorf("a scan made a head resident (%d bytes in the cache)", cc.bytes)
	}
	warm := &rec{id: "c1", head: 2}
	if _, err := cc.Head(warm); err != nil {
		t.Fatal(err)
	}
	reads = 0
	if vs, err := cc.Scan(warm); err != nil || len(vs) != 2 || vs[1] != warm.Loaded() || reads != 1 {
		t.Errorf("Scan of a resident record = %v, %v after %d reads; want the resident head and one read of the older", vs, err, reads)
	}
}
