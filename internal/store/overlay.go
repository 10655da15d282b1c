package store

import (
	"strings"

	"github.com/tidwall/btree"
)

// entry is one write that is in the log but maybe not yet in the bbolt
// file: a sealed value, or a deletion. Trees hold pointers to entries: a
// copy-on-write clone copies a node's items, 8 bytes each rather than the
// entry's 56. An entry is not changed once an overlay holds it.
type entry struct {
	key    string
	ct     []byte // the sealed value; nil: deleted
	seq    uint64 // the log record that wrote it; 0 while its Update runs
	append bool   // written by Append
}

func entryLess(a, b *entry) bool { return a.key < b.key }

// op is the log op that makes e in the file.
func (e *entry) op() byte {
	switch {
	case e.ct == nil:
		return opDelete
	case e.append:
		return opAppend
	}
	return opPut
}

// overlay is the set of writes not yet flushed to the bbolt file, by
// bucket, each ordered by key. A published overlay is never modified: a
// change clones the trees it touches (lazily, copy-on-write) and publishes
// a new overlay, so a transaction reads the overlay it started with.
type overlay struct {
	buckets map[string]*btree.BTreeG[*entry]
	bytes   int    // about how much memory the entries hold
	maxSeq  uint64 // the newest record whose writes it holds
}

var emptyOverlay = &overlay{buckets: map[string]*btree.BTreeG[*entry]{}}

func newTree() *btree.BTreeG[*entry] {
	return btree.NewBTreeGOptions(entryLess, btree.Options{Degree: 16, NoLocks: true})
}

// get returns the entry for bucket/key, if o has one.
func (o *overlay) get(bucket, key string) (*entry, bool) {
	t := o.buckets[bucket]
	if t == nil {
		return nil, false
	}
	return t.Get(&entry{key: key})
}

func (o *overlay) empty() bool { return len(o.buckets) == 0 }

// with returns a new overlay: o with writes (an Update's, by bucket, which
// it numbers seq and which must not change afterwards) added.
func (o *overlay) with(writes map[string]*btree.BTreeG[*entry], seq uint64) *overlay {
	n := &overlay{buckets: make(map[string]*btree.BTreeG[*entry], len(o.buckets)+len(writes)), bytes: o.bytes, maxSeq: seq}
	for b, t := range o.buckets {
		n.buckets[b] = t
	}
	for b, w := range writes {
		t := n.buckets[b]
		if t == nil {
			t = newTree()
		} else {
			t = t.Copy()
		}
		w.Scan(func(e *entry) bool {
			e.seq = seq
			t.Set(e)
			n.bytes += entrySize(e)
			return true
		})
		n.buckets[b] = t
	}
	return n
}

// without returns a new overlay: o less the entries of records up to
// flushed, which the bbolt file now holds.
func (o *overlay) without(flushed uint64) *overlay {
	n := &overlay{buckets: make(map[string]*btree.BTreeG[*entry], len(o.buckets)), maxSeq: o.maxSeq}
	for b, t := range o.buckets {
		var keep []*entry
		t.Scan(func(e *entry) bool {
			if e.seq > flushed {
				keep = append(keep, e)
			}
			return true
		})
		if len(keep) == 0 {
			continue
		}
		nt := newTree()
		for _, e := range keep {
			nt.Set(e)
			n.bytes += entrySize(e)
		}
		n.buckets[b] = nt
	}
	return n
}

// entrySize is about what an entry costs in memory.
func entrySize(e *entry) int { return len(e.key) + len(e.ct) + 64 + 8 }

// merged returns the entries of bucket whose keys begin with prefix and
// are at or after start (at least prefix), in key order, those of top (an
// Update's own writes; may be nil) over those of o.
func merged(o *overlay, top map[string]*btree.BTreeG[*entry], bucket, start, prefix string) []*entry {
	collect := func(t *btree.BTreeG[*entry]) []*entry {
		var out []*entry
		if t == nil {
			return nil
		}
		t.Ascend(&entry{key: start}, func(e *entry) bool {
			if !strings.HasPrefix(e.key, prefix) {
				return false
			}
			out = append(out, e)
			return true
		})
		return out
	}
	a, b := collect(o.buckets[bucket]), collect(top[bucket])
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]*entry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].key < b[0].key:
			out, a = append(out, a[0]), a[1:]
		case a[0].key > b[0].key:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, b[0]), a[1:], b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}
