package custodian

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/graph"
)

// Check verifies that the graph agrees with the store (every edge the
// store implies is in it, and nothing else), that no current summary has a
// parent that is not current, that the view holds every claim as its meta
// in the store says, and the receipt chain (owner only). Only the
// summaries and the projection of the view are taken in the journal. The
// graph is compared outside it, held where it was (see engine.HoldGraph), and so
// are the claims, whose metas it reads from the store (minutes at millions
// of claims on a cold file; see claimProblems): writes go on meanwhile.
func (s *Service) Check(ctx context.Context, p Principal) (CheckReport, error) {
	const op = "check"
	if err := p.RequireOwner(op); err != nil {
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
		held, letGo = s.eng.HoldGraph(ctx, st.view)
		return nil
	})
	release()
	if err != nil {
		return CheckReport{}, err
	}
	t1 := time.Now()
	s.eng.Hooks.Pause("graph")
	s.eng.CompareGraph(held, &rep.Graph, want, s.touch)
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

// RebuildGraph rebuilds the graph from the store (owner only) and returns
// the revision it reflects.
func (s *Service) RebuildGraph(ctx context.Context, p Principal) (uint64, error) {
	const op = "graph.rebuild"
	if err := p.RequireOwner(op); err != nil {
		return 0, err
	}
	doneGraph, err := s.useGraph(ctx, op)
	if err != nil {
		return 0, err
	}
	defer doneGraph()
	var rev uint64
	err = s.write(op, p, func(st *state, b *batch) error {
		if err := p.RequireOwner(op); err != nil {
			return err
		}
		if err := st.awaitGraph(op); err != nil {
			return err
		}
		if err := s.eng.RebuildGraph(st.view); err != nil {
			// The graph may be half built: nothing may use it until the
			// next unlock rebuilds it (its watermark is 0).
			st.Broken = true
			go s.lockBroken(st.view)
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
	if err := p.RequireOwner(op); err != nil {
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
		if done, err = s.eng.ClaimChunk(op, st.view, ids, &from, &problems); err != nil {
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
