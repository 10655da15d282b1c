package custodian

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/phc-project/phc/custodian/internal/admission"
	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/localvault"
)

// state is the view as the rules see it: the engine's State, and what only
// the rules keep — the vault's card keys, the pinned custodians, the DEC
// verifier and its admission cache, the Client-Vault state.
type state struct {
	*view
	keys       *vaultKeys              // the vault's own card keys (nil until made)
	custodians map[string]*pinnedEntry // custodian_id → pin
	adm        *admission.Cache        // the DEC verifier and its admission answers, for reads
	// cv is the Client-Vault state: vault key bindings, each reader's
	// value references, the day's resolved values (package localvault).
	cv *localvault.State
}

func newState() *state {
	return &state{
		view:       engine.NewView(),
		custodians: make(map[string]*pinnedEntry),
		adm:        admission.NewCache(nil),
		cv:         localvault.New(),
	}
}

// ownerRead runs an owner-only read: fn runs on the current view, and its
// result is returned once what it saw is durable.
func ownerRead[T any](s *Service, op string, p Principal, fn func(st *state) (T, error)) (T, error) {
	var zero T
	if err := p.RequireOwner(op); err != nil {
		return zero, err
	}
	st, release, err := s.enter(op, p)
	if err != nil {
		return zero, err
	}
	defer release()
	return readSettled(op, st, func() (T, error) { return fn(st) })
}

// readSettled runs fn under st's read lock and returns its result once
// what fn saw is durable (see AwaitDurable). An error from fn is returned at
// once: it discloses nothing.
func readSettled[T any](op string, st *state, fn func() (T, error)) (T, error) {
	var g uint64
	var v T
	var err error
	if uerr := st.ReadLocked(func() {
		g = st.Applied
		v, err = fn()
	}); uerr != nil {
		var zero T
		return zero, uerr
	}
	if err != nil {
		return v, err
	}
	if err := st.AwaitDurable(op, g); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// loadState reads the whole canonical store (receipts aside) into memory:
// the engine's view, then what the rules keep beside it; hold, if not nil,
// runs the load (see Config.LoadGC).
func loadState(store Store, cacheBytes int64, ignoreSnapshot bool, hold func(func() error) error) (*state, error) {
	st := newState()
	st.IgnoreSnapshot = ignoreSnapshot
	loads := 0
	load := func() error {
		if loads++; loads > 1 {
			return errors.New("the load ran twice")
		}
		return engine.Load(st.view, store, cacheBytes, st.loadRules)
	}
	if hold == nil {
		hold = func(fn func() error) error { return fn() }
	}
	err := hold(load)
	if err == nil && loads != 1 {
		// A view never loaded would be committed over the store's.
		err = errors.New("Config.LoadGC returned without running the load")
	}
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return st, nil
}

// loadRules reads what the rules keep beside the view: the app index of
// proposals, the vault's card keys, the pinned custodians and the
// Client-Vault state.
func (st *state) loadRules(tx Tx) error {
	if err := st.loadAppIndex(tx); err != nil {
		return err
	}
	if raw, ok, err := tx.Get(bucketKeys, keysSelf); err != nil {
		return err
	} else if ok {
		st.keys = &vaultKeys{}
		if err := json.Unmarshal(raw, st.keys); err != nil {
			return fmt.Errorf("custodian keys: %w", err)
		}
	}
	if err := tx.ForEach(bucketCustodians, func(k string, v []byte) error {
		pc := &pinnedEntry{key: k}
		if err := json.Unmarshal(v, &pc.PinnedCustodian); err != nil {
			return fmt.Errorf("custodian %s: %w", k, err)
		}
		st.custodians[pc.CustodianID] = pc
		return nil
	}); err != nil {
		return err
	}
	return st.cv.Load(tx)
}
