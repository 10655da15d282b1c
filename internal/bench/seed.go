package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/internal/client"
)

// ReadSet is the number of claims the reader may read: work.f000 … work.f299.
const ReadSet = 300

// Seeding's shape: proposals go out seedWorkers at a time, in chunks of
// seedChunk, each chunk confirmed (confirmBatch per bulk request) before
// the next.
const (
	seedWorkers  = 16
	seedChunk    = 10_000
	confirmBatch = 1000
)

// Confirmation modes: one bulk request per batch, or one request per
// proposal when the daemon has no bulk route.
const (
	confirmBulk   = "bulk"
	confirmSingle = "one by one"
)

// session is the bench's hold on one vault: the owner's session, the
// reader's read token and the seeder's write token.
type session struct {
	api    *api
	owner  string
	reader string
	writer string
	// confirm is the confirmation mode, found at the first confirmation.
	confirm string
	// notes are remarks for the report (an API mismatch, say).
	notes []string
	// mints are the token requests of the consumers, by name, to mint
	// their tokens again.
	mints map[string]client.TokenRequest
}

// as is a client of the daemon that sends token (the owner's session, an
// app's token, or none), over the session's shared connections.
func (s *session) as(token string) *client.Client { return s.api.client(token) }

// Names of the bench's consumers.
const (
	readerName  = "reader"
	seederName  = "seeder"
	readPurpose = "assist"
)

// setup lifts the rate limits and quotas and registers the reader (a read grant on
// work.* for purpose assist, a read token of scope *) and the seeder (a
// contribute grant on bulk.*, a write token of that scope).
func (s *session) setup(ctx context.Context) error {
	if _, err := s.as(s.owner).PutSettings(ctx, client.SettingsPatch{"reads_per_minute": 10_000_000, "writes_per_minute": 10_000_000,
		"live_tokens_per_app": 10_000_000, "pending_proposals_per_app": 10_000_000}); err != nil {
		return err
	}
	expires := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	var err error
	if s.reader, err = s.consumer(ctx, readerName, readPurpose, "read", "work.*", "*", expires); err != nil {
		return err
	}
	s.writer, err = s.consumer(ctx, seederName, "seed", "contribute", "bulk.*", "bulk.*", expires)
	return err
}

// consumer registers a consumer with a random secret, grants it op on keys
// for purpose, and returns a token of scope (write mode for contribute).
func (s *session) consumer(ctx context.Context, name, purpose, op, keys, scope string, expires time.Time) (string, error) {
	secret := randomText(16)
	owner := s.as(s.owner)
	if _, err := owner.AddConsumer(ctx, custodian.ConsumerInput{Name: name, Secret: secret}); err != nil {
		return "", err
	}
	if _, err := owner.CreateGrant(ctx, custodian.GrantInput{
		Recipient: custodian.Recipient{Kind: "consumer", ID: name}, Purpose: purpose,
		Operations: []string{op}, Selectors: custodian.Selectors{Keys: []string{keys}},
		ExpiresAt: expires}); err != nil {
		return "", err
	}
	mode := "read"
	if op == "contribute" {
		mode = "write"
	}
	if s.mints == nil {
		s.mints = map[string]client.TokenRequest{}
	}
	// The token is bound to the grant's purpose: a read that names none is
	// decided under it (a token bound to none would get no grant's data).
	s.mints[name] = client.TokenRequest{Consumer: name, Secret: secret, Scope: scope, TTL: "720h", Mode: mode, Purpose: purpose}
	return s.mint(ctx, name)
}

// mint obtains a new token for consumer name.
func (s *session) mint(ctx context.Context, name string) (string, error) {
	tok, err := s.as("").MintToken(ctx, s.mints[name])
	if err != nil {
		return "", err
	}
	if tok.Token == "" {
		return "", fmt.Errorf("POST /context/tokens/service for %s: no token in the answer", name)
	}
	return tok.Token, nil
}

// randomText is n random bytes in hex.
func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// proposal is the body of POST /phc/v1/proposals.
type proposal = custodian.ProposalInput

var reported = map[string]string{"app": "phc-bench"}

// filler is the text values are cut from.
var filler = strings.Repeat("The owner prefers short written updates, reviews code in the morning, "+
	"keeps meetings under thirty minutes, works mostly in Go, and wants every decision recorded with its reason. ", 4)

// textValue is a JSON string of 100 to 400 bytes, different for each i.
func textValue(prefix string, i int) json.RawMessage {
	n := 100 + (i*131)%301
	text := fmt.Sprintf("%s %d: %s", prefix, i, filler)
	raw, _ := json.Marshal(text[:n])
	return raw
}

// seed makes n active claims: the ReadSet claims work.f000 … work.f299,
// proposed by the owner, and n−ReadSet claims bulk.k0000000 …, proposed
// by the seeder; every proposal is confirmed. It reports progress every
// tenth.
func (s *session) seed(ctx context.Context, n int, progress io.Writer) error {
	start := time.Now()
	var done atomic.Int64
	var mu sync.Mutex
	nextTenth := int64(1)
	report := func(k int) {
		d := done.Add(int64(k))
		mu.Lock()
		defer mu.Unlock()
		for nextTenth <= 10 && d*10 >= nextTenth*int64(n) {
			fmt.Fprintf(progress, "phc bench: %d claims: %3d%% seeded (%d) in %.1fs\n",
				n, nextTenth*10, d, time.Since(start).Seconds())
			nextTenth++
		}
	}
	// The read set, by the owner: its answers carry no "written by
	// another app" warnings.
	err := s.proposeAndConfirm(ctx, ReadSet, s.owner, func(i int) proposal {
		return proposal{Key: fmt.Sprintf("work.f%03d", i), Value: textValue("Work fact", i), Kind: "fact", Assertion: "reported", Reported: reported}
	}, report)
	if err != nil {
		return err
	}
	rest := n - ReadSet
	for base := 0; base < rest; base += seedChunk {
		k := min(seedChunk, rest-base)
		err := s.proposeAndConfirm(ctx, k, s.writer, func(i int) proposal {
			j := base + i
			return proposal{Key: fmt.Sprintf("bulk.k%07d", j), Value: textValue("Bulk note", j), Kind: "note", Assertion: "reported", Reported: reported}
		}, report)
		if err != nil {
			return err
		}
	}
	return nil
}

// proposeAndConfirm proposes n claims with token, concurrently, then
// confirms them; done is told of each confirmed batch.
func (s *session) proposeAndConfirm(ctx context.Context, n int, token string, draft func(i int) proposal, done func(k int)) error {
	ids := make([]string, n)
	app := s.as(token)
	err := parallel(ctx, n, seedWorkers, func(i int) error {
		p, err := app.Propose(ctx, draft(i))
		if err != nil {
			return err
		}
		if p.ProposalID == "" {
			return errors.New("POST /phc/v1/proposals: no proposal_id in the answer")
		}
		ids[i] = p.ProposalID
		return nil
	})
	if err != nil {
		return err
	}
	return s.confirmAll(ctx, ids, done)
}

// confirmAll confirms the proposals ids: in bulk (POST
// /phc/v1/review/confirm {"ids": […]}) when the daemon has that route,
// else one by one, seedWorkers at a time.
func (s *session) confirmAll(ctx context.Context, ids []string, done func(k int)) error {
	owner := s.as(s.owner)
	for len(ids) > 0 && s.confirm != confirmSingle {
		k := min(confirmBatch, len(ids))
		_, err := owner.ConfirmBulk(ctx, custodian.BulkConfirmInput{IDs: ids[:k], Personas: []string{}})
		if e, ok := errors.AsType[*client.Error](err); ok && s.confirm == "" &&
			(e.Status == 404 || e.Status == 405 || e.Status == 400) {
			s.confirm = confirmSingle
			s.notes = append(s.notes, fmt.Sprintf("no bulk confirmation (POST /phc/v1/review/confirm answered %d): proposals confirmed one by one", e.Status))
			break
		}
		if err != nil {
			return err
		}
		s.confirm = confirmBulk
		done(k)
		ids = ids[k:]
	}
	if len(ids) == 0 {
		return nil
	}
	return parallel(ctx, len(ids), seedWorkers, func(i int) error {
		if _, err := owner.Confirm(ctx, ids[i], custodian.ConfirmInput{Personas: []string{}}); err != nil {
			return err
		}
		done(1)
		return nil
	})
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns the
// first error; after an error no new i starts.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
		stop  atomic.Bool
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					once.Do(func() { first = err })
					stop.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// The traverse workload's graph: graphEntities people under self, as a
// tree of 10 children of self, 3 of each of those and 2 of each of
// theirs, every edge a confirmed relationship claim (rel.r000 …).
const graphEntities = 100

// parentOf is the index of entity i's parent in the tree (-1: self).
func parentOf(i int) int {
	switch {
	case i < 10:
		return -1
	case i < 40:
		return (i - 10) / 3
	default:
		return 10 + (i-40)/2
	}
}

// seedGraph makes the graph and checks that the owner's depth-3 traversal
// from self returns every edge.
func (s *session) seedGraph(ctx context.Context) (*GraphSetup, error) {
	ids := make([]string, graphEntities)
	owner := s.as(s.owner)
	err := parallel(ctx, graphEntities, seedWorkers, func(i int) error {
		out, err := owner.CreateEntity(ctx, custodian.EntityInput{
			Type: "person", Name: fmt.Sprintf("Person %03d", i), Key: fmt.Sprintf("people.p%03d.name", i)})
		if err == nil && out.Entity.ID == "" {
			err = errors.New("POST /phc/v1/entities: no entity id in the answer")
		}
		ids[i] = out.Entity.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	err = s.proposeAndConfirm(ctx, graphEntities, s.owner, func(i int) proposal {
		from := "self"
		if p := parentOf(i); p >= 0 {
			from = ids[p]
		}
		value, _ := json.Marshal(map[string]string{"from": from, "to": ids[i], "relation": "knows"})
		return proposal{Key: fmt.Sprintf("rel.r%03d", i), Value: value, Kind: "relationship", Assertion: "reported"}
	}, func(int) {})
	if err != nil {
		return nil, err
	}
	nb, err := owner.Neighbors(ctx, custodian.NeighborQuery{Node: "self", Depth: 3, Limit: 500})
	if err != nil {
		return nil, err
	}
	g := &GraphSetup{Entities: graphEntities, Relationships: graphEntities, Edges: len(nb.Edges)}
	if g.Edges != graphEntities || nb.NextCursor != "" {
		return g, fmt.Errorf("the owner's depth-3 traversal from self returned %d edges (next cursor %t); want all %d",
			g.Edges, nb.NextCursor != "", graphEntities)
	}
	return g, nil
}
