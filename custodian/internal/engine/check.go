package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// CompareGraph compares the graph, held at rep.Revision, with want, the
// view's projection at that revision (sorted): both sorted, then walked
// side by side.
func (s *Engine) CompareGraph(ctx context.Context, rep *model.GraphReport, want []graph.Edge, touch func()) {
	rep.Problems = []string{}
	problem := func(format string, args ...any) {
		if len(rep.Problems) < 20 {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
	}
	var got []graph.Edge
	if err := s.Graph.Each(ctx, func(e graph.Edge) error {
		got = append(got, e)
		if len(got)%1024 == 0 {
			touch()          // a check at work is not idle
			return ctx.Err() // a lock broke the hold, or the caller went
		}
		return nil
	}); err != nil {
		problem("graph: %v", err)
	}
	graph.SortEdges(got)
	got = slices.Compact(got)
	want = slices.Compact(want)
	rep.Edges = len(got)
	var extra, missing []string
	for len(got) > 0 || len(want) > 0 {
		c := 0
		switch {
		case len(got) == 0:
			c = 1
		case len(want) == 0:
			c = -1
		default:
			c = graph.CompareEdges(got[0], want[0])
		}
		switch {
		case c < 0:
			rep.Extra++
			if len(extra) < 20 {
				extra = append(extra, got[0].String())
			}
			got = got[1:]
		case c > 0:
			rep.Missing++
			if len(missing) < 20 {
				missing = append(missing, want[0].String())
			}
			want = want[1:]
		default:
			got, want = got[1:], want[1:]
		}
	}
	for _, e := range missing {
		problem("missing from the graph: %s", e)
	}
	for _, e := range extra {
		problem("in the graph but not the store: %s", e)
	}
	w, err := s.Graph.Watermark()
	if err != nil {
		problem("graph watermark: %v", err)
	}
	rep.Watermark = w
	if w > rep.Revision {
		problem("the graph's watermark %d is ahead of the store's revision %d", w, rep.Revision)
	}
	rep.OK = len(rep.Problems) == 0
}

// DefaultCheckChunk is how many claim metas claimProblems compares under
// one read lock of the view (Hooks.CheckChunk: another).
const DefaultCheckChunk = 1024

// ClaimChunk compares the chunk of claim metas that begins at *from (see
// claimProblems), moves *from past it, and reports whether it was the
// last. ids are the claims the view held when the check began, sorted,
// from *from on.
func (s *Engine) ClaimChunk(op string, st *State, ids []string, from *string, problems *[]string) (done bool, err error) {
	// First read: the chunk's metas, decoded, with no lock held.
	type read struct {
		raw  []byte
		meta ClaimMeta
		err  error
		met  bool // met again at the cut
	}
	decode := func(raw []byte) *read {
		r := &read{raw: raw}
		r.err = fastjson.Unmarshal(raw, &r.meta)
		return r
	}
	pre := make(map[string]*read, s.Hooks.CheckChunk)
	err = s.Store.View(func(tx Tx) error {
		return ForEachFrom(tx, BucketClaimMeta, *from, func(id string, raw []byte) error {
			if len(pre) == s.Hooks.CheckChunk {
				return errStopWalk
			}
			pre[id] = decode(raw)
			return nil
		})
	})
	if err != nil && err != errStopWalk {
		return false, model.Wrap(op, model.KindInternal, err)
	}
	s.Hooks.Pause("claims")
	// Second read, at a cut: compare.
	problem := func(id, what string) { *problems = append(*problems, "claim "+id+": "+what) }
	err = s.atCut(op, st, func(tx Tx) error {
		n, last := 0, ""
		err := ForEachFrom(tx, BucketClaimMeta, *from, func(id string, raw []byte) error {
			if n == s.Hooks.CheckChunk {
				return errStopWalk
			}
			n, last = n+1, id
			r := pre[id]
			if r == nil || !bytes.Equal(r.raw, raw) {
				r = decode(raw)
				pre[id] = r
			}
			r.met = true
			v := st.Claims[id]
			switch {
			case r.err != nil:
				problem(id, "its meta in the store does not decode")
			case v == nil:
				problem(id, "in the store, not in the view")
			default:
				m := r.meta
				m.ID = id
				if !reflect.DeepEqual(normalMeta(m), normalMeta(v.Meta)) {
					problem(id, "the view's meta differs from the store's")
				}
			}
			return nil
		})
		if err != nil && err != errStopWalk {
			return err
		}
		// The chunk covers [from, last], or [from, …) when the walk
		// reached the bucket's end.
		done = n < s.Hooks.CheckChunk
		for _, id := range ids {
			if !done && id > last {
				break
			}
			if r := pre[id]; (r == nil || !r.met) && st.Claims[id] != nil {
				problem(id, "in the view, not in the store")
			}
		}
		*from = last + "\x00"
		return nil
	})
	return done, err
}

// errStopWalk ends a walk over a bucket early.
var errStopWalk = errors.New("stop the walk")

// atCut runs fn on a store transaction that agrees with the view, with the
// view read-locked: every group the view has applied is durable, so
// committed before the transaction began, and no other can be applied
// until fn returns. If a group is being committed, it waits for it first.
func (s *Engine) atCut(op string, st *State, fn func(tx Tx) error) error {
	for {
		var wait uint64
		var err error
		uerr := st.ReadLocked(func() {
			durable, failed := st.Dur.State()
			switch {
			case st.Broken || failed:
				err = model.Internalf(op, "the view is broken")
			case durable < st.Applied:
				wait = st.Applied
				s.Hooks.Pause("cut")
			default:
				if err = s.Store.View(fn); err != nil {
					err = model.Wrap(op, model.KindInternal, err)
				}
			}
		})
		if uerr != nil {
			return uerr
		}
		if wait == 0 {
			return err
		}
		if err := st.AwaitDurable(op, wait); err != nil {
			return err
		}
	}
}

// normalMeta is m as compared: no personas is no personas, and instants
// compare as instants.
func normalMeta(m ClaimMeta) ClaimMeta {
	if len(m.Personas) == 0 {
		m.Personas = nil
	}
	if m.DisputedAt != nil {
		at := m.DisputedAt.UTC()
		m.DisputedAt = &at
	}
	return m
}
