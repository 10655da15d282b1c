package custodian

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// Check verifies that the graph agrees with the store (every edge the
// store implies is in it, and nothing else), that no current summary has a
// parent that is not current, that the view holds every claim as its meta
// in the store says, and the receipt chain (owner only). Only the
// summaries and the projection of the view are taken in the journal. The
// graph is compared outside it, held where it was (see holdGraph), and so
// are the claims, whose metas it reads from the store (minutes at millions
// of claims on a cold file; see claimProblems): writes go on meanwhile.
func (s *Service) Check(ctx context.Context, p Principal) (CheckReport, error) {
	const op = "check"
	if err := requireOwner(op, p); err != nil {
		return CheckReport{}, err
	}
	// The vault stays open only for the journal's part, then for each
	// chunk of claims: a lock or a stop waits for no more than one step
	// (and no request behind it for longer).
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return CheckReport{}, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		doneGraph()
		return CheckReport{}, err
	}
	var rep CheckReport
	var want []graph.Edge
	held := ctx
	letGo := func() {}
	defer func() { letGo(); doneGraph() }()
	t0 := time.Now()
	var inJournal time.Duration
	// A group of its own: the graph then has every write the view has.
	err = s.commitAlone(st, func(st *state, b *batch) error {
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		defer func(t time.Time) { inJournal = time.Since(t) }(time.Now())
		rep.Summaries = st.summaryProblems()
		want = st.Projection()
		rep.Graph = GraphReport{Revision: st.Revision, Sync: st.GraphSync}
		held, letGo = s.eng.HoldGraph(ctx, st.State)
		return nil
	})
	release()
	if err != nil {
		return CheckReport{}, err
	}
	t1 := time.Now()
	s.checkPause("graph")
	s.compareGraph(held, &rep.Graph, want)
	broken := errors.Is(context.Cause(held), engine.ErrHoldBroken)
	letGo() // both again, harmlessly, when Check returns
	doneGraph()
	if broken {
		return CheckReport{}, model.Fail(op, KindLocked, "the vault was locked during the check: unlock it and run the check again")
	}
	want = nil
	t2 := time.Now()
	if rep.Claims, err = s.claimProblems(ctx, op, p, st); err != nil {
		return CheckReport{}, err
	}
	t3 := time.Now()
	rep.Receipts, err = s.VerifyReceipts(ctx, p)
	if err != nil {
		return CheckReport{}, err
	}
	s.eng.Log.Info("check done", "journal_ms", inJournal.Milliseconds(), "waited_ms", (t1.Sub(t0) - inJournal).Milliseconds(),
		"graph_ms", t2.Sub(t1).Milliseconds(), "claims_ms", t3.Sub(t2).Milliseconds(), "receipts_ms", time.Since(t3).Milliseconds())
	rep.OK = rep.Graph.OK && rep.Receipts.OK && len(rep.Summaries) == 0 && len(rep.Claims) == 0
	return rep, nil
}

// compareGraph compares the graph, held at rep.Revision, with want, the
// view's projection at that revision (sorted): both sorted, then walked
// side by side.
func (s *Service) compareGraph(ctx context.Context, rep *GraphReport, want []graph.Edge) {
	rep.Problems = []string{}
	problem := func(format string, args ...any) {
		if len(rep.Problems) < 20 {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
	}
	var got []graph.Edge
	if err := s.eng.Graph.Each(ctx, func(e graph.Edge) error {
		got = append(got, e)
		if len(got)%1024 == 0 {
			s.touch()        // a check at work is not idle
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
	w, err := s.eng.Graph.Watermark()
	if err != nil {
		problem("graph watermark: %v", err)
	}
	rep.Watermark = w
	if w > rep.Revision {
		problem("the graph's watermark %d is ahead of the store's revision %d", w, rep.Revision)
	}
	rep.OK = len(rep.Problems) == 0
}

// RebuildGraph rebuilds the graph from the store (owner only) and returns
// the revision it reflects.
func (s *Service) RebuildGraph(ctx context.Context, p Principal) (uint64, error) {
	const op = "graph.rebuild"
	if err := requireOwner(op, p); err != nil {
		return 0, err
	}
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return 0, err
	}
	defer doneGraph()
	var rev uint64
	err = s.write(op, p, func(st *state, b *batch) error {
		if err := requireOwner(op, p); err != nil {
			return err
		}
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		if err := s.eng.RebuildGraph(st.State); err != nil {
			// The graph may be half built: nothing may use it until the
			// next unlock rebuilds it (its watermark is 0).
			st.Broken = true
			go s.lockBroken(st.State)
			return model.Wrap(op, KindInternal, err)
		}
		rev = st.Revision
		b.Receipt(Receipt{Actor: "owner", Operation: "graph.rebuild", Decision: "allow", Revision: rev})
		return nil
	})
	return rev, err
}

// ExportGraph writes the graph as N-Quads (owner only).
func (s *Service) ExportGraph(ctx context.Context, p Principal, w io.Writer) error {
	const op = "graph.export"
	if err := requireOwner(op, p); err != nil {
		return err
	}
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return err
	}
	defer doneGraph()
	st, release, err := s.enter(op, p)
	if err != nil {
		return err
	}
	defer release()
	// Inside the journal: no write or rebuild moves the graph meanwhile, so
	// the edges and the watermark are one snapshot.
	return s.commit(st, func(st *state, b *batch) error {
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		if err := s.eng.Graph.WriteNQuads(ctx, w); err != nil {
			return model.Wrap(op, KindInternal, err)
		}
		return nil
	})
}

// useGraph waits until no other check, graph rebuild or graph export uses
// the graph (see Service.graphSem), or until ctx ends. Call it before
// entering the vault: a lock waits for those inside, and a check holding
// the graph needs to enter again.
func (s *Service) useGraph(ctx context.Context, op string) (done func(), err error) {
	var once sync.Once
	done = func() { once.Do(func() { <-s.graphSem }) }
	select {
	case s.graphSem <- struct{}{}:
		return done, nil
	default:
	}
	if s.test.graphWait != nil {
		s.test.graphWait(op)
	}
	select {
	case s.graphSem <- struct{}{}:
		return done, nil
	case <-ctx.Done():
		return nil, model.Wrap(op, KindInternal, ctx.Err())
	}
}

// graphTime is the form of times in graph exports.
func graphTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// defaultCheckChunk is how many claim metas claimProblems compares under
// one read lock of the view (testHooks.checkChunk: another).
const defaultCheckChunk = 1024

// checkPause runs the check's pause hook, if a test set one, with stage.
func (s *Service) checkPause(stage string) {
	if s.test.checkPause != nil {
		s.test.checkPause(stage)
	}
}

// claimProblems compares every claim meta of the store with the view's,
// a chunk of ids at a time and outside the journal, so that writes go on
// meanwhile: at 2,000,000 claims on a cold file, reading every meta took
// more than seven minutes, which in the journal held every write (and the
// daemon's stop) that long. Each chunk is read twice: first with no lock
// (the slow part: it brings the pages in from the disk and decodes), then
// again in a store transaction at a cut where the store and the view agree
// (see atCut), where it is compared. A claim is checked for a meta in the
// store if the view held it when the check began; one written since is
// compared when its meta is met.
func (s *Service) claimProblems(ctx context.Context, op string, p Principal, st *state) ([]string, error) {
	var ids []string
	st.ReadLocked(func() { ids = slices.Collect(maps.Keys(st.Claims)) })
	slices.Sort(ids)
	problems := []string{}
	from := ""
	for done := false; !done; {
		if err := ctx.Err(); err != nil {
			return nil, model.Wrap(op, KindInternal, err)
		}
		// The vault open for this chunk only, as it was when the check
		// began.
		now, release, err := s.enter(op, p)
		if err != nil {
			return nil, err
		}
		s.touch()
		if now != st {
			release()
			return nil, model.Fail(op, KindConflict, "the vault was locked and unlocked during the check: run it again")
		}
		if done, err = s.claimChunk(op, st, ids, &from, &problems); err != nil {
			release()
			return nil, err
		}
		release()
		for len(ids) > 0 && (done || ids[0] < from) {
			ids = ids[1:]
		}
	}
	slices.Sort(problems)
	return problems, nil
}

// claimChunk compares the chunk of claim metas that begins at *from (see
// claimProblems), moves *from past it, and reports whether it was the
// last. ids are the claims the view held when the check began, sorted,
// from *from on.
func (s *Service) claimChunk(op string, st *state, ids []string, from *string, problems *[]string) (done bool, err error) {
	// First read: the chunk's metas, decoded, with no lock held.
	type read struct {
		raw  []byte
		meta claimMeta
		err  error
		met  bool // met again at the cut
	}
	decode := func(raw []byte) *read {
		r := &read{raw: raw}
		r.err = fastjson.Unmarshal(raw, &r.meta)
		return r
	}
	pre := make(map[string]*read, s.test.checkChunk)
	err = s.eng.Store.View(func(tx Tx) error {
		return forEachFrom(tx, engine.BucketClaimMeta, *from, func(id string, raw []byte) error {
			if len(pre) == s.test.checkChunk {
				return errStopWalk
			}
			pre[id] = decode(raw)
			return nil
		})
	})
	if err != nil && err != errStopWalk {
		return false, model.Wrap(op, KindInternal, err)
	}
	s.checkPause("claims")
	// Second read, at a cut: compare.
	problem := func(id, what string) { *problems = append(*problems, "claim "+id+": "+what) }
	err = s.atCut(op, st, func(tx Tx) error {
		n, last := 0, ""
		err := forEachFrom(tx, engine.BucketClaimMeta, *from, func(id string, raw []byte) error {
			if n == s.test.checkChunk {
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
		done = n < s.test.checkChunk
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
func (s *Service) atCut(op string, st *state, fn func(tx Tx) error) error {
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
				s.checkPause("cut")
			default:
				if err = s.eng.Store.View(fn); err != nil {
					err = model.Wrap(op, KindInternal, err)
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
func normalMeta(m claimMeta) claimMeta {
	if len(m.Personas) == 0 {
		m.Personas = nil
	}
	if m.DisputedAt != nil {
		at := m.DisputedAt.UTC()
		m.DisputedAt = &at
	}
	return m
}
