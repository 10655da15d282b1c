package custodian

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/phc-project/phc/custodian/internal/engine"
)

// state is the view as the rules see it: the engine's State, and what only
// the rules keep — the vault's card keys, the pinned custodians, the DEC
// verifier and its admission cache, the Client-Vault state.
type state struct {
	*State
	keys       *vaultKeys              // the vault's own card keys (nil until made)
	custodians map[string]*pinnedEntry // custodian_id → pin
	dec        DECVerifier             // the Service's, for admission on reads
	admMu      sync.Mutex              // guards admCache (readers share mu)
	admCache   map[admissionKey]admission
	// cv is the Client-Vault state: vault key bindings, each reader's
	// value references, the day's resolved values (clientvault.go).
	cv *clientVault
}

func newState() *state {
	return &state{
		State:      engine.NewView(),
		custodians: make(map[string]*pinnedEntry),
		admCache:   make(map[admissionKey]admission),
		cv:         newClientVault(),
	}
}

// ownerRead runs an owner-only read: fn runs on the current view, and its
// result is returned once what it saw is durable.
func ownerRead[T any](s *Service, op string, p Principal, fn func(st *state) (T, error)) (T, error) {
	var zero T
	if err := requireOwner(op, p); err != nil {
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
// what fn saw is durable (see awaitDurable). An error from fn is returned at
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

// loadState reads the whole canonical store (receipts aside) into memory.
func loadState(store Store, cacheBytes int64, ignoreSnapshot bool) (*state, error) {
	st := newState()
	st.IgnoreSnapshot = ignoreSnapshot
	st.Cache = engine.NewClaimCache(store, cacheBytes)
	err := engine.WithoutGC(func() error {
		return store.View(func(tx Tx) error {
			if _, err := engine.LoadMetaJSON(tx, engine.MetaRevision, &st.Revision); err != nil {
				return err
			}
			var err error
			if st.Settings, err = engine.LoadSettings(tx); err != nil {
				return err
			}
			if _, err := engine.LoadMetaJSON(tx, engine.MetaReceiptFloor, &st.ReceiptFloor); err != nil {
				return err
			}
			if _, err := engine.LoadMetaJSON(tx, engine.MetaHead, &st.Head); err != nil {
				return err
			}
			if err := st.LoadClaims(tx); err != nil {
				return err
			}
			if err := st.LoadPending(tx); err != nil {
				return err
			}
			if err := tx.ForEach(engine.BucketPersonas, func(k string, v []byte) error {
				p := &Persona{}
				if err := json.Unmarshal(v, p); err != nil {
					return fmt.Errorf("persona %s: %w", k, err)
				}
				p.Node = k
				st.Personas[p.ID] = p
				return nil
			}); err != nil {
				return err
			}
			if err := engine.LoadEach(tx, bucketSummaries, func(s *Summary) { st.Summaries[s.ID] = s }); err != nil {
				return err
			}
			// Invalidations, in the order they were made.
			if err := engine.LoadEach(tx, engine.BucketInvalidations, func(inv *engine.Invalidation) { inv.Apply(st.State) }); err != nil {
				return err
			}
			if err := engine.LoadEach(tx, bucketEntities, func(e *Entity) { st.Entities[e.ID] = e }); err != nil {
				return err
			}
			st.ProjectionAt = 1 // a store from before the record
			if _, err := engine.LoadMetaJSON(tx, engine.MetaGraphProjection, &st.ProjectionAt); err != nil {
				return err
			}
			var floor uint64
			if ok, err := engine.LoadMetaJSON(tx, engine.MetaGraphFloor, &floor); err != nil {
				return err
			} else if ok {
				st.Lag.SetFloor(floor)
			}
			return st.loadAccess(tx)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return st, nil
}

// loadAccess reads who may do what (grants, consumers, tokens, trusted
// issuers and DEC keys and policies), the requests and quarantine, and the
// Client-Vault state into st.
func (st *state) loadAccess(tx Tx) error {
	if err := engine.LoadEach(tx, engine.BucketGrants, func(g *Grant) { st.Grants[g.ID] = g; st.IndexGrant(g) }); err != nil {
		return err
	}
	if err := engine.LoadEach(tx, engine.BucketConsumers, func(c *Consumer) { st.Consumers[c.Name] = c }); err != nil {
		return err
	}
	if err := st.loadAppIndex(tx); err != nil {
		return err
	}
	if err := engine.LoadEach(tx, bucketRequests, func(r *ContextRequest) { st.Requests[r.ID] = r }); err != nil {
		return err
	}
	if err := engine.LoadEach(tx, bucketTrust, func(t *TrustedIssuer) { st.Trust[t.ID] = t }); err != nil {
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
	if err := engine.LoadEach(tx, bucketQuarantine, func(q *QuarantineRecord) { st.Quarantine[q.ID] = q }); err != nil {
		return err
	}
	if err := tx.ForEach(bucketBundlesSeen, func(k string, _ []byte) error {
		st.BundlesSeen[k] = true
		return nil
	}); err != nil {
		return err
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
	if err := engine.LoadEach(tx, bucketDECTrust, func(d *DECIssuer) { st.DecTrust[d.Issuer] = d }); err != nil {
		return err
	}
	if err := engine.LoadEach(tx, bucketDECPolicies, func(d *DECPolicy) { st.DecPolicies[d.ID] = d }); err != nil {
		return err
	}
	if err := st.loadClientVault(tx); err != nil {
		return err
	}
	if err := engine.LoadEach(tx, bucketDECPresentations, func(pr *Presentation) { st.Presentations[pr.Token] = pr }); err != nil {
		return err
	}
	return engine.LoadEach(tx, engine.BucketTokens, func(t *ServiceToken) {
		var h [32]byte
		copy(h[:], t.Hash)
		st.Tokens[h] = t
		st.TokenByID[t.ID] = t
	})
}
